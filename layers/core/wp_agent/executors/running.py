"""The WP-CLI processes running on this machine, so an interrupt (Ctrl-C) can end them.

Local and sandbox commands run in their own session (a terminal's Ctrl-C does not reach them), so
the CLI ends them itself: each whole process group is killed, and the command then finishes as
killed (its record says so) instead of running on after the person asked to stop.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import weakref

_lock = threading.Lock()
_running: weakref.WeakSet[subprocess.Popen[bytes]] = weakref.WeakSet()
_stopping = False


def register(process: subprocess.Popen[bytes]) -> None:
    with _lock:
        _running.add(process)
        stopping = _stopping
    if stopping:  # started by a worker thread just after the interrupt: ended as well
        _kill(process)


def end_running_commands() -> int:
    """Kill the process group of every command still running (and of any started from now on);
    how many were ended."""
    global _stopping  # noqa: PLW0603 - one interrupt per process: the CLI exits right after
    with _lock:
        _stopping = True
        alive = [p for p in _running if p.poll() is None]
    for process in alive:
        _kill(process)
    return len(alive)


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
