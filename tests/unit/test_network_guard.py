"""The suite's own rule (tests/conftest.py): connections reach loopback only, names resolve only for
localhost, so no test depends on the network it runs on."""

from __future__ import annotations

import socket
import threading

import pytest


def test_a_documentation_address_is_refused_at_once() -> None:
    with pytest.raises(OSError, match="loopback"):
        socket.create_connection(("203.0.113.5", 22), timeout=30)


def test_a_name_other_than_localhost_does_not_resolve() -> None:
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("media.example.com", 443)


def test_loopback_still_connects() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(server.accept()[0]))
    thread.start()
    with socket.create_connection(("localhost", server.getsockname()[1]), timeout=5):
        thread.join(5)
    assert len(accepted) == 1
    accepted[0].close()
    server.close()
