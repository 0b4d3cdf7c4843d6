"""Ending the processes the sandbox starts (its HTTP front, the tests' kept WP-CLI and sshd)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from typing import Any


def wait_or_kill(process: subprocess.Popen[Any], seconds: float = 10.0) -> None:
    """Wait up to `seconds` for a process that was asked to end (terminated, or its input closed);
    kill it if it has not."""
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=seconds)


def end_group(process: subprocess.Popen[Any], seconds: float = 10.0) -> None:
    """End a process started with `start_new_session=True` and every process of its group (the
    workers it forked): terminated, then killed if the leader has not ended within `seconds`."""
    _signal_group(process, signal.SIGTERM)
    wait_or_kill(process, seconds)
    _signal_group(process, signal.SIGKILL)  # a worker the leader left behind


def _signal_group(process: subprocess.Popen[Any], number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # the group has ended
        os.killpg(process.pid, number)
