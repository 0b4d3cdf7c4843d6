"""EventBridge Scheduler expressions — cron(), rate() and at() — validated, and their next run times.

What EventBridge Scheduler documents, and what this module does with it:

- ``cron(minutes hours day-of-month month day-of-week year)``: six fields; exactly one of
  day-of-month and day-of-week is ``?``; day-of-week counts 1=SUN … 7=SAT. Supported: ``*``, lists
  ``,``, ranges ``-``, steps ``/`` (not in day-of-week, as in AWS's table), names ``JAN-DEC`` and
  ``SUN-SAT``, in day-of-month ``L`` (last day), ``LW`` (last weekday) and ``nW`` (weekday nearest
  day n), in day-of-week ``n#k`` (k-th weekday n) and ``nL`` (last weekday n). Refused with a Japanese
  message naming the field: anything else, including ``L`` alone in day-of-week, ``L-n``, specials
  inside lists, reversed (wrap-around) ranges and names in ``#``/``nL`` — forms whose meaning AWS
  leaves unclear, so we never promise run times the service might not honour.
- ``rate(value unit)``: minute(s) / hour(s) / day(s), singular exactly when value is 1. A rate
  schedule without a start date fires at creation, then every interval of elapsed time (a "day" is
  24 hours, even across a DST change).
- ``at(yyyy-mm-ddThh:mm:ss)``: once, at that wall-clock time in the schedule's time zone.

Time zones are IANA names (``zoneinfo``). Wall-clock times that do not exist (spring forward) are
skipped and repeated ones (fall back) run once — at the first occurrence — as Scheduler documents.

Runs cost model calls and SSH commands on someone's server, so schedules may not fire more often
than every ``MIN_INTERVAL`` (15 minutes): at most 96 runs a day per schedule, longer than a typical
run so firings rarely overlap on one site, and fine-grained enough for WordPress housekeeping.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from wp_agent.scheduling.expression_parser import (
    parse_expression,
    parse_timezone,
)
from wp_agent.scheduling.expression_types import (
    DEFAULT_RUN_COUNT,
    DEFAULT_TIMEZONE,
    MAX_YEAR,
    MIN_INTERVAL,
    MIN_YEAR,
    AtExpression,
    CronExpression,
    DayOfMonth,
    DayOfWeek,
    RateExpression,
    ScheduleExpression,
    ScheduleExpressionError,
    aws_weekday,
)

__all__ = [  # what the rest of the code imports from here
    "MAX_YEAR",
    "MIN_INTERVAL",
    "MIN_YEAR",
    "AtExpression",
    "CronExpression",
    "DayOfMonth",
    "DayOfWeek",
    "RateExpression",
    "ScheduleExpression",
    "ScheduleExpressionError",
    "ValidatedSchedule",
    "aws_weekday",
    "next_runs",
    "parse_expression",
    "parse_timezone",
    "validate_schedule",
]


# --------------------------------------------------------------------------------------------------
# Run times
# --------------------------------------------------------------------------------------------------


def _local(naive: datetime, zone: ZoneInfo) -> datetime | None:
    """The wall-clock time in `zone` (first occurrence when repeated), or None when it does not exist."""
    aware = naive.replace(tzinfo=zone, fold=0)
    if aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != naive:
        return None
    return aware


def _iter_dates(cron: CronExpression, start: date) -> Iterator[date]:
    """Matching dates from `start` on, in order (bounded by the year field, at most 2199)."""
    for year in cron.years:
        if year < start.year:
            continue
        for month in cron.months:
            if (year, month) < (start.year, start.month):
                continue
            for day in cron.days(year, month):
                current = date(year, month, day)
                if current >= start:
                    yield current


def next_runs(
    schedule: ScheduleExpression,
    zone: ZoneInfo,
    *,
    after: datetime,
    count: int = DEFAULT_RUN_COUNT,
    anchor: datetime | None = None,
) -> list[datetime]:
    """The next `count` run times strictly after `after`, in `zone`.

    For rate(), `anchor` is when the schedule started (its creation): it fires then and every
    interval after; without one the schedule is taken to start at `after` (a proposal).
    """
    if after.tzinfo is None:
        raise ValueError("after must be timezone-aware")
    if isinstance(schedule, AtExpression):
        at = _local(schedule.when, zone)
        return [at] if at is not None and at.astimezone(UTC) > after and count > 0 else []
    if isinstance(schedule, RateExpression):
        # Elapsed time, so in UTC: aware arithmetic within one zone would add wall-clock time.
        start, now = (anchor or after).astimezone(UTC), after.astimezone(UTC)
        interval = schedule.interval
        first = 0 if start >= now else (now - start) // interval + 1
        return [(start + interval * (first + i)).astimezone(zone) for i in range(count)]
    return _cron_runs(schedule, zone, after.astimezone(UTC), count)


def _cron_runs(cron: CronExpression, zone: ZoneInfo, after: datetime, count: int) -> list[datetime]:
    """`after` in UTC."""
    runs: list[datetime] = []
    if count <= 0:
        return runs
    # One day earlier than `after`'s local date: a run just after `after` may sit on that date.
    start = after.astimezone(zone).date() - timedelta(days=1)
    times = cron.times_of_day()
    for day in _iter_dates(cron, start):
        for minute_of_day in times:
            naive = datetime(day.year, day.month, day.day, minute_of_day // 60, minute_of_day % 60)
            local = _local(naive, zone)
            # Compared in UTC: two datetimes sharing a tzinfo compare by wall clock, ignoring fold.
            if local is not None and local.astimezone(UTC) > after:
                runs.append(local)
                if len(runs) == count:
                    return runs
    return runs


# --------------------------------------------------------------------------------------------------
# The minimum interval
# --------------------------------------------------------------------------------------------------


def shortest_interval(schedule: ScheduleExpression, *, from_year: int) -> timedelta | None:
    """The shortest wall-clock gap between two runs (None for at(): it runs once).

    For cron the times of day are the same on every matching day, so the gap is the smallest
    difference between those times, or — when two consecutive days both match — from the last time
    of one day to the first of the next. (A DST change can shorten one gap once a year; that is not
    what the limit is for.)
    """
    if isinstance(schedule, AtExpression):
        return None
    if isinstance(schedule, RateExpression):
        return schedule.interval
    times = schedule.times_of_day()
    gaps = [b - a for a, b in itertools.pairwise(times)]
    overnight = times[0] + 24 * 60 - times[-1]
    if (not gaps or overnight < min(gaps)) and _has_consecutive_days(schedule, from_year):
        gaps.append(overnight)
    return timedelta(minutes=min(gaps)) if gaps else None


def _has_consecutive_days(cron: CronExpression, from_year: int, *, sample_days: int = 800) -> bool:
    previous: date | None = None
    for seen, current in enumerate(_iter_dates(cron, date(max(from_year, MIN_YEAR), 1, 1))):
        if previous is not None and current - previous == timedelta(days=1):
            return True
        if seen >= sample_days:
            return False
        previous = current
    return False


# --------------------------------------------------------------------------------------------------
# One call for callers: everything a schedule must satisfy before it is created or proposed
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValidatedSchedule:
    expression: str  # canonical form: what we send to Scheduler
    timezone: str
    zone: ZoneInfo
    parsed: ScheduleExpression
    next_runs: list[datetime]

    def next_runs_iso(self) -> list[str]:
        return [run.isoformat(timespec="seconds") for run in self.next_runs]


def validate_schedule(
    expression: str,
    timezone: str = DEFAULT_TIMEZONE,
    *,
    now: datetime,
    min_interval: timedelta = MIN_INTERVAL,
    count: int = DEFAULT_RUN_COUNT,
) -> ValidatedSchedule:
    """Parse, check the zone, the minimum interval and that the schedule will ever run."""
    zone = parse_timezone(timezone)
    parsed = parse_expression(expression)
    shortest = shortest_interval(parsed, from_year=now.astimezone(zone).year)
    if shortest is not None and shortest < min_interval:
        raise ScheduleExpressionError(
            f"実行間隔が短すぎます（最短 {_minutes_text(shortest)}）。"
            f"スケジュール実行は{_minutes_text(min_interval)}以上の間隔にしてください。"
        )
    runs = next_runs(parsed, zone, after=now, count=count)
    if not runs:
        if isinstance(parsed, AtExpression):
            raise ScheduleExpressionError(
                "at 式の日時が過去か、夏時間の切り替えで存在しない時刻です。これから先の日時を指定してください。"
            )
        raise ScheduleExpressionError(
            "この式では今後実行される日時がありません（存在しない日付や過去の年になっていないか確認してください）。"
        )
    return ValidatedSchedule(
        expression=parsed.expression, timezone=timezone, zone=zone, parsed=parsed, next_runs=runs
    )


def _minutes_text(interval: timedelta) -> str:
    minutes = int(interval.total_seconds() // 60)
    return f"{minutes}分" if minutes < 60 or minutes % 60 else f"{minutes // 60}時間"
