"""The date-sensitive part of the suite passes on other days too.

Every test marked `pytest.mark.clock` (tests/unit/test_clock_discipline.py makes sure each test that
reads or sets its process's clock is) runs again in a pytest process whose clock Debian's `faketime`
starts at a late hour of a day that is the next day in Asia/Tokyo, once in the middle of next year and
once on New Year's Eve. Real sites (PHP, MariaDB) keep their own clock: the tests compare with it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.fakes.clock import CLOCK_STARTS_ENV, faketime_argv, faketime_environment
from tests.fakes.nested_pytest import ROOT, run_pytest

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
    run_pytest(
        ["-m", "clock", *files],
        prefix=faketime_argv(moment),
        env={**faketime_environment(), CLOCK_STARTS_ENV: moment.isoformat()},
        timeout=840,
    )
