"""The WP-CLI commands running for this process, so an interrupt (Ctrl-C) can end them.

Local and sandbox commands run in their own session (a terminal's Ctrl-C does not reach them), and
a command over SSH runs on another machine, so the CLI ends them itself: a local command's whole
process group is killed; a remote one is sent SIGKILL over its SSH channel (the server kills the
session's process group). The command then finishes as killed (its record says so) instead of
running on after the person asked to stop. An end that cannot be confirmed (a server that refuses
signals, e.g. for a forced command) is reported, never assumed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

# How long an interrupt waits for the ended commands to confirm they are gone.
CONFIRM_SECONDS = 2.0
# The exit code a command ended this way reports (128 + SIGKILL, as a shell shows it).
KILLED_EXIT_CODE = 128 + signal.SIGKILL


class RunningCommand(Protocol):
    label: str

    def end(self) -> None:
        """Ask the command to end now; returns at once."""

    def ended(self, seconds: float) -> bool:
        """Whether it is known to have ended, waiting at most `seconds`."""


@dataclass(frozen=True)
class EndedCommands:
    ended: int
    unconfirmed: tuple[str, ...]  # labels of commands whose end was asked for but not seen


_lock = threading.Lock()
_running: set[RunningCommand] = set()
_stopping = False


@contextlib.contextmanager
def tracked(command: RunningCommand) -> Iterator[None]:
    """While the block runs, an interrupt ends `command` (at once if one already came)."""
    with _lock:
        _running.add(command)
        stopping = _stopping
    if stopping:  # started by a worker thread just after the interrupt: ended as well
        command.end()
        command.ended(CONFIRM_SECONDS)  # (a remote one not confirmed is let go, as end_running_commands does)
    try:
        yield
    finally:
        with _lock:
            _running.discard(command)


def end_running_commands(confirm_seconds: float = CONFIRM_SECONDS) -> EndedCommands:
    """End every command still running (and any started from now on); waits up to `confirm_seconds`
    in all for them to be gone."""
    global _stopping  # noqa: PLW0603 - one interrupt per process: the CLI exits right after
    with _lock:
        _stopping = True
        commands = list(_running)
    for command in commands:
        command.end()
    deadline = time.monotonic() + confirm_seconds
    unconfirmed = tuple(
        command.label for command in commands if not command.ended(max(0.0, deadline - time.monotonic()))
    )
    return EndedCommands(ended=len(commands), unconfirmed=unconfirmed)


class LocalProcessGroup:
    """A local WP-CLI process started in its own session: ending it kills its whole group."""

    def __init__(self, process: subprocess.Popen[bytes], label: str) -> None:
        self.process = process
        self.label = label

    def end(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def ended(self, seconds: float) -> bool:
        try:
            self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True
