"""Timing and failure handling shared by the benchmark scripts; details go to stderr, BENCH lines to stdout."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def timed(action: Callable[[], None]) -> float:
    """Seconds `action` took."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def check(ok: bool, what: str, detail: str) -> None:
    """Stop the benchmark when a measured command failed: a failed command is not a timing."""
    if not ok:
        raise SystemExit(f"benchmark command failed ({what}): {detail[:500]}")
