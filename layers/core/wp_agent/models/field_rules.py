"""What a request field may hold, as JSON Schema patterns and lists: pydantic enforces them, the
published OpenAPI document states them (so a client and schemathesis see the same rules), and each
pattern has the Japanese reason given when a value breaks it.

Patterns are written for every engine that reads them: pydantic's (Rust `regex`), Python's `re`
(schemathesis generates from them) and ECMA-262 (JSON Schema): anchored with ^ and $, explicit
classes such as [0-9], no look-around. They are raw strings, so the document carries escapes such
as \\x00, never the characters themselves.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Final

# -- ids ------------------------------------------------------------------------------------------

SESSION_ID: Final = r"^[A-Za-z0-9_\-]{8,64}$"
APPROVAL_ID: Final = r"^apr_[0-9a-f]{20}$"
RUN_ID: Final = r"^run_[0-9a-f]{20}$"
ARTICLE_ID: Final = r"^art_[0-9a-f]{20}$"
SCHEDULE_ID: Final = r"^sch_[0-9a-f]{20}$"
TARGET_ID: Final = r"^[a-z0-9][a-z0-9\-]{1,62}$"
USER_ID: Final = r"^[A-Za-z0-9._:@\-]{1,128}$"
IDEMPOTENCY_KEY: Final = r"^[\x21-\x7e]{1,128}$"
HOST: Final = r"^[A-Za-z0-9.\-:\[\]]{1,253}$"
META_KEY: Final = r"^[A-Za-z][A-Za-z0-9_\-]{0,99}$"
# A target's tag (fleet runs choose targets by tag); the CLI's named sites take the same
TAG: Final = r"^[a-z0-9][a-z0-9_.\-]{0,39}$"
FLEET_RUN_ID: Final = r"^flt_[0-9a-f]{20}$"
# A WordPress login, email or ID for WP-CLI's --user: 1-100 printable characters, no leading dash,
# no white space at either end.
WP_USER: Final = r"^[^\s\-\x00-\x1f\x7f](?:[^\x00-\x1f\x7f]{0,98}[^\s\x00-\x1f\x7f])?$"

# -- text -----------------------------------------------------------------------------------------

NO_NUL: Final = r"^[^\x00]*$"
# at least one character that is not white space; no NUL
VISIBLE_TEXT: Final = r"^[^\x00]*[^\x00\s][^\x00]*$"
# one line of visible text: no control characters (tab and newline included)
LABEL: Final = r"^[^\x00-\x1f\x7f]*[^\x00-\x1f\x7f\s][^\x00-\x1f\x7f]*$"
HTTP_URL: Final = r"^https?://[^\s/?#]+"

# -- dates and times ------------------------------------------------------------------------------

_YEAR = r"(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
_LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_MONTH_DAY = (
    r"(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
)
# a day that exists (leap years included)
_DATE = rf"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
_HOUR_MINUTE = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]"
_OFFSET = r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
# ISO 8601 date and time, seconds and fraction optional; without an offset it is a local time
LOCAL_DATETIME: Final = rf"^{_DATE}T{_HOUR_MINUTE}(?::[0-5][0-9](?:\.[0-9]{{1,6}})?)?{_OFFSET}?$"

# -- schedules ------------------------------------------------------------------------------------

# The forms EventBridge Scheduler takes. rate(): at least every 15 minutes (the schedules' minimum
# interval), at most 10000 of a unit; at(): a day that exists. What a pattern cannot state — cron
# field values, a cron that fires more often than every 15 minutes, a time that has passed — is
# refused with INVALID_SCHEDULE_EXPRESSION (listed in the document's 400 response).
SCHEDULE_EXPRESSION: Final = (
    r"^ *(?:cron\([0-9A-Za-z*?,/#\-]+(?: +[0-9A-Za-z*?,/#\-]+){5}\)"
    r"|rate\((?:(?:1[5-9]|[2-9][0-9]|[1-9][0-9]{2,3}|10000) +minutes"
    r"|1 +(?:hour|day)|(?:[2-9]|[1-9][0-9]{1,3}|10000) +(?:hours|days))\)"
    rf"|at\({_DATE}T{_HOUR_MINUTE}:[0-5][0-9]\)) *$"
)
# IANA zone names, from the pinned tzdata package: the same list wherever the code runs.
TIME_ZONES: Final = tuple(sorted(resources.files("tzdata").joinpath("zones").read_text("utf-8").split()))

REASONS_JA: Final = {
    SESSION_ID: "英数字・-・_ の8〜64文字で指定してください",
    APPROVAL_ID: "apr_ に続く16進数20桁で指定してください",
    RUN_ID: "run_ に続く16進数20桁で指定してください",
    ARTICLE_ID: "art_ に続く16進数20桁で指定してください",
    SCHEDULE_ID: "sch_ に続く16進数20桁で指定してください",
    TARGET_ID: "英小文字・数字・- の2〜63文字（先頭は英小文字か数字）で指定してください",
    USER_ID: "英数字と . _ : @ - の1〜128文字で指定してください",
    IDEMPOTENCY_KEY: "表示可能なASCII文字の1〜128文字で指定してください",
    HOST: "ホスト名またはIPアドレスで指定してください",
    META_KEY: "キーは英字で始まり、英数字・_・- の100文字以内にしてください",
    TAG: "タグは英小文字・数字で始まり、英小文字・数字・_ . - の40文字以内にしてください",
    FLEET_RUN_ID: "flt_ に続く16進数20桁で指定してください",
    WP_USER: "WordPressのログイン名・メールアドレス・IDを1〜100文字で指定してください（先頭の - や前後の空白、制御文字は使えません）",
    NO_NUL: "NUL文字は使えません",
    VISIBLE_TEXT: "空白以外の文字を含めてください（NUL文字は使えません）",
    LABEL: "空白以外の文字を含め、制御文字や改行は使えません",
    HTTP_URL: "http:// または https:// で始まるURLを指定してください",
    LOCAL_DATETIME: "ISO 8601形式の存在する日時で指定してください（例: 2026-11-23T09:00:00+09:00）",
    SCHEDULE_EXPRESSION: "cron(分 時 日 月 曜日 年)・rate(値 単位、15分以上)・at(yyyy-mm-ddThh:mm:ss) のいずれかで指定してください",
}


def matches(pattern: str, value: str) -> bool:
    """Whether the value follows the pattern as JSON Schema reads it (a search; `$` is the end of the
    value, where Python's would also match before a final newline). For checks outside a model."""
    if pattern.endswith("$"):
        pattern = pattern[:-1] + r"\Z"
    return re.search(pattern, value) is not None
