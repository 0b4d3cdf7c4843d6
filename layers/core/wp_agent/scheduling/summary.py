"""A Japanese sentence saying when a schedule runs, built from the parsed expression (never by the model).

People confirm a schedule by reading this sentence, so it must say what Scheduler will do: it is
derived from the same parse that computes the run times. Shapes without a short wording fall back
to the expression itself; the run times shown next to it are always exact.
"""

from __future__ import annotations

from wp_agent.scheduling.expressions import (
    MAX_YEAR,
    MIN_YEAR,
    AtExpression,
    CronExpression,
    DayOfMonth,
    DayOfWeek,
    RateExpression,
    ScheduleExpression,
)

WEEKDAYS_JA = {1: "日", 2: "月", 3: "火", 4: "水", 5: "木", 6: "金", 7: "土"}
_PYTHON_WEEKDAYS_JA = "月火水木金土日"
_UNITS_JA = {"minutes": "分", "hours": "時間", "days": "日"}
_MAX_LISTED_TIMES = 6
_INSTRUCTION_PREVIEW_CHARS = 60


def timezone_label(timezone: str) -> str:
    return {"Asia/Tokyo": "日本時間", "UTC": "協定世界時"}.get(timezone, timezone)


def describe_when(schedule: ScheduleExpression, timezone: str) -> str:
    """e.g. 「毎週月曜 9:00（日本時間）」, 「30分ごと（作成時から）」, 「2025年1月7日（火）9:00（日本時間）に1回」."""
    if isinstance(schedule, RateExpression):
        return f"{schedule.value}{_UNITS_JA[schedule.unit]}ごと（作成時から）"
    if isinstance(schedule, AtExpression):
        when = schedule.when
        weekday = _PYTHON_WEEKDAYS_JA[when.weekday()]
        return (
            f"{when.year}年{when.month}月{when.day}日（{weekday}）{when.hour}:{when.minute:02d}"
            f"（{timezone_label(timezone)}）に1回"
        )
    days, times = _cron_days(schedule), _cron_times(schedule)
    if days == "毎日" and times.startswith("毎時"):
        return f"{times}（{timezone_label(timezone)}）"
    separator = "" if days.endswith("）") else " "
    return f"{days}{separator}{times}（{timezone_label(timezone)}）"


def summarize(schedule: ScheduleExpression, timezone: str, instruction: str) -> str:
    """e.g. 「毎週月曜 9:00（日本時間）に『下書きを一覧して』を実行します」."""
    text = " ".join(instruction.split())
    if len(text) > _INSTRUCTION_PREVIEW_CHARS:
        text = text[: _INSTRUCTION_PREVIEW_CHARS - 1] + "…"
    when = describe_when(schedule, timezone)
    particle = "、" if when.endswith("に1回") else "に"
    return f"{when}{particle}『{text}』を実行します"


def _numbers(values: tuple[int, ...] | list[int], unit: str = "") -> str:
    """1・2・3 or 1〜5 (consecutive runs of three or more are shown as ranges)."""
    parts: list[str] = []
    run: list[int] = []
    for value in [*values, None]:
        if value is not None and run and value == run[-1] + 1:
            run.append(value)
            continue
        if len(run) >= 3:
            parts.append(f"{run[0]}{unit}〜{run[-1]}{unit}")
        else:
            parts.extend(f"{v}{unit}" for v in run)
        run = [value] if value is not None else []
    return "・".join(parts)


def _cron_days(cron: CronExpression) -> str:
    day = _day_phrase(cron.day_of_month, cron.day_of_week)
    months = "" if len(cron.months) == 12 else _numbers(cron.months, "月")
    years = "" if cron.years == tuple(range(MIN_YEAR, MAX_YEAR + 1)) else _numbers(cron.years, "年")
    if not months and not years:
        return day
    scope = f"{years}{months}" if years else f"毎年{months}"
    if not day.startswith("毎月"):
        return f"{scope}の{day}"
    day = day.removeprefix("毎月")
    single_month = len(cron.months) == 1 and day[0].isdigit()
    return f"{scope}{day}" if single_month else f"{scope}の{day}"


def _day_phrase(day_of_month: DayOfMonth | None, day_of_week: DayOfWeek | None) -> str:
    if day_of_week is not None:
        if day_of_week.nth is not None:
            weekday, k = day_of_week.nth
            return f"毎月第{k}{WEEKDAYS_JA[weekday]}曜"
        if day_of_week.last_of is not None:
            return f"毎月最終{WEEKDAYS_JA[day_of_week.last_of]}曜"
        values = sorted(day_of_week.values)
        if len(values) == 7:
            return "毎日"
        if values == [2, 3, 4, 5, 6]:
            return "平日（月〜金）"
        if values == [1, 7]:
            return "毎週土日"
        return "毎週" + "・".join(WEEKDAYS_JA[v] for v in values) + "曜"
    if day_of_month is None:  # not produced by the parser
        return "毎日"
    if day_of_month.last:
        return "毎月末日"
    if day_of_month.last_weekday:
        return "毎月最終平日"
    if day_of_month.nearest_weekday_to is not None:
        return f"毎月{day_of_month.nearest_weekday_to}日に最も近い平日"
    if len(day_of_month.values) == 31:
        return "毎日"
    return f"毎月{_numbers(sorted(day_of_month.values), '日')}"


def _cron_times(cron: CronExpression) -> str:
    times = cron.times_of_day()
    if len(times) <= _MAX_LISTED_TIMES:
        return "・".join(f"{t // 60}:{t % 60:02d}" for t in times)
    minutes = "・".join(f"{m:02d}" for m in cron.minutes) if len(cron.minutes) <= 12 else None
    if len(cron.hours) == 24 and minutes is not None:
        return f"毎時{minutes}分"
    if minutes is not None:
        return f"{_numbers(cron.hours, '時')}台の{minutes}分"
    return f"cron 式 {' '.join(cron.fields[:2])} の時刻"
