"""Ending the processes the sandbox starts (its HTTP front, the tests' kept WP-CLI and sshd)."""

from __future__ import annotations

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
