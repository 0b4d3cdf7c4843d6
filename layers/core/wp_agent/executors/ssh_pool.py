"""The process-wide pool of authenticated SSH connections (one per host, port, user, pinned host
keys and client key), reused by the commands of one invocation and by later warm invocations;
each connection bounds its concurrent channels. Connecting itself is the executor's (ssh.py)."""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

import paramiko

from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.php_launch import PhpLaunch
from wp_agent.executors.ssh_keys import describe_key

logger = logging.getLogger(__name__)


class HostKeyRejectedError(paramiko.SSHException):
    """The server presented a host key that is not pinned for it (unknown or changed)."""

    def __init__(self, hostname: str, presented: paramiko.PKey) -> None:
        super().__init__(f"host key for {hostname} is not pinned: {describe_key(presented)}")
        self.presented = presented


def host_key_error(
    host: str, port: int, expected: tuple[str, ...], presented: paramiko.PKey, kind: str
) -> WpAgentError:
    """The refusal of a host key that is not pinned (`kind`: "changed" or "unknown"), both fingerprints shown."""
    shown = describe_key(presented)
    logger.error(
        "ssh host key rejected",
        extra={"host": host, "port": port, "expected": list(expected), "presented": shown, "kind": kind},
    )
    if expected:
        message = (
            f"{host}:{port} のSSHホスト鍵が登録済みの鍵と一致しないため接続を拒否しました"
            f"（なりすましの可能性があります）。期待した鍵: {'、'.join(expected)} ／ サーバーが提示した鍵: {shown}。"
            "サーバーのホスト鍵を正当に変更した場合は、シークレットの hostKey または VPS_SSH_HOST_KEY を更新してください。"
        )
    else:
        message = (
            f"{host}:{port} のSSHホスト鍵が登録されていないため接続を拒否しました。"
            f"サーバーが提示した鍵: {shown}。正しい鍵であることを確認してから、シークレットの hostKey または "
            "VPS_SSH_HOST_KEY に登録してください。"
        )
    return WpAgentError(
        AgentErrorCode.SSH_CONNECTION_FAILED,
        message,
        details={"cause": "host_key_mismatch", "kind": kind, "expected": list(expected), "presented": shown},
    )


class PinnedOnlyPolicy(paramiko.RejectPolicy):
    """RejectPolicy that keeps the presented key so the error can show its fingerprint."""

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> NoReturn:
        raise HostKeyRejectedError(hostname, key)


@dataclass(frozen=True)
class PoolKey:
    host: str
    port: int
    user: str
    host_keys: tuple[str, ...]
    client_key: str

    @property
    def endpoint(self) -> tuple[str, int, str]:
        return (self.host, self.port, self.user)


class PooledConnection:
    """One SSH connection shared by every SshWpCli with the same PoolKey; reconnects when it dropped."""

    def __init__(self, key: PoolKey, max_channels: int) -> None:
        self.key = key
        self.channel_slots = threading.BoundedSemaphore(max_channels)
        self.connects = 0
        self._lock = threading.Lock()
        self._client: paramiko.SSHClient | None = None
        self._last_used = 0.0
        self._active_channels = 0
        self._retired = False
        self._failed_connects = 0
        self._last_connect_error: WpAgentError | None = None
        # How PHP starts WP-CLI, probed once per connection: by WP_CLI_BIN, (`connects` then, launch).
        self.launch_lock = threading.Lock()
        self.launches: dict[str, tuple[int, PhpLaunch]] = {}

    @property
    def failed_connects(self) -> int:
        return self._failed_connects

    def launch_for(self, wp_cli_bin: str) -> PhpLaunch | None:
        """The launch probed on this connection (None: not yet, or it reconnected since); under launch_lock."""
        known = self.launches.get(wp_cli_bin)
        return known[1] if known is not None and known[0] == self.connects else None

    def remember_launch(self, wp_cli_bin: str, launch: PhpLaunch) -> None:
        """Under launch_lock."""
        self.launches[wp_cli_bin] = (self.connects, launch)

    def transport(
        self, connect: Callable[[], paramiko.SSHClient], *, failures_seen: int | None = None
    ) -> paramiko.Transport:
        """The live transport, connecting (with the caller's retry policy) when there is none.
        A caller that queued (since it saw `failures_seen`) behind a connect that failed gets its
        error at once: five commands to an unreachable host fail after one round of retries, not
        after five rounds in a row."""
        with self._lock:
            failed = self._last_connect_error  # of the latest connect: a success clears it
            queued_behind_it = failures_seen is not None and self._failed_connects != failures_seen
            if failed is not None and queued_behind_it and self._client is None:
                # A copy: the same exception object raised in several threads mixes their tracebacks.
                raise WpAgentError(failed.code, failed.message_ja, details=dict(failed.details))
            if self._client is not None:
                transport = self._client.get_transport()
                if transport is not None and transport.is_active():
                    return transport
                logger.info("ssh connection is no longer active; reconnecting", extra=self._log_fields())
                self._client.close()
                self._client = None
            try:
                client = connect()
            except WpAgentError as exc:
                self._failed_connects += 1
                self._last_connect_error = exc
                raise
            self._client = client
            self._last_connect_error = None
            self.connects += 1
            transport = client.get_transport()
            if transport is None:  # pragma: no cover - connect() returned, so a transport exists
                raise WpAgentError(AgentErrorCode.SSH_CONNECTION_FAILED)
            return transport

    def discard(self, transport: paramiko.Transport) -> None:
        """Drop the connection if it is still the one given (it failed in use)."""
        with self._lock:
            if self._client is not None and self._client.get_transport() is transport:
                self._client.close()
                self._client = None

    def idle_seconds(self) -> float:
        with self._lock:
            return time.monotonic() - self._last_used if self._last_used else 0.0

    def channel_started(self) -> None:
        with self._lock:
            self._active_channels += 1

    def channel_finished(self) -> None:
        with self._lock:
            self._active_channels -= 1
            self._last_used = time.monotonic()
            close_now = self._retired and self._active_channels == 0
        if close_now:
            self.close()

    def retire(self) -> None:
        """Close once the channels in flight are done (the pinned keys or client key changed)."""
        with self._lock:
            self._retired = True
            close_now = self._active_channels == 0
        if close_now:
            self.close()

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def _log_fields(self) -> dict[str, object]:
        return {"host": self.key.host, "port": self.key.port, "user": self.key.user}


class SshConnectionPool:
    """Connections by PoolKey; a new key for the same host/port/user retires the old connection."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connections: dict[PoolKey, PooledConnection] = {}

    def get(self, key: PoolKey, max_channels: int) -> PooledConnection:
        stale: list[PooledConnection] = []
        with self._lock:
            connection = self._connections.get(key)
            if connection is None:
                for other in [k for k in self._connections if k.endpoint == key.endpoint]:
                    stale.append(self._connections.pop(other))
                connection = PooledConnection(key, max_channels)
                self._connections[key] = connection
        for old in stale:
            old.retire()
        return connection

    def close_all(self) -> None:
        with self._lock:
            connections = list(self._connections.values())
            self._connections.clear()
        for connection in connections:
            connection.close()


DEFAULT_POOL = SshConnectionPool()


def close_pooled_connections() -> None:
    """Close every pooled SSH connection (tests, or a process about to exit)."""
    DEFAULT_POOL.close_all()


atexit.register(DEFAULT_POOL.close_all)
