"""The product's one clock (wp_agent/clock.py): set by time-machine in process, by faketime for a process."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine

from tests.fakes.clock import CLOCK_STARTS_ENV
from wp_agent import clock

pytestmark = pytest.mark.clock


@time_machine.travel(datetime(2027, 6, 1, 23, 30, tzinfo=UTC), tick=False)
def test_today_is_the_date_where_the_people_are() -> None:
    assert clock.now() == datetime(2027, 6, 1, 23, 30, tzinfo=UTC)
    assert clock.today() == date(2027, 6, 1)
    assert clock.today(ZoneInfo("Asia/Tokyo")) == date(2027, 6, 2)
    assert clock.now_iso() == "2027-06-01T23:30:00.000Z"
    assert clock.epoch_seconds() == int(datetime(2027, 6, 1, 23, 30, tzinfo=UTC).timestamp())


def test_the_clock_is_the_one_the_run_set() -> None:
    """Under tests/integration/test_any_date.py's faketime runs, the clock started where it was told."""
    started = os.environ.get(CLOCK_STARTS_ENV)
    if started is None:
        pytest.skip("not a faketime run")
    elapsed = clock.now() - datetime.fromisoformat(started)
    assert timedelta(0) <= elapsed < timedelta(minutes=15)
