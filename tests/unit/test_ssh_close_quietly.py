"""A command whose connection dropped under it fails with the connection's error (SSH_CONNECTION_FAILED,
which the callers know), not with the EOFError paramiko raises when the channel's close is sent on the dead
transport — and the connection's channel count is given back either way."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest

from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.ssh import SshWpCli


class DeadChannel:
    def exec_command(self, command: str) -> None:
        raise EOFError

    def close(self) -> None:
        raise EOFError


class Connection:
    def __init__(self) -> None:
        self.channel_slots = threading.BoundedSemaphore(5)
        self.active = 0

    def channel_started(self) -> None:
        self.active += 1

    def channel_finished(self) -> None:
        self.active -= 1


def test_a_dropped_connection_is_told_as_such_and_its_channel_given_back() -> None:
    executor: Any = SimpleNamespace(
        _open_channel=lambda connection, failures_seen: DeadChannel(),
        _local_grace=1.0,
        _output_limit=1_000,
        _host="vps.example",
    )
    connection = Connection()
    with pytest.raises(WpAgentError) as failed:
        SshWpCli._run_remote(executor, connection, "wp post list", "post list", 5.0, 0)  # type: ignore[arg-type]
    assert failed.value.code is AgentErrorCode.SSH_CONNECTION_FAILED
    assert connection.active == 0
