"""Ctrl-C during `wp-agent ask`: the running WP-CLI commands are ended, the run is recorded as
cancelled (audited), one Japanese line is printed, and the exit code is 130 (128 + SIGINT)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

from wp_agent.cli import terminal
from wp_agent.executors.running import EndedCommands, end_running_commands

INTERRUPTED_MESSAGE = (
    "中断しました（Ctrl-C）。実行中のコマンドを終了し、この実行を「中止」として記録しました。"
)
UNCONFIRMED_MESSAGE = (
    "ただし、サーバー上の次のコマンドは終了を確認できませんでした（SSHサーバーがシグナルを受け付けない設定、"
    "例えば authorized_keys の command= の場合）。遅くとも制限時間で終了します: {commands}"
)

_ended = EndedCommands(ended=0, unconfirmed=())


def _on_interrupt(signum: int, frame: FrameType | None) -> None:
    global _ended  # noqa: PLW0603 - one interrupt per process: the CLI exits right after
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C does not cut the clean-up short
    _ended = end_running_commands()
    raise KeyboardInterrupt


def interrupted_message() -> str:
    """What the interrupt did, in Japanese (naming any command whose end was not confirmed)."""
    if not _ended.unconfirmed:
        return INTERRUPTED_MESSAGE
    commands = "、".join(f"wp {label}" for label in _ended.unconfirmed)
    return f"{INTERRUPTED_MESSAGE}{UNCONFIRMED_MESSAGE.format(commands=commands)}"


def let_ctrl_c_through() -> None:
    """Unblock SIGINT in this thread (the CLI's main thread). A signal mask survives fork and exec: a
    parent that had SIGINT blocked (a supervisor; Python's multiprocessing blocks it around the processes
    it spawns) would leave Ctrl-C pending until the end — a y/N prompt waiting forever, a command running
    to its end."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextlib.contextmanager
def ending_commands_on_interrupt() -> Iterator[None]:
    """Within the block, Ctrl-C ends the running commands, then raises KeyboardInterrupt; SIGINT stays
    ignored after an interrupt (the caller records the cancellation undisturbed, then exits)."""
    previous = signal.signal(signal.SIGINT, _on_interrupt)
    interrupted = False
    try:
        yield
    except KeyboardInterrupt:
        interrupted = True
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise
    finally:
        if not interrupted:
            signal.signal(signal.SIGINT, previous)


def say_interrupted() -> None:
    terminal.err.line(f"\n{interrupted_message()}", flush=True)
