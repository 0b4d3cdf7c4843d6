"""A connection that did not come up, said once in Japanese with its fix (executors/ssh_errors.py):
each way socket and paramiko fail maps to its own reason; `cause` stays `unreachable`."""

from __future__ import annotations

import errno
import socket

import paramiko
import pytest

from wp_agent.executors.ssh_errors import (
    attempts_worth_making,
    cannot_recover,
    connect_failure,
    connect_reason,
)


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), "refused"),
        (
            paramiko.ssh_exception.NoValidConnectionsError({("127.0.0.1", 2): ConnectionRefusedError()}),
            "refused",
        ),
        (TimeoutError("timed out"), "timeout"),
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "dns"),
        (OSError(errno.EHOSTUNREACH, "No route to host"), "network"),
        (paramiko.SSHException("Error reading SSH protocol banner"), "not_ssh"),
        (EOFError(), "dropped"),
        (paramiko.SSHException("No existing session"), "dropped"),
        (None, "other"),
    ],
)
def test_each_failure_has_its_reason(error: BaseException | None, reason: str) -> None:
    assert connect_reason(error) == reason


def test_the_message_names_the_place_the_attempts_and_the_fix() -> None:
    failure = connect_failure(
        "wp.example.test", 2222, ConnectionRefusedError(), attempts=4, timeout_seconds=30
    )
    assert failure.message_ja == (
        "wp.example.test:2222 への接続が拒否されました（4回試行）。そのポートでSSHサーバーが動いていません。"
        "ポート番号と、サーバーでSSHが動いているかを確認してください。"
    )
    assert failure.details == {
        "cause": "unreachable",
        "reason": "refused",
        "attempts": 4,
        "errorType": "ConnectionRefusedError",
    }
    silent = connect_failure("wp.example.test", 22, TimeoutError(), attempts=1, timeout_seconds=0.5)
    assert silent.message_ja.startswith("wp.example.test:22 から0.5秒以内に応答がありません。")


@pytest.mark.parametrize(
    ("error", "final"),
    [
        (paramiko.SSHException("Indecipherable protocol version line"), True),  # another protocol
        (paramiko.SSHException("Incompatible version (1.5 instead of 2.0)"), True),
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), True),  # no such host
        (
            paramiko.ssh_exception.NoValidConnectionsError(
                {("::1", 22): socket.gaierror(socket.EAI_NONAME, "Name or service not known")}
            ),
            True,
        ),
        (paramiko.SSHException("Error reading SSH protocol banner"), False),  # silent, or MaxStartups
        (socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"), False),
        (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), False),  # an sshd that is restarting
        (TimeoutError("timed out"), False),
        (EOFError(), False),
        (OSError(errno.EHOSTUNREACH, "No route to host"), False),
    ],
)
def test_only_failures_a_retry_could_change_are_retried(error: BaseException, final: bool) -> None:
    assert cannot_recover(error) is final


@pytest.mark.parametrize(
    ("error", "attempts"),
    [
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), 1),
        (paramiko.SSHException("Incompatible version (1.5 instead of 2.0)"), 1),
        (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), 2),  # restarting: back within the pause
        (TimeoutError("timed out"), 2),
        (OSError(errno.EHOSTUNREACH, "No route to host"), 2),
        (paramiko.SSHException("Error reading SSH protocol banner"), 4),  # an sshd at its MaxStartups
        (EOFError(), 4),
        (socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"), 4),
    ],
)
def test_a_failure_gets_the_attempts_it_is_worth(error: BaseException, attempts: int) -> None:
    assert attempts_worth_making(error, 4) == attempts
    assert attempts_worth_making(error, 1) == 1
