"""Ending a command that runs over SSH, as Ctrl-C does (`running.end_running_commands`), on the real sshd
rig: the command's processes on the server are gone within 2 s and it reports as killed. Where sshd
refuses to signal the session (an authorized_keys `command=`), the end is reported as unconfirmed, and
the run stops waiting for the command instead of hanging until its time limit."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fakes.sshd import SshdRig, generate_ed25519_key
from tests.fakes.wordpress import TestWordPress
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors import running
from wp_agent.executors.port import CommandResult
from wp_agent.executors.ssh import SshConnectionPool, SshWpCli

SLOW = ["post", "list", "--format=count"]


@pytest.fixture
def fresh_interrupts(monkeypatch: pytest.MonkeyPatch) -> None:
    """An interrupt is once per process in the CLI; here it is undone after the test."""
    monkeypatch.setattr(running, "_stopping", False)


@pytest.fixture
def pool() -> Iterator[SshConnectionPool]:
    own = SshConnectionPool()
    yield own
    own.close_all()


class Background:
    """`wp.run(argv)` in a thread: its result or error, and when it returned."""

    def __init__(self, wp: SshWpCli, argv: list[str]) -> None:
        self.result: CommandResult | None = None
        self.error: WpAgentError | None = None
        self.returned_at = 0.0
        self._thread = threading.Thread(target=self._run, args=(wp, argv), daemon=True)
        self._thread.start()

    def _run(self, wp: SshWpCli, argv: list[str]) -> None:
        try:
            self.result = wp.run(argv)
        except WpAgentError as exc:
            self.error = exc
        self.returned_at = time.monotonic()

    def join(self, seconds: float) -> None:
        self._thread.join(seconds)
        assert not self._thread.is_alive(), f"the command still runs {seconds:g} s later"


def wait_for(condition: Callable[[], object], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_an_interrupt_kills_the_command_on_the_server(
    sshd_server: SshdRig, rig_site: TestWordPress, pool: SshConnectionPool, fresh_interrupts: None
) -> None:
    sshd_server.set_fault("post list", delay_ms=60_000)
    wp = SshWpCli(sshd_server.settings(wp_agent_opcache=False), pool=pool)
    running_command = Background(wp, SLOW)
    assert wait_for(lambda: sshd_server.faulted_pids("post", "list"), 30), (
        "the slow command never started on the server"
    )
    assert wait_for(lambda: running._running, 10)  # and its channel is read here

    interrupted = time.monotonic()
    ended = running.end_running_commands()
    assert wait_for(lambda: not sshd_server.faulted_pids("post", "list"), 2.0), sshd_server.log_tail(20)
    gone_after = time.monotonic() - interrupted

    running_command.join(5)
    assert ended.ended == 1
    assert ended.unconfirmed == ()
    assert running_command.error is None
    assert running_command.result is not None
    assert running_command.result.exit_code == running.KILLED_EXIT_CODE
    assert gone_after < 2.0


def test_a_server_that_refuses_the_signal_is_reported_and_not_waited_for(
    sshd_server: SshdRig,
    rig_site: TestWordPress,
    pool: SshConnectionPool,
    fresh_interrupts: None,
    tmp_path: Path,
) -> None:
    key_path = tmp_path / "forced_ed25519"
    _, public_line = generate_ed25519_key(key_path)
    sshd_server.authorize_key(public_line, forced_command=True)
    sshd_server.set_fault("post list", delay_ms=60_000)
    wp = SshWpCli(sshd_server.settings(wp_agent_opcache=False, vps_ssh_key_path=key_path), pool=pool)
    running_command = Background(wp, SLOW)
    assert wait_for(lambda: sshd_server.faulted_pids("post", "list"), 30), (
        "the slow command never started on the server"
    )
    assert wait_for(lambda: running._running, 10)  # and its channel is read here

    interrupted = time.monotonic()
    ended = running.end_running_commands(confirm_seconds=1.0)
    running_command.join(5)

    assert ended.unconfirmed == ("post list",)  # the command label (no values: they may be secret)
    assert running_command.error is not None
    assert running_command.error.code is AgentErrorCode.CANCELLED
    assert "確認できませんでした" in running_command.error.message_ja
    assert running_command.returned_at - interrupted < 3.0  # not the command's 60 s
    assert "refusing to send signal" in sshd_server.log_tail(50)
    left = sshd_server.faulted_pids("post", "list")
    assert left, "reported unconfirmed, yet the command had ended"
    for pid in left:  # ended here, so nothing outlives the test
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
