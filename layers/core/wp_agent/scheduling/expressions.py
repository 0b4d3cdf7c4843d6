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

import calendar
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from wp_agent.models.field_rules import TIME_ZONES

DEFAULT_TIMEZONE = "Asia/Tokyo"
MIN_INTERVAL = timedelta(minutes=15)
DEFAULT_RUN_COUNT = 5
MAX_EXPRESSION_CHARS = 256  # CreateSchedule's limit
MAX_TIMEZONE_CHARS = 50  # CreateSchedule's limit
MIN_YEAR, MAX_YEAR = 1970, 2199
_ZONE_NAMES = frozenset(TIME_ZONES)

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


# --------------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _FieldSpec:
    key: str
    label: str
    low: int
    high: int
    names: dict[str, int]
    allow_step: bool
    extra_chars: str  # the wildcards beyond * , - / that AWS allows here (for the error message)


_MINUTES = _FieldSpec("minutes", "分（minutes）", 0, 59, {}, True, "")
_HOURS = _FieldSpec("hours", "時（hours）", 0, 23, {}, True, "")
_DAY_OF_MONTH = _FieldSpec("day-of-month", "日（day-of-month）", 1, 31, {}, True, " ? L W")
_MONTH = _FieldSpec("month", "月（month）", 1, 12, MONTH_NAMES, True, "")
_DAY_OF_WEEK = _FieldSpec("day-of-week", "曜日（day-of-week）", 1, 7, WEEKDAY_NAMES, False, " ? L #")
_YEAR = _FieldSpec("year", "年（year）", MIN_YEAR, MAX_YEAR, {}, True, "")

_CRON = re.compile(r"^cron\((?P<body>[^()]*)\)$")
_RATE = re.compile(r"^rate\((?P<value>\d+) (?P<unit>[a-z]+)\)$")
_AT = re.compile(r"^at\((?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$")
_NUMBER_OR_NAME = re.compile(r"^(?:\d{1,4}|[A-Z]{3})$")


def _fail(spec: _FieldSpec, message: str) -> ScheduleExpressionError:
    return ScheduleExpressionError(f"{spec.label}{message}", part=spec.key)


def _value(token: str, spec: _FieldSpec) -> int:
    if not _NUMBER_OR_NAME.match(token):
        raise _fail(spec, f"の「{token}」は解釈できません。{_allowed(spec)}")
    if token.isdigit():
        number = int(token)
    elif token in spec.names:
        number = spec.names[token]
    else:
        hint = "（JAN〜DEC）" if spec is _MONTH else "（SUN〜SAT）" if spec is _DAY_OF_WEEK else ""
        raise _fail(spec, f"の「{token}」は使えない名前です{hint}。")
    if not spec.low <= number <= spec.high:
        raise _fail(spec, f"の値「{token}」は {spec.low}〜{spec.high} の範囲で指定してください。")
    return number


def _allowed(spec: _FieldSpec) -> str:
    steps = " / " if spec.allow_step else " "
    names = "・名前" if spec.names else ""
    return f"使えるのは 数値{names}と * , -{steps}{spec.extra_chars.strip()}".rstrip() + " です。"


def _item(item: str, spec: _FieldSpec) -> set[int]:
    """One list item: `*`, `a`, `a-b`, optionally followed by `/step`."""
    base, slash, step_text = item.partition("/")
    if slash:
        if not spec.allow_step:
            raise _fail(spec, "では「/」（間隔指定）は使えません。")
        if not step_text.isdigit() or int(step_text) < 1:
            raise _fail(spec, f"の間隔「{item}」は「開始/間隔」の形で、間隔は1以上の整数にしてください。")
    step = int(step_text) if slash else 1
    if base == "*":
        low, high = spec.low, spec.high
    elif "-" in base:
        start_text, _, end_text = base.partition("-")
        low, high = _value(start_text, spec), _value(end_text, spec)
        if low > high:
            raise _fail(
                spec,
                f"の範囲「{base}」は開始が終了以下になるように指定してください（折り返しの範囲は使えません）。",
            )
    else:
        low = _value(base, spec)
        high = spec.high if slash else low  # "a/s": from a to the end of the field
    return set(range(low, high + 1, step))


def _values(text: str, spec: _FieldSpec) -> frozenset[int]:
    values: set[int] = set()
    for item in text.split(","):
        if not item:
            raise _fail(spec, f"の「{text}」に空の項目があります。")
        if "*" in item and not re.fullmatch(r"\*(?:/\d+)?", item):
            raise _fail(spec, f"の「{item}」は解釈できません。「*」は単独か「*/間隔」で使ってください。")
        values |= _item(item, spec)
    return frozenset(values)


def _special_not_in_list(text: str, spec: _FieldSpec, chars: str) -> None:
    if "," in text and any(c in text for c in chars):
        raise _fail(spec, f"の「{text}」: {'・'.join(chars)} は他の値と組み合わせず単独で指定してください。")


def _day_of_month(text: str) -> DayOfMonth:
    spec = _DAY_OF_MONTH
    _special_not_in_list(text, spec, "LW")
    if text == "L":
        return DayOfMonth(last=True)
    if text == "LW":
        return DayOfMonth(last_weekday=True)
    if re.fullmatch(r"\d{1,2}W", text):
        return DayOfMonth(nearest_weekday_to=_value(text[:-1], spec))
    if "L" in text or "W" in text:
        raise _fail(
            spec,
            f"の「{text}」には対応していません。L（末日）・LW（最終平日）・15W（15日に最も近い平日）の形で指定してください。",
        )
    return DayOfMonth(values=_values(text, spec))


def _day_of_week(text: str) -> DayOfWeek:
    spec = _DAY_OF_WEEK
    _special_not_in_list(text, spec, "L#")
    if nth := re.fullmatch(r"(\d)#(\d)", text):
        weekday, k = _value(nth.group(1), spec), int(nth.group(2))
        if not 1 <= k <= 5:
            raise _fail(spec, f"の「{text}」: 「#」の後は第何週か（1〜5）を指定してください。")
        return DayOfWeek(nth=(weekday, k))
    if last := re.fullmatch(r"(\d)L", text):
        return DayOfWeek(last_of=_value(last.group(1), spec))
    if text == "L":
        raise _fail(
            spec,
            "の「L」単独には対応していません。最終○曜日は「6L」（最終金曜日）のように数字と組み合わせてください。",
        )
    if "L" in text or "#" in text:
        raise _fail(
            spec,
            f"の「{text}」には対応していません。「2#1」（第1月曜日）や「6L」（最終金曜日）のように数字で指定してください。",
        )
    return DayOfWeek(values=_values(text, spec))


def _parse_cron(body: str) -> CronExpression:
    fields = body.split()
    if len(fields) != 6:
        raise ScheduleExpressionError(
            f"cron 式は cron(分 時 日 月 曜日 年) の6項目で指定してください（{len(fields)}項目あります）。"
        )
    fields = [f.upper() for f in fields]
    minutes, hours, dom_text, month, dow_text, year = fields
    for spec, text in ((_MINUTES, minutes), (_HOURS, hours), (_MONTH, month), (_YEAR, year)):
        if "?" in text:
            raise _fail(spec, "では「?」は使えません（? は日か曜日のどちらか一方にだけ使います）。")
    if dom_text == "?" and dow_text == "?":
        raise ScheduleExpressionError(
            "日（day-of-month）と曜日（day-of-week）の両方を「?」にはできません。どちらか一方だけを「?」にしてください。",
            part="day-of-month",
        )
    if dom_text != "?" and dow_text != "?":
        raise ScheduleExpressionError(
            "日（day-of-month）と曜日（day-of-week）のどちらか一方は「?」にしてください"
            "（例: 毎週月曜 9:00 は cron(0 9 ? * MON *)、毎月1日 9:00 は cron(0 9 1 * ? *)）。",
            part="day-of-week",
        )
    for spec, text in ((_DAY_OF_MONTH, dom_text), (_DAY_OF_WEEK, dow_text)):
        if "?" in text and text != "?":
            raise _fail(spec, "の「?」は他の値と組み合わせず単独で指定してください。")
    return CronExpression(
        expression=f"cron({' '.join(fields)})",
        minutes=tuple(sorted(_values(minutes, _MINUTES))),
        hours=tuple(sorted(_values(hours, _HOURS))),
        day_of_month=None if dom_text == "?" else _day_of_month(dom_text),
        months=tuple(sorted(_values(month, _MONTH))),
        day_of_week=None if dow_text == "?" else _day_of_week(dow_text),
        years=tuple(sorted(_values(year, _YEAR))),
        fields=tuple(fields),
    )


_RATE_UNITS: dict[str, tuple[RateUnit, bool]] = {
    "minute": ("minutes", True),
    "minutes": ("minutes", False),
    "hour": ("hours", True),
    "hours": ("hours", False),
    "day": ("days", True),
    "days": ("days", False),
}


# The longest rate EventBridge Scheduler could ever fire on (about 27 years); beyond it a
# timedelta overflows.
MAX_RATE_VALUE = 10_000


def _parse_rate(value_text: str, unit: str) -> RateExpression:
    if len(value_text) > len(str(MAX_RATE_VALUE)) or int(value_text) > MAX_RATE_VALUE:
        raise ScheduleExpressionError(f"rate 式の値は{MAX_RATE_VALUE}以下の整数にしてください。")
    value = int(value_text)
    if value < 1:
        raise ScheduleExpressionError("rate 式の値は1以上の整数にしてください（例: rate(30 minutes)）。")
    if unit not in _RATE_UNITS:
        raise ScheduleExpressionError(
            f"rate 式の単位「{unit}」は使えません。minute(s)・hour(s)・day(s) のいずれかにしてください。"
        )
    plural, singular = _RATE_UNITS[unit]
    if singular and value != 1:
        raise ScheduleExpressionError(f"rate 式の値が2以上のときは単位を複数形（{plural}）にしてください。")
    if not singular and value == 1:
        raise ScheduleExpressionError(f"rate 式の値が1のときは単位を単数形（{unit[:-1]}）にしてください。")
    return RateExpression(expression=f"rate({value} {unit})", value=value, unit=plural)


def _parse_at(stamp: str) -> AtExpression:
    try:
        when = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S")  # a wall-clock time in the schedule's zone
    except ValueError as exc:
        raise ScheduleExpressionError(f"at 式の日時「{stamp}」は存在しない日時です。") from exc
    return AtExpression(expression=f"at({stamp})", when=when)


def parse_expression(text: str) -> ScheduleExpression:
    """Parse and check one expression; raises ScheduleExpressionError (Japanese) if we would not send it."""
    expression = text.strip()
    if not expression:
        raise ScheduleExpressionError("スケジュール式を指定してください（例: cron(0 9 ? * MON *)）。")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ScheduleExpressionError(f"スケジュール式は{MAX_EXPRESSION_CHARS}文字以内にしてください。")
    if match := _CRON.match(expression):
        return _parse_cron(match.group("body"))
    if match := _RATE.match(" ".join(expression.split())):
        return _parse_rate(match.group("value"), match.group("unit"))
    if match := _AT.match(expression):
        return _parse_at(match.group("stamp"))
    raise ScheduleExpressionError(
        "スケジュール式は cron(分 時 日 月 曜日 年)・rate(値 単位)・at(yyyy-mm-ddThh:mm:ss) のいずれかの形で指定してください。"
    )


def parse_timezone(name: str) -> ZoneInfo:
    """An IANA time zone by name; raises ScheduleExpressionError(parameter="timezone")."""
    if name not in _ZONE_NAMES:
        raise ScheduleExpressionError(
            f"タイムゾーン「{name[:MAX_TIMEZONE_CHARS]}」は使えません。Asia/Tokyo のような IANA のタイムゾーン名で指定してください。",
            parameter="timezone",
        )
    return ZoneInfo(name)


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
