"""The product's one clock: every date and time the agent states, stores or decides by comes from here.

Tests set it in one place: `time-machine` for code in the test's process, Debian's `faketime` for a
process they start (tests/fakes/clock.py). Elapsed time (timeouts, backoff, latency) uses
`time.monotonic` instead, which no calendar date changes.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, tzinfo


def now() -> datetime:
    """The current moment, aware, in UTC."""
    return datetime.now(UTC)


def today(zone: tzinfo = UTC) -> date:
    """Today's date in `zone` (UTC unless given: the date a site's people live in can be a day apart)."""
    return now().astimezone(zone).date()


def now_iso() -> str:
    """The current moment as ISO 8601 UTC with milliseconds and a Z suffix (the spec's log format)."""
    return now().isoformat(timespec="milliseconds").replace("+00:00", "Z")


def epoch_seconds() -> int:
    """The current moment as whole seconds since the epoch (DynamoDB TTL attributes)."""
    return int(now().timestamp())
