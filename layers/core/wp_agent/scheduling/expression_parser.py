"""Parsing cron(), rate() and at() expressions and time zone names into expression_types, with a
Japanese message naming the field for anything refused (the rules: expressions.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from wp_agent.scheduling.expression_types import (
    MAX_EXPRESSION_CHARS,
    MAX_TIMEZONE_CHARS,
    MAX_YEAR,
    MIN_YEAR,
    MONTH_NAMES,
    WEEKDAY_NAMES,
    ZONE_NAMES,
    AtExpression,
    CronExpression,
    DayOfMonth,
    DayOfWeek,
    RateExpression,
    RateUnit,
    ScheduleExpression,
    ScheduleExpressionError,
)
from wp_agent.whole_values import whole

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

_CRON = whole(r"cron\((?P<body>[^()]*)\)", "cron(0 9 * * ? *)")
_RATE = whole(r"rate\((?P<value>\d+) (?P<unit>[a-z]+)\)", "rate(15 minutes)")
_AT = whole(r"at\((?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)", "at(2030-01-01T09:00:00)")
_NUMBER_OR_NAME = whole(r"\d{1,4}|[A-Z]{3}", "9", "2030", "MON")


def _fail(spec: _FieldSpec, message: str) -> ScheduleExpressionError:
    return ScheduleExpressionError(f"{spec.label}{message}", part=spec.key)


def _value(token: str, spec: _FieldSpec) -> int:
    if not _NUMBER_OR_NAME.fits(token):
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
    if match := _CRON.parts(expression):
        return _parse_cron(match.group("body"))
    if match := _RATE.parts(" ".join(expression.split())):
        return _parse_rate(match.group("value"), match.group("unit"))
    if match := _AT.parts(expression):
        return _parse_at(match.group("stamp"))
    raise ScheduleExpressionError(
        "スケジュール式は cron(分 時 日 月 曜日 年)・rate(値 単位)・at(yyyy-mm-ddThh:mm:ss) のいずれかの形で指定してください。"
    )


def parse_timezone(name: str) -> ZoneInfo:
    """An IANA time zone by name; raises ScheduleExpressionError(parameter="timezone")."""
    if name not in ZONE_NAMES:
        raise ScheduleExpressionError(
            f"タイムゾーン「{name[:MAX_TIMEZONE_CHARS]}」は使えません。Asia/Tokyo のような IANA のタイムゾーン名で指定してください。",
            parameter="timezone",
        )
    return ZoneInfo(name)
