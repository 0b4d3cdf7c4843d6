"""Clocks the tests control.

- In the test's own process: `time_machine.travel(...)` moves the product's clock (wp_agent/clock.py).
- A process the test starts: `faketime_argv(moment)` before its argv runs it under Debian's `faketime`, its clock
  starting at `moment` and running on at its real rate (so timeouts keep their length).
- A real site (PHP, MariaDB) runs at its own time: `site_now(site)` reads that clock, so a test compares
  what WordPress did with WordPress's time, not with ours.

Tests that depend on the date or the time of day carry `pytest.mark.clock`; tests/unit/test_clock_discipline.py
finds the ones that do not, and tests/integration/test_any_date.py runs them all at other dates.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from wp_agent.sandbox import SandboxSite

FAKETIME = "faketime"


def faketime_argv(moment: datetime) -> list[str]:
    """The `faketime` prefix that starts a process's clock at `moment` (aware) and lets it run."""
    if shutil.which(FAKETIME) is None:
        raise RuntimeError("faketime is missing: make setup installs Debian's faketime package")
    stamp = moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    return [FAKETIME, "-f", f"@{stamp}"]


def faketime_environment() -> dict[str, str]:
    """What `faketime` needs beside its prefix: the zone read as UTC, so a stamp means the same instant
    whatever the machine's zone. (Monotonic time is moved by the same offset and runs at its real
    rate; libfaketime 0.9.10 with FAKETIME_DONT_FAKE_MONOTONIC makes Python's sleep fail with EINVAL.)"""
    return {"TZ": "UTC"}


def site_now(site: SandboxSite) -> datetime:
    """The site's own clock: the time PHP gives WordPress there, in UTC."""
    stamp = site.wp("eval", "echo time();").stdout.strip()
    return datetime.fromtimestamp(int(stamp), UTC)


def site_clock(site: SandboxSite) -> Callable[[], datetime]:
    """A clock that shows the site's time: read from the site at its first use (one PHP start), then
    advanced by elapsed time."""
    start: list[tuple[datetime, float]] = []

    def now() -> datetime:
        if not start:
            start.append((site_now(site), time.monotonic()))
        moment, started = start[0]
        return moment + timedelta(seconds=time.monotonic() - started)

    return now


# Set by tests/integration/test_any_date.py for the pytest process it starts under faketime: the
# moment that process's clock started at (tests/unit/test_clock.py checks the clock really moved).
CLOCK_STARTS_ENV = "WP_AGENT_TEST_CLOCK_STARTS"
