"""The date-sensitive part of the suite passes on other days too.

Every test marked `pytest.mark.clock` (tests/unit/test_clock_discipline.py makes sure each test that
reads or sets its process's clock is) runs again in a pytest process whose clock Debian's `faketime`
starts at a late hour of a day that is the next day in Asia/Tokyo, once in the middle of next year and
once on New Year's Eve. Real sites (PHP, MariaDB) keep their own clock: the tests compare with it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.fakes.clock import CLOCK_STARTS_ENV, faketime_argv, faketime_environment

ROOT = Path(__file__).resolve().parents[2]
MOMENTS = [
    datetime(2027, 6, 1, 23, 30, tzinfo=UTC),  # 08:30 on 2 June in Tokyo
    datetime(2026, 12, 31, 15, 30, tzinfo=UTC),  # 00:30 on New Year's Day in Tokyo
]
_MARKED = re.compile(r"\bpytest\.mark\.clock\b")


def clock_test_files() -> list[str]:
    """The test modules that hold date-sensitive tests (this one's runs are not among them)."""
    here = Path(__file__).resolve()
    return sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("test_*.py")
        if path != here and _MARKED.search(path.read_text(encoding="utf-8"))
    )


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("moment", MOMENTS, ids=lambda m: m.strftime("%Y-%m-%d %H:%M UTC"))
def test_the_date_sensitive_tests_pass_on_another_day(moment: datetime) -> None:
    files = clock_test_files()
    assert "tests/unit/test_clock.py" in files  # the run's own proof that its clock moved
    environment = {
        **os.environ,
        **faketime_environment(),
        CLOCK_STARTS_ENV: moment.isoformat(),
        "PYTEST_ADDOPTS": "",
    }
    done = subprocess.run(
        [*faketime_argv(moment), sys.executable, "-m", "pytest", "-m", "clock", "-q", "-p", "no:cacheprovider",
         "-p", "no:xdist", "--no-header", "-o", "addopts=", *files],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=840, check=False,
    )  # fmt: skip
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:]
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert re.fullmatch(r"\d+ passed(, \d+ deselected)? in .*", summary), summary
