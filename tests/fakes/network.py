"""Loopback addresses for tests that need something there to fail (tests touch no other network)."""

from __future__ import annotations

import socket


def closed_loopback_port() -> int:
    """A 127.0.0.1 port nothing listens on (bound, then released): connecting is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
