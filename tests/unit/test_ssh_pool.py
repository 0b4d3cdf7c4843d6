"""PooledConnection's bookkeeping for callers queued behind a connect (no network: fake clients)."""

from __future__ import annotations

from typing import Any

import pytest

from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.ssh import PooledConnection, PoolKey


class FakeTransport:
    def __init__(self) -> None:
        self.active = True

    def is_active(self) -> bool:
        return self.active


class FakeClient:
    def __init__(self) -> None:
        self.transport = FakeTransport()

    def get_transport(self) -> FakeTransport:
        return self.transport

    def close(self) -> None:
        self.transport.active = False


def reachable() -> Any:
    return FakeClient()  # stands in for a connected paramiko.SSHClient


def unreachable() -> Any:
    raise WpAgentError(AgentErrorCode.SSH_CONNECTION_FAILED, "接続できませんでした", details={"attempts": 4})


def connection() -> PooledConnection:
    return PooledConnection(PoolKey("203.0.113.5", 22, "wp", ("SHA256:host",), "SHA256:client"), 5)


def test_a_caller_queued_behind_a_failed_connect_gets_a_copy_of_its_error() -> None:
    pool = connection()
    queued = pool.failed_connects
    with pytest.raises(WpAgentError) as first:
        pool.transport(unreachable, failures_seen=pool.failed_connects)
    with pytest.raises(WpAgentError) as shared:
        pool.transport(reachable, failures_seen=queued)  # would have connected: not tried
    assert shared.value is not first.value
    assert (shared.value.code, shared.value.message_ja, shared.value.details) == (
        first.value.code,
        first.value.message_ja,
        first.value.details,
    )


def test_a_later_successful_connect_clears_the_shared_failure() -> None:
    pool = connection()
    queued = pool.failed_connects
    with pytest.raises(WpAgentError):
        pool.transport(unreachable, failures_seen=pool.failed_connects)
    transport = pool.transport(reachable, failures_seen=pool.failed_connects)  # arrived later: connects
    pool.discard(transport)  # then the connection dropped
    assert pool.transport(reachable, failures_seen=queued).is_active()  # tries itself, no stale error
