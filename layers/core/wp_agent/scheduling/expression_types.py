"""The schedule expression types (cron, rate, at), their limits and names; see expressions.py."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

from wp_agent.models.field_rules import TIME_ZONES

DEFAULT_TIMEZONE = "Asia/Tokyo"
MIN_INTERVAL = timedelta(minutes=15)
DEFAULT_RUN_COUNT = 5
MAX_EXPRESSION_CHARS = 256  # CreateSchedule's limit
MAX_TIMEZONE_CHARS = 50  # CreateSchedule's limit
MIN_YEAR, MAX_YEAR = 1970, 2199
ZONE_NAMES = frozenset(TIME_ZONES)

MONTH_NAMES = {
    name: number
    for number, name in enumerate(
        ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"), start=1
    )
}
WEEKDAY_NAMES = {"SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}

RateUnit = Literal["minutes", "hours", "days"]


class ScheduleExpressionError(ValueError):
    """An expression or time zone we will not send to Scheduler; `message_ja` is safe to show."""

    def __init__(self, message_ja: str, *, parameter: str = "expression", part: str | None = None) -> None:
        self.message_ja = message_ja
        self.parameter = parameter  # the request field: "expression" or "timezone"
        self.part = part  # the cron field (e.g. "day-of-week"), when one is at fault
        super().__init__(message_ja)


# --------------------------------------------------------------------------------------------------
# Parsed forms
# --------------------------------------------------------------------------------------------------


def aws_weekday(day: date) -> int:
    """Day-of-week as cron counts it: 1=SUN … 7=SAT."""
    return (day.weekday() + 1) % 7 + 1


@dataclass(frozen=True)
class DayOfMonth:
    values: frozenset[int] = frozenset()
    last: bool = False
    last_weekday: bool = False
    nearest_weekday_to: int | None = None

    def days(self, year: int, month: int) -> list[int]:
        length = calendar.monthrange(year, month)[1]
        if self.last:
            return [length]
        if self.last_weekday:
            last = date(year, month, length)
            return [length - max(0, last.weekday() - 4)]
        if self.nearest_weekday_to is not None:
            return _nearest_weekday(year, month, self.nearest_weekday_to, length)
        return sorted(d for d in self.values if d <= length)


def _nearest_weekday(year: int, month: int, day: int, length: int) -> list[int]:
    """`nW`: the weekday nearest day n, never leaving the month (Quartz's rule, which AWS follows)."""
    if day > length:
        return []
    weekday = date(year, month, day).weekday()
    if weekday == 5:  # Saturday: the Friday before, or the Monday after on the 1st
        return [day - 1 if day > 1 else day + 2]
    if weekday == 6:  # Sunday: the Monday after, or the Friday before on the last day
        return [day + 1 if day < length else day - 2]
    return [day]


@dataclass(frozen=True)
class DayOfWeek:
    values: frozenset[int] = frozenset()
    nth: tuple[int, int] | None = None  # (weekday, k): the k-th such weekday of the month
    last_of: int | None = None  # the last such weekday of the month

    def days(self, year: int, month: int) -> list[int]:
        length = calendar.monthrange(year, month)[1]
        if self.nth is not None:
            weekday, k = self.nth
            matches = [d for d in range(1, length + 1) if aws_weekday(date(year, month, d)) == weekday]
            return [matches[k - 1]] if len(matches) >= k else []
        if self.last_of is not None:
            return [max(d for d in range(1, length + 1) if aws_weekday(date(year, month, d)) == self.last_of)]
        return [d for d in range(1, length + 1) if aws_weekday(date(year, month, d)) in self.values]


@dataclass(frozen=True)
class CronExpression:
    expression: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    day_of_month: DayOfMonth | None  # None: "?"
    months: tuple[int, ...]
    day_of_week: DayOfWeek | None  # None: "?"
    years: tuple[int, ...]
    fields: tuple[str, ...]  # the six fields as written (names upper-cased)

    def days(self, year: int, month: int) -> list[int]:
        if self.day_of_month is not None:
            return self.day_of_month.days(year, month)
        if self.day_of_week is not None:
            return self.day_of_week.days(year, month)
        return []  # not produced by parse_expression: exactly one of the two is "?"

    def times_of_day(self) -> list[int]:
        """Minutes after midnight at which the schedule fires on a matching day."""
        return sorted(h * 60 + m for h in self.hours for m in self.minutes)


@dataclass(frozen=True)
class RateExpression:
    expression: str
    value: int
    unit: RateUnit

    @property
    def interval(self) -> timedelta:
        return timedelta(**{self.unit: self.value})


@dataclass(frozen=True)
class AtExpression:
    expression: str
    when: datetime  # naive: a wall-clock time in the schedule's time zone


ScheduleExpression = CronExpression | RateExpression | AtExpression
