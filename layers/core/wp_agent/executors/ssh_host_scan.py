"""The host key an SSH server presents, fetched once so a person can compare its fingerprint with
the server's own before it is pinned (`wp-agent sites add`). No login happens here."""

from __future__ import annotations

import socket

import paramiko

from wp_agent.executors.ssh_errors import connect_failure

# One family per fetch: a fingerprint the person reads off the server may be of any of them.
KEY_FAMILIES: tuple[tuple[str, ...], ...] = (
    ("ssh-ed25519",),
    ("ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521"),
    ("rsa-sha2-512", "rsa-sha2-256"),
)


def fetch_host_key(
    host: str, port: int, timeout_seconds: float, key_types: tuple[str, ...] = ()
) -> paramiko.PKey:
    """The server's host key (of one of `key_types` when given; the server may have none of them:
    then a WpAgentError like any failed connection)."""
    try:
        sock = socket.create_connection((host, port), timeout=timeout_seconds)
    except OSError as exc:
        raise connect_failure(host, port, exc, attempts=1, timeout_seconds=timeout_seconds) from None
    transport = paramiko.Transport(sock)
    try:
        if key_types:
            transport.get_security_options().key_types = key_types
        transport.start_client(timeout=timeout_seconds)
        return transport.get_remote_server_key()
    except (paramiko.SSHException, EOFError, OSError) as exc:
        raise connect_failure(host, port, exc, attempts=1, timeout_seconds=timeout_seconds) from None
    finally:
        transport.close()
