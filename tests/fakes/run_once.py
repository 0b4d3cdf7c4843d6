"""Work done once per test run and shared by every pytest-xdist worker (a CDK synthesis, say).

The first worker to ask computes the value under a file lock in the run's shared temp root (the parent
of each worker's basetemp) and leaves it there as JSON; the others wait for it and read it. A value
lives only as long as the run's temp root, so nothing carries over to the next run.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Callable
from typing import Any

import pytest


def once_per_run(factory: pytest.TempPathFactory, name: str, compute: Callable[[], Any]) -> Any:
    """`compute()` (JSON-serialisable) once for the whole run, under `name`."""
    root = factory.getbasetemp().parent
    stored, lock = root / f"{name}.json", root / f"{name}.lock"
    with lock.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        if stored.exists():
            return json.loads(stored.read_text(encoding="utf-8"))
        value = compute()
        partial = stored.with_suffix(".partial")
        partial.write_text(json.dumps(value), encoding="utf-8")
        partial.replace(stored)
        return value
