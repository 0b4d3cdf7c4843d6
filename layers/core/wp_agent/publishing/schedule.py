"""publishDate → WordPress's `post_date` (site time zone) and `post_date_gmt` (UTC)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

MYSQL_FORMAT = "%Y-%m-%d %H:%M:%S"
# WordPress offers manual offsets from UTC-12 to UTC+14.
_MAX_OFFSET_HOURS = 14.0


class SiteTimezoneError(ValueError):
    """The site's time zone settings cannot be interpreted."""


@dataclass(frozen=True)
class PostDates:
    """The two columns WordPress stores: `post_date` in the site's zone, `post_date_gmt` in UTC."""

    local: str
    gmt: str


def site_timezone(timezone_string: str, gmt_offset: str) -> tzinfo:
    """WordPress's `wp_timezone()`: `timezone_string` when set, otherwise the `gmt_offset` hours."""
    name = timezone_string.strip()
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise SiteTimezoneError(f"unknown timezone_string {name!r}") from exc
    raw = gmt_offset.strip() or "0"
    try:
        hours = float(raw)
    except ValueError as exc:
        raise SiteTimezoneError(f"gmt_offset {raw!r} is not a number") from exc
    if not math.isfinite(hours) or abs(hours) > _MAX_OFFSET_HOURS:
        raise SiteTimezoneError(f"gmt_offset {raw!r} is out of range")
    # 5.5 → +05:30 and 5.75 → +05:45, as wp_timezone_string() renders it.
    return timezone(timedelta(minutes=round(hours * 60)))


def post_dates(instant: datetime, zone: tzinfo) -> PostDates:
    """The same instant as WordPress columns; seconds precision (MySQL DATETIME)."""
    if instant.tzinfo is None:
        raise ValueError("instant must be timezone-aware")
    whole = instant.replace(microsecond=0)
    return PostDates(
        local=whole.astimezone(zone).strftime(MYSQL_FORMAT),
        gmt=whole.astimezone(UTC).strftime(MYSQL_FORMAT),
    )
