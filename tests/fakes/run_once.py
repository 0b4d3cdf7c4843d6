"""Work done once per test run and shared by every pytest-xdist worker (a CDK synthesis, say).

The first worker to ask computes the value under a file lock in the run's shared temp root (the parent
of each worker's basetemp) and leaves it there as JSON; the others wait for it and read it. A value
lives only as long as the run's temp root, so nothing carries over to the next run.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from typing import Any

import pytest


def once_per_run(factory: pytest.TempPathFactory, name: str, compute: Callable[[], Any]) -> Any:
    """`compute()` (JSON-serialisable) once for the whole run, under `name`."""
    # Under xdist each worker's basetemp is popen-gwN inside the run's own directory; without xdist
    # basetemp is the run's directory itself (its parent holds every earlier run: never shared).
    basetemp = factory.getbasetemp()
    root = basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp
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
