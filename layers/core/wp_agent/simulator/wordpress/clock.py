"""Site-local and GMT times as WordPress computes them (`current_time`, `get_gmt_from_date`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from wp_agent.simulator.model import Blog

MYSQL_FORMAT = "%Y-%m-%d %H:%M:%S"
ZERO_DATE = "0000-00-00 00:00:00"

# Zones without daylight saving that the sample sites use; others go through zoneinfo.
_FIXED_ZONES = {"Asia/Tokyo": 9.0, "UTC": 0.0, "Asia/Seoul": 9.0, "Asia/Shanghai": 8.0}


class Clock:
    """The simulator's notion of "now": real time unless pinned (WP_SIM_NOW or the site file)."""

    def __init__(self, now_utc: datetime) -> None:
        self.now_utc = now_utc.astimezone(UTC).replace(microsecond=0)

    @classmethod
    def pinned_or_real(cls, pinned: str | None) -> Clock:
        """`pinned` is UTC 'Y-m-d H:i:s' (WP_SIM_NOW or the site file's fixed_now_gmt)."""
        if pinned:
            return cls(datetime.strptime(pinned, MYSQL_FORMAT).replace(tzinfo=UTC))
        return cls(datetime.now(UTC))

    def gmt(self) -> str:
        return self.now_utc.strftime(MYSQL_FORMAT)

    def local(self, blog: Blog) -> str:
        return (self.now_utc + utc_offset(blog, self.now_utc)).strftime(MYSQL_FORMAT)

    def timestamp(self) -> int:
        return int(self.now_utc.timestamp())


def utc_offset(blog: Blog, at: datetime) -> timedelta:
    zone = blog.option_str("timezone_string")
    if zone in _FIXED_ZONES:
        return timedelta(hours=_FIXED_ZONES[zone])
    if zone:
        try:
            from zoneinfo import ZoneInfo

            offset = at.astimezone(ZoneInfo(zone)).utcoffset()
            if offset is not None:
                return offset
        except (ValueError, KeyError, OSError):
            pass
    try:
        return timedelta(hours=float(blog.option_str("gmt_offset") or 0))
    except ValueError:
        return timedelta(0)


def parse_mysql(text: str) -> datetime | None:
    for layout in (MYSQL_FORMAT, "%Y-%m-%d %H:%M", "%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"):
        try:
            return datetime.strptime(text.strip(), layout)
        except ValueError:
            continue
    return None


def gmt_from_local(blog: Blog, local: str) -> str:
    parsed = parse_mysql(local)
    if parsed is None:
        return ZERO_DATE
    offset = utc_offset(blog, parsed.replace(tzinfo=UTC))
    return (parsed - offset).strftime(MYSQL_FORMAT)


def local_from_gmt(blog: Blog, gmt: str) -> str:
    parsed = parse_mysql(gmt)
    if parsed is None:
        return ZERO_DATE
    offset = utc_offset(blog, parsed.replace(tzinfo=UTC))
    return (parsed + offset).strftime(MYSQL_FORMAT)
