"""EventBridge Scheduler expressions: parsing, the AWS rules, next run times (Tokyo and a DST zone)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from wp_agent.scheduling.expressions import (
    MIN_INTERVAL,
    AtExpression,
    CronExpression,
    RateExpression,
    ScheduleExpressionError,
    aws_weekday,
    next_runs,
    parse_expression,
    parse_timezone,
    validate_schedule,
)
from wp_agent.scheduling.summary import summarize

TOKYO = ZoneInfo("Asia/Tokyo")
NEW_YORK = ZoneInfo("America/New_York")


def tokyo(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=TOKYO)


def runs(expression: str, after: datetime, timezone: str = "Asia/Tokyo", count: int = 5) -> list[str]:
    return validate_schedule(expression, timezone, now=after, count=count).next_runs_iso()


# --- next runs in Tokyo (no DST) -------------------------------------------------------------------

MONDAY_0930 = tokyo(2025, 1, 6, 9, 30)  # a Monday


@pytest.mark.parametrize(
    ("expression", "after", "expected"),
    [
        (
            "cron(0 9 ? * MON *)",
            MONDAY_0930,
            ["2025-01-13T09:00:00+09:00", "2025-01-20T09:00:00+09:00", "2025-01-27T09:00:00+09:00"],
        ),
        (  # the same day when the time is still ahead
            "cron(0 9 ? * MON *)",
            tokyo(2025, 1, 6, 8, 59),
            ["2025-01-06T09:00:00+09:00", "2025-01-13T09:00:00+09:00", "2025-01-20T09:00:00+09:00"],
        ),
        (  # strictly after: a run exactly at `after` is not "next"
            "cron(0 9 ? * MON *)",
            tokyo(2025, 1, 6, 9, 0),
            ["2025-01-13T09:00:00+09:00", "2025-01-20T09:00:00+09:00", "2025-01-27T09:00:00+09:00"],
        ),
        (
            "cron(30 18 * * ? *)",
            MONDAY_0930,
            ["2025-01-06T18:30:00+09:00", "2025-01-07T18:30:00+09:00", "2025-01-08T18:30:00+09:00"],
        ),
        (  # a range of weekdays across a weekend (Fri 10th → Mon 13th)
            "cron(0 9 ? * MON-FRI *)",
            tokyo(2025, 1, 10, 12, 0),
            ["2025-01-13T09:00:00+09:00", "2025-01-14T09:00:00+09:00", "2025-01-15T09:00:00+09:00"],
        ),
        (  # lists in minutes, hours and day-of-month
            "cron(0,30 9,18 1,15 * ? *)",
            MONDAY_0930,
            ["2025-01-15T09:00:00+09:00", "2025-01-15T09:30:00+09:00", "2025-01-15T18:00:00+09:00"],
        ),
        (  # a step from a start value
            "cron(0/20 9 * * ? *)",
            tokyo(2025, 1, 6, 8, 0),
            ["2025-01-06T09:00:00+09:00", "2025-01-06T09:20:00+09:00", "2025-01-06T09:40:00+09:00"],
        ),
        (  # a step inside a range, and */n
            "cron(15-45/15 */12 * * ? *)",
            tokyo(2025, 1, 6, 1, 0),
            ["2025-01-06T12:15:00+09:00", "2025-01-06T12:30:00+09:00", "2025-01-06T12:45:00+09:00"],
        ),
        (  # month and weekday names, a fixed year
            "cron(0 12 ? JAN,JUL SUN 2026)",
            MONDAY_0930,
            ["2026-01-04T12:00:00+09:00", "2026-01-11T12:00:00+09:00", "2026-01-18T12:00:00+09:00"],
        ),
        (  # day-of-week numbers: 1 = Sunday, 7 = Saturday
            "cron(0 8 ? * 1,7 *)",
            MONDAY_0930,
            ["2025-01-11T08:00:00+09:00", "2025-01-12T08:00:00+09:00", "2025-01-18T08:00:00+09:00"],
        ),
        (  # L: the last day of the month, in a leap year
            "cron(0 9 L * ? *)",
            tokyo(2024, 1, 31, 10, 0),
            ["2024-02-29T09:00:00+09:00", "2024-03-31T09:00:00+09:00", "2024-04-30T09:00:00+09:00"],
        ),
        (  # L in a common year
            "cron(0 9 L 2 ? *)",
            MONDAY_0930,
            ["2025-02-28T09:00:00+09:00", "2026-02-28T09:00:00+09:00", "2027-02-28T09:00:00+09:00"],
        ),
        (  # LW: the last weekday (31 May 2025 is a Saturday, 31 Aug a Sunday)
            "cron(0 9 LW 5,8 ? *)",
            MONDAY_0930,
            ["2025-05-30T09:00:00+09:00", "2025-08-29T09:00:00+09:00", "2026-05-29T09:00:00+09:00"],
        ),
        (  # nW: the weekday nearest the 1st, never leaving the month (1 Feb/Mar 2025 are Saturdays)
            "cron(0 9 1W * ? *)",
            MONDAY_0930,
            ["2025-02-03T09:00:00+09:00", "2025-03-03T09:00:00+09:00", "2025-04-01T09:00:00+09:00"],
        ),
        (  # n#k: the first Monday
            "cron(0 10 ? * 2#1 *)",
            MONDAY_0930,
            ["2025-01-06T10:00:00+09:00", "2025-02-03T10:00:00+09:00", "2025-03-03T10:00:00+09:00"],
        ),
        (  # n#5 only in months that have a fifth Friday
            "cron(0 10 ? * 6#5 *)",
            MONDAY_0930,
            ["2025-01-31T10:00:00+09:00", "2025-05-30T10:00:00+09:00", "2025-08-29T10:00:00+09:00"],
        ),
        (  # nL: the last Friday
            "cron(0 10 ? * 6L *)",
            MONDAY_0930,
            ["2025-01-31T10:00:00+09:00", "2025-02-28T10:00:00+09:00", "2025-03-28T10:00:00+09:00"],
        ),
        (  # 29 February: leap years only
            "cron(0 0 29 2 ? *)",
            MONDAY_0930,
            ["2028-02-29T00:00:00+09:00", "2032-02-29T00:00:00+09:00", "2036-02-29T00:00:00+09:00"],
        ),
        (  # the 31st skips shorter months
            "cron(0 9 31 * ? *)",
            tokyo(2025, 1, 31, 10, 0),
            ["2025-03-31T09:00:00+09:00", "2025-05-31T09:00:00+09:00", "2025-07-31T09:00:00+09:00"],
        ),
        ("at(2025-01-07T09:00:00)", MONDAY_0930, ["2025-01-07T09:00:00+09:00"]),
    ],
)
def test_next_runs_in_tokyo(expression: str, after: datetime, expected: list[str]) -> None:
    assert runs(expression, after, count=len(expected)) == expected


def test_five_runs_by_default_with_the_offset() -> None:
    result = runs("cron(0 9 ? * MON *)", MONDAY_0930)
    assert len(result) == 5
    assert all(r.endswith("+09:00") for r in result)


def test_tokyo_has_no_dst_while_new_york_changes() -> None:
    """The same UTC instants around the US change: Tokyo stays +09:00 and 09:00 local."""
    result = runs("cron(0 9 * * ? *)", tokyo(2025, 3, 7, 12, 0), count=4)
    assert result == [
        "2025-03-08T09:00:00+09:00",
        "2025-03-09T09:00:00+09:00",
        "2025-03-10T09:00:00+09:00",
        "2025-03-11T09:00:00+09:00",
    ]


def test_after_in_another_zone_is_compared_as_an_instant() -> None:
    # 00:30 UTC on Monday = 09:30 in Tokyo: today's 09:00 run has passed.
    result = runs("cron(0 9 ? * MON *)", datetime(2025, 1, 6, 0, 30, tzinfo=UTC), count=1)
    assert result == ["2025-01-13T09:00:00+09:00"]


def test_names_are_case_insensitive_and_the_expression_is_normalised() -> None:
    parsed = parse_expression("  cron(0  9 ? * mon-fri *) ")
    assert isinstance(parsed, CronExpression)
    assert parsed.expression == "cron(0 9 ? * MON-FRI *)"
    assert parse_expression("rate(2   hours)").expression == "rate(2 hours)"


def test_aws_weekday_numbering() -> None:
    assert aws_weekday(date(2025, 1, 5)) == 1  # Sunday
    assert aws_weekday(date(2025, 1, 6)) == 2  # Monday
    assert aws_weekday(date(2025, 1, 11)) == 7  # Saturday


# --- a DST zone (America/New_York: 9 March and 2 November 2025) ----------------------------------


def test_spring_forward_skips_a_time_that_does_not_exist() -> None:
    result = runs("cron(30 2 * * ? *)", datetime(2025, 3, 7, tzinfo=NEW_YORK), "America/New_York", 4)
    assert result == [
        "2025-03-07T02:30:00-05:00",
        "2025-03-08T02:30:00-05:00",
        "2025-03-10T02:30:00-04:00",  # 9 March 02:30 never happens: Scheduler skips it
        "2025-03-11T02:30:00-04:00",
    ]


def test_fall_back_runs_a_repeated_time_once() -> None:
    result = runs("cron(30 1 * * ? *)", datetime(2025, 11, 1, 12, tzinfo=NEW_YORK), "America/New_York", 3)
    assert result == [
        "2025-11-02T01:30:00-04:00",  # first occurrence only, not again at 01:30 EST
        "2025-11-03T01:30:00-05:00",
        "2025-11-04T01:30:00-05:00",
    ]


def test_wall_clock_time_is_kept_across_the_change() -> None:
    result = runs("cron(0 9 ? * MON *)", datetime(2025, 3, 1, tzinfo=NEW_YORK), "America/New_York", 3)
    assert result == ["2025-03-03T09:00:00-05:00", "2025-03-10T09:00:00-04:00", "2025-03-17T09:00:00-04:00"]


def test_rate_days_are_24_hours_of_elapsed_time_across_dst() -> None:
    parsed = parse_expression("rate(1 day)")
    created = datetime(2025, 3, 8, 9, 0, tzinfo=NEW_YORK)
    result = next_runs(parsed, NEW_YORK, after=created, anchor=created, count=3)
    assert [r.isoformat() for r in result] == [
        "2025-03-08T09:00:00-05:00",
        "2025-03-09T10:00:00-04:00",  # 24 h later the clock reads 10:00
        "2025-03-10T10:00:00-04:00",
    ]


def test_at_inside_the_spring_gap_is_refused() -> None:
    with pytest.raises(ScheduleExpressionError, match="存在しない"):
        validate_schedule("at(2025-03-09T02:30:00)", "America/New_York", now=datetime(2025, 3, 1, tzinfo=UTC))


def test_dst_zone_matches_a_minute_by_minute_oracle() -> None:
    """Brute force over every local minute through both changes, against the fast iteration."""
    for expression in ("cron(0/30 1-3 * * ? *)", "cron(45 0,2 ? * SUN *)", "cron(0 2 8-10 3,11 ? *)"):
        parsed = parse_expression(expression)
        assert isinstance(parsed, CronExpression)
        for start in (datetime(2025, 3, 7, tzinfo=NEW_YORK), datetime(2025, 10, 31, tzinfo=NEW_YORK)):
            expected = _oracle(parsed, NEW_YORK, start, count=6)
            got = next_runs(parsed, NEW_YORK, after=start, count=6)
            assert len(got) == 6
            assert got == expected, expression


def _oracle(cron: CronExpression, zone: ZoneInfo, start: datetime, count: int) -> list[datetime]:
    found: list[datetime] = []
    seen: set[datetime] = set()
    utc = start.astimezone(UTC)
    for minute in range(1, 60 * 24 * 400):
        local = (utc + timedelta(minutes=minute)).astimezone(zone)
        naive = local.replace(tzinfo=None)
        if naive in seen:
            continue  # the repeated hour: only the first occurrence runs
        seen.add(naive)
        if (
            naive.minute in cron.minutes
            and naive.hour in cron.hours
            and naive.month in cron.months
            and naive.year in cron.years
            and naive.day in cron.days(naive.year, naive.month)
        ):
            found.append(local)
            if len(found) == count:
                return found
    return found


# --- rate() and at() -------------------------------------------------------------------------------


def test_rate_starts_at_creation_then_every_interval() -> None:
    parsed = parse_expression("rate(30 minutes)")
    created = tokyo(2025, 1, 6, 9, 0)
    proposal = next_runs(parsed, TOKYO, after=created, count=3)
    assert [r.isoformat() for r in proposal] == [
        "2025-01-06T09:00:00+09:00",
        "2025-01-06T09:30:00+09:00",
        "2025-01-06T10:00:00+09:00",
    ]
    later = next_runs(parsed, TOKYO, after=tokyo(2025, 1, 6, 10, 10), anchor=created, count=2)
    assert [r.isoformat() for r in later] == ["2025-01-06T10:30:00+09:00", "2025-01-06T11:00:00+09:00"]


@pytest.mark.parametrize(
    ("expression", "interval"),
    [
        ("rate(15 minutes)", timedelta(minutes=15)),
        ("rate(1 hour)", timedelta(hours=1)),
        ("rate(6 hours)", timedelta(hours=6)),
        ("rate(1 day)", timedelta(days=1)),
        ("rate(7 days)", timedelta(days=7)),
    ],
)
def test_rate_units(expression: str, interval: timedelta) -> None:
    parsed = parse_expression(expression)
    assert isinstance(parsed, RateExpression)
    assert parsed.interval == interval


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("rate(1 minutes)", "単数形（minute）"),
        ("rate(1 hours)", "単数形（hour）"),
        ("rate(2 hour)", "複数形（hours）"),
        ("rate(2 day)", "複数形（days）"),
        ("rate(0 minutes)", "1以上"),
        ("rate(5 weeks)", "単位「weeks」"),
        ("rate(-5 minutes)", "いずれかの形"),
        ("rate(5minutes)", "いずれかの形"),
    ],
)
def test_invalid_rate(expression: str, message: str) -> None:
    with pytest.raises(ScheduleExpressionError, match=message):
        parse_expression(expression)


def test_at_is_a_wall_clock_time_in_the_zone() -> None:
    parsed = parse_expression("at(2025-07-01T09:00:00)")
    assert isinstance(parsed, AtExpression)
    result = validate_schedule(parsed.expression, "America/New_York", now=datetime(2025, 1, 1, tzinfo=UTC))
    assert result.next_runs_iso() == ["2025-07-01T09:00:00-04:00"]


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("at(2025-01-06T09:00:00)", "過去"),  # earlier the same morning
        ("at(2025-02-30T09:00:00)", "存在しない日時"),
        ("at(2025-01-07 09:00:00)", "いずれかの形"),
        ("at(2025-01-07T09:00)", "いずれかの形"),
    ],
)
def test_invalid_at(expression: str, message: str) -> None:
    with pytest.raises(ScheduleExpressionError, match=message):
        validate_schedule(expression, now=MONDAY_0930)


# --- the "?" rule and refused forms, each naming its field -----------------------------------------


@pytest.mark.parametrize(
    ("expression", "part", "label"),
    [
        ("cron(0 9 * * * *)", "day-of-week", "のどちらか一方は「?」"),
        ("cron(0 9 1 * MON *)", "day-of-week", "のどちらか一方は「?」"),
        ("cron(0 9 ? * ? *)", "day-of-month", "両方を「?」にはできません"),
        ("cron(? 9 * * ? *)", "minutes", "分（minutes）"),
        ("cron(0 9 * ? ? *)", "month", "月（month）"),
        ("cron(0 9 1,? * ? *)", "day-of-month", "単独"),
        ("cron(60 9 * * ? *)", "minutes", "分（minutes）の値「60」"),
        ("cron(0 24 * * ? *)", "hours", "時（hours）の値「24」"),
        ("cron(0 9 32 * ? *)", "day-of-month", "日（day-of-month）の値「32」"),
        ("cron(0 9 0 * ? *)", "day-of-month", "日（day-of-month）の値「0」"),
        ("cron(0 9 * 13 ? *)", "month", "月（month）の値「13」"),
        ("cron(0 9 ? * 8 *)", "day-of-week", "曜日（day-of-week）の値「8」"),
        ("cron(0 9 ? * 0 *)", "day-of-week", "曜日（day-of-week）の値「0」"),
        ("cron(0 9 * * ? 2200)", "year", "年（year）の値「2200」"),
        ("cron(0 9 ? FOO * *)", "month", "使えない名前"),
        ("cron(0 9 ? * FUN *)", "day-of-week", "使えない名前"),
        ("cron(0 9 ? * 1/2 *)", "day-of-week", "「/」"),
        ("cron(0 9 ? * L *)", "day-of-week", "「L」単独"),
        ("cron(0 9 L-2 * ? *)", "day-of-month", "対応していません"),
        ("cron(0 9 1,L * ? *)", "day-of-month", "単独"),
        ("cron(0 9 1W,15 * ? *)", "day-of-month", "単独"),
        ("cron(0 9 ? * MON#1 *)", "day-of-week", "数字で指定"),
        ("cron(0 9 ? * 2#6 *)", "day-of-week", "1〜5"),
        ("cron(0 9 ? * 2#1,3 *)", "day-of-week", "単独"),
        ("cron(0 9 ? * FRI-MON *)", "day-of-week", "折り返し"),
        ("cron(50-10 9 * * ? *)", "minutes", "開始が終了以下"),
        ("cron(0/0 9 * * ? *)", "minutes", "間隔は1以上"),
        ("cron(0 9,,10 * * ? *)", "hours", "空の項目"),
        ("cron(0 9 * JAN#1 ? *)", "month", "解釈できません"),
        ("cron(0 9W * * ? *)", "hours", "解釈できません"),
        ("cron(0 9 * * ? 20*)", "year", "「*」は単独"),
    ],
)
def test_invalid_cron_names_the_field(expression: str, part: str, label: str) -> None:
    with pytest.raises(ScheduleExpressionError) as caught:
        parse_expression(expression)
    assert caught.value.part == part
    assert caught.value.parameter == "expression"
    assert label in caught.value.message_ja


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("cron(0 9 * * ?)", "6項目で指定してください（5項目あります）"),
        ("cron(0 9 * * ? * *)", "7項目"),
        ("every monday at 9", "いずれかの形"),
        ("CRON(0 9 * * ? *)", "いずれかの形"),
        ("", "指定してください"),
        ("cron(" + "0," * 200 + "0 9 * * ? *)", "256文字以内"),
    ],
)
def test_malformed_expressions(expression: str, message: str) -> None:
    with pytest.raises(ScheduleExpressionError, match=message) as caught:
        parse_expression(expression)
    assert caught.value.part is None


def test_question_mark_in_either_day_field_is_accepted() -> None:
    assert runs("cron(0 9 * * ? *)", MONDAY_0930, count=1) == runs("cron(0 9 ? * * *)", MONDAY_0930, count=1)


@pytest.mark.parametrize(
    "expression", ["cron(0 9 31 2 ? *)", "cron(0 9 * * ? 2020)", "cron(0 9 30 2 ? 2024-2030)"]
)
def test_an_expression_that_never_runs_is_refused(expression: str) -> None:
    with pytest.raises(ScheduleExpressionError, match="今後実行される日時がありません"):
        validate_schedule(expression, now=MONDAY_0930)


# --- the minimum interval --------------------------------------------------------------------------


def test_minimum_interval_is_15_minutes() -> None:
    assert timedelta(minutes=15) == MIN_INTERVAL


@pytest.mark.parametrize(
    "expression",
    [
        "rate(15 minutes)",
        "rate(1 hour)",
        "cron(0/15 * * * ? *)",
        "cron(0,15,30,45 9-17 ? * MON-FRI *)",
        "cron(5,55 0,23 1 * ? *)",  # 23:55 → 00:05 only across months, never on consecutive days
        "cron(5,55 0,23 ? * MON,WED *)",
    ],
)
def test_intervals_of_15_minutes_or_more_are_accepted(expression: str) -> None:
    validate_schedule(expression, now=MONDAY_0930)


@pytest.mark.parametrize(
    ("expression", "shortest"),
    [
        ("rate(14 minutes)", "14分"),
        ("rate(1 minute)", "1分"),
        ("cron(* * * * ? *)", "1分"),
        ("cron(0/10 9 * * ? *)", "10分"),
        ("cron(0,10 9 ? * MON *)", "10分"),
        ("cron(0/14 * * * ? *)", "4分"),  # :56 then :00 of the next hour
        ("cron(5,55 0,23 * * ? *)", "10分"),  # 23:55 then 00:05 the next day
        ("cron(5,55 0,23 ? * MON,TUE *)", "10分"),
    ],
)
def test_intervals_below_the_minimum_are_refused(expression: str, shortest: str) -> None:
    with pytest.raises(ScheduleExpressionError, match="15分以上") as caught:
        validate_schedule(expression, now=MONDAY_0930)
    assert f"最短 {shortest}" in caught.value.message_ja


def test_the_minimum_can_be_raised() -> None:
    with pytest.raises(ScheduleExpressionError, match="1時間以上"):
        validate_schedule("rate(30 minutes)", now=MONDAY_0930, min_interval=timedelta(hours=1))


# --- time zones ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Asia/Tokyo", "America/New_York", "Europe/London", "UTC"])
def test_iana_time_zones(name: str) -> None:
    assert parse_timezone(name).key == name


@pytest.mark.parametrize("name", ["Tokyo", "JST+9", "../etc/passwd", "/usr/share/zoneinfo/UTC", "", "A" * 60])
def test_unknown_time_zones_are_refused(name: str) -> None:
    with pytest.raises(ScheduleExpressionError, match="IANA") as caught:
        parse_timezone(name)
    assert caught.value.parameter == "timezone"


def test_validate_reports_the_time_zone_field() -> None:
    with pytest.raises(ScheduleExpressionError) as caught:
        validate_schedule("cron(0 9 * * ? *)", "Mars/Olympus", now=MONDAY_0930)
    assert caught.value.parameter == "timezone"


# --- the Japanese summary comes from the parsed expression -----------------------------------------


@pytest.mark.parametrize(
    ("expression", "timezone", "expected"),
    [
        ("cron(0 9 ? * MON *)", "Asia/Tokyo", "毎週月曜 9:00（日本時間）に『下書きを一覧して』を実行します"),
        (
            "cron(0 9 ? * MON-FRI *)",
            "Asia/Tokyo",
            "平日（月〜金）9:00（日本時間）に『下書きを一覧して』を実行します",
        ),
        ("cron(30 18 * * ? *)", "Asia/Tokyo", "毎日 18:30（日本時間）に『下書きを一覧して』を実行します"),
        ("cron(0 9 L * ? *)", "Asia/Tokyo", "毎月末日 9:00（日本時間）に『下書きを一覧して』を実行します"),
        (
            "cron(0 10 ? * 3#2 *)",
            "Asia/Tokyo",
            "毎月第2火曜 10:00（日本時間）に『下書きを一覧して』を実行します",
        ),
        ("cron(0 9 1 1 ? *)", "Asia/Tokyo", "毎年1月1日 9:00（日本時間）に『下書きを一覧して』を実行します"),
        ("cron(0 * * * ? *)", "Asia/Tokyo", "毎時00分（日本時間）に『下書きを一覧して』を実行します"),
        ("rate(30 minutes)", "Asia/Tokyo", "30分ごと（作成時から）に『下書きを一覧して』を実行します"),
        (
            "at(2025-01-07T09:00:00)",
            "Asia/Tokyo",
            "2025年1月7日（火）9:00（日本時間）に1回、『下書きを一覧して』を実行します",
        ),
        (
            "cron(0 9 ? * MON *)",
            "America/New_York",
            "毎週月曜 9:00（America/New_York）に『下書きを一覧して』を実行します",
        ),
    ],
)
def test_summary(expression: str, timezone: str, expected: str) -> None:
    assert summarize(parse_expression(expression), timezone, "下書きを一覧して") == expected
