"""A pytest run in a process of its own, for a test that needs one (another clock, or work that pytest
would otherwise do in every xdist worker). Its own plugins only: no xdist, no cache, no inherited addopts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_SUMMARY = re.compile(r"\d+ passed(, \d+ deselected)? in .*")


def run_pytest(
    args: Sequence[str], *, prefix: Sequence[str] = (), env: Mapping[str, str] | None = None, timeout: float
) -> None:
    """Run `pytest <args>` (after `prefix`, e.g. faketime) from the repository root; fails the calling
    test with the run's own output unless every selected test passed."""
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "pytest", "-q", "--no-header", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-o", "addopts=", *args],
        cwd=ROOT, env={**os.environ, "PYTEST_ADDOPTS": "", **(env or {})},
        capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    output = done.stdout.strip()
    summary = output.splitlines()[-1] if output else ""
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-2000:]
    assert _SUMMARY.fullmatch(summary), summary
