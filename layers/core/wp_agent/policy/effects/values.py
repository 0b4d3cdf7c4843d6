"""Value checks of declared effects: what a flag or argument value must look like for a write to stay
inside its declaration, and the reads of the site that confirm what the argv cannot show.

A check accepts or refuses a value (None for a bare `--flag`). It never rewrites the value: what
runs is what the model wrote, or it waits for approval.
"""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from wp_agent.policy.active_content import active_parts
from wp_agent.policy.fetches import embedded_urls, hosts_fetched, linked_urls
from wp_agent.whole_values import whole

HTML_TAG = re.compile(r"<\s*[a-zA-Z!/?]")
_DIGITS = whole(r"[0-9]{1,19}", "1", "58")
_DATE = whole(r"\d{4}-\d{2}-\d{2}( \d{2}:\d{2}(:\d{2})?)?", "2024-12-24", "2030-01-01 09:00:00")
_SLUG = whole(r"[a-z0-9][a-z0-9_\-]{0,199}", "news", "akismet", "2024-news")
_HEX_COLOUR = whole(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})", "#ffffff", "1e73be")
_LANGUAGE = whole(
    r"[a-z]{2,3}(_[A-Z]{2})?(_(formal|informal|[a-z0-9]{2,8}))?", "ja", "en_US", "de_DE_formal", "de_CH_1901"
)
_GMT_OFFSET = whole(r"-?\d{1,2}(\.(0|25|5|75))?", "9", "-5.5")
_UTC_OFFSET = whole(r"UTC[+-]\d{1,2}(\.(25|5|75))?", "UTC+9", "UTC-3.5")
_TEMPLATE = whole(
    r"[A-Za-z0-9_\-]+(/[A-Za-z0-9_\-]+)*\.php", "template-full-width.php", "templates/a.php", "page-2col.php"
)
_INTEGER = whole(r"-?\d{1,9}", "0", "-1", "1000000")
_HTTP_URL = whole(
    r"https?://[^\s<>\"'\\\x00-\x1f\x7f\x85\u2028\u2029]{1,2000}", "https://example.com/", flags=re.IGNORECASE
)
_EMAIL = whole(
    r"[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9.\-]{1,190}\.[A-Za-z]{2,24}", "hanako@example.com", "taro2@example.jp"
)


@dataclass(frozen=True)
class AbsentPost:
    """What a failed read of a post by ID may mean: no post has that ID yet. A post an ID names may
    come into being before the write reaches it — a revision the same reply's update saves, a
    plugin's record a hook inserts — so that absence confirms the write only where no post can take
    the ID first (policy/post_targets.py decides)."""

    post_id: str
    first_in_command: bool  # the command reaches this ID before it can create any post itself


@dataclass(frozen=True)
class SiteCheck:
    """A read of the site that must confirm a value before the write runs without approval:
    `argv` runs as a policy-checked read; `confirms(stdout)` (None when the read failed) decides."""

    argv: tuple[str, ...]
    confirms: Callable[[str | None], bool]
    reason_ja: str  # why the write does not run as it is when the site does not confirm it
    refuse: bool = False  # unconfirmed: refused (True) or waits for approval (False)
    absent: AbsentPost | None = None  # the read fails when no post has this ID (see AbsentPost)


@dataclass(frozen=True)
class Held:
    """Why a value waits for approval, when a check can say more than "outside the declaration"."""

    rule: str
    reason_ja: str


@dataclass(frozen=True)
class ValueCheck:
    """A value inside the declared effect: `accepts(value)`; `value is None` is a bare flag."""

    describe_ja: str
    accepts: Callable[[str | None], bool]
    site_check: Callable[[str], SiteCheck] | None = None
    samples: tuple[str, ...] = ()  # values it accepts: examples for people and for the conformance test
    # For a value it does not accept: the rule and the words that say what it would do (None: the
    # declaration's own words).
    held_because: Callable[[str], Held | None] | None = None
    # The URLs the server fetches because of an accepted value: their host names must resolve to
    # public addresses when the policy decides (CommandPolicy asks its resolver).
    fetches: Callable[[str], list[str]] | None = None

    def why_held(self, value: str | None) -> Held | None:
        return self.held_because(value) if self.held_because is not None and value is not None else None


def _given(check: Callable[[str], bool]) -> Callable[[str | None], bool]:
    return lambda value: value is not None and check(value)


def one_of(*choices: str, describe_ja: str | None = None) -> ValueCheck:
    allowed = frozenset(choices)
    return ValueCheck(
        describe_ja or "、".join(choices) + " のいずれか", _given(lambda v: v in allowed), samples=choices
    )


def int_range(low: int, high: int) -> ValueCheck:
    def accepts(value: str) -> bool:
        return _INTEGER.fits(value) and low <= int(value) <= high

    return ValueCheck(
        f"{low}〜{high}の整数", _given(accepts), samples=(str(low), str(high), str((low + high) // 2))
    )


def text(max_chars: int = 100_000) -> ValueCheck:
    """Free text no visitor or administrator is shown as markup (a slug, a name looked up, a format)."""
    return ValueCheck(
        f"{max_chars}文字以内のテキスト",
        _given(lambda v: len(v) <= max_chars),
        samples=("秋の新メニュー", "Hello"),
    )


ACTIVE_CONTENT_RULE = "confirm.active_content"
SERVER_FETCH_RULE = "confirm.server_fetch"

# Whose browser shows a text: said in the approval of a value that would run there.
SHOWN_WITH_POSTS = "この投稿・ページを表示した訪問者と、管理画面で一覧や編集画面を開いた管理者"
SHOWN_WITH_MEDIA = "メディアを表示した訪問者と、メディアライブラリを開いた管理者"
SHOWN_ON_EVERY_PAGE = "ウィジェットが表示される全ページの訪問者と、ウィジェット画面を開いた管理者"
SHOWN_IN_MENUS = "メニューが表示される全ページの訪問者と、メニュー画面を開いた管理者"
SHOWN_WITH_TERMS = "カテゴリー・タグのページや投稿を表示した訪問者と、管理画面で一覧を開いた管理者"
SHOWN_WITH_USERS = "投稿者の情報を表示した訪問者と、ユーザー一覧やプロフィールを開いた管理者"
SHOWN_WITH_COMMENTS = "コメントを表示した訪問者と、コメント画面を開いた管理者"
SHOWN_WITH_SITES = "サイトを表示した訪問者と、ネットワークやサイトの管理画面を開いた管理者"


def _active_content_held(shown_to: str) -> Callable[[str], Held | None]:
    def held(value: str) -> Held | None:
        parts = active_parts(value)
        if not parts:
            return None
        listed = "、".join(parts[:3]) + (f" ほか{len(parts) - 3}件" if len(parts) > 3 else "")
        return Held(
            ACTIVE_CONTENT_RULE,
            f"{listed}が含まれます。WordPressが投稿者には保存を許さない内容で、{shown_to}のブラウザで"
            "スクリプトとして動いたり、別のページを読み込んだりすることがあるため承認が必要です",
        )

    return held


def visible_text(shown_to: str, max_chars: int = 100_000) -> ValueCheck:
    """Text a visitor or an administrator is shown (titles, excerpts, names, descriptions): free text,
    but nothing WordPress's kses would take out of an author's post (policy/active_content.py)."""
    held = _active_content_held(shown_to)
    return ValueCheck(
        f"{max_chars}文字以内のテキスト（スクリプトなど、WordPressが投稿者に許さないHTMLを含まない）",
        _given(lambda v: len(v) <= max_chars and held(v) is None),
        samples=("秋の新メニュー", "<strong>Hello</strong>"),
        held_because=held,
    )


@lru_cache(maxsize=32)
def fetched_by_server(value: str, *, links: bool) -> tuple[str, ...] | None:
    """The URLs the server fetches because of `value` (embeds when shown, and for a post's content
    its links when published); None when what it fetches cannot be vouched for. Cached: a write's
    value is read when it is judged and again when its hosts are looked up."""
    embedded = embedded_urls(value)
    linked = linked_urls(value) if links else []
    return None if embedded is None or linked is None else (*embedded, *linked)


def _fetch_held(value: str, *, links: bool) -> Held | None:
    urls = fetched_by_server(value, links=links)
    if urls is None:
        return Held(
            SERVER_FETCH_RULE,
            "RSSや旧ウィジェットのブロック、または読み切れない長さの文字列が含まれます。サーバーがそのたびに外部の"
            "URLを取得する（取得先を今確かめられない）ため承認が必要です",
        )
    refused, _ = hosts_fetched(list(urls))
    if refused:
        return Held(
            SERVER_FETCH_RULE,
            f"サーバーが取得するURLの宛先「{'、'.join(refused[:5])}」が公開のホストではありません（内部ネットワーク・"
            "クラウドのメタデータなど）。サーバーから内部へのアクセスになるため承認が必要です",
        )
    return None


def content(shown_to: str, max_chars: int = 100_000, *, published_links: bool = False) -> ValueCheck:
    """Content WordPress renders (post content, a block widget): visible text (no active content),
    and nothing that makes the server fetch a URL other than from a public host. `published_links`:
    the content of a post, whose every link the server asks for when the post is published."""
    active = _active_content_held(shown_to)

    def held(value: str) -> Held | None:
        return active(value) or _fetch_held(value, links=published_links)

    return ValueCheck(
        f"{max_chars}文字以内のテキスト（スクリプトなど、WordPressが投稿者に許さないHTMLを含まない。"
        "RSS・旧ウィジェットのブロックを含まず、サーバーが取得するURLは公開ホストのみ）",
        _given(lambda v: len(v) <= max_chars and held(v) is None),
        samples=("<p>秋の新メニュー</p>", "https://www.youtube.com/watch?v=x"),
        held_because=held,
        fetches=lambda v: list(fetched_by_server(v, links=published_links) or ()),
    )


def fetched_url(max_chars: int = 2_048) -> ValueCheck:
    """A URL the agent or the server downloads (media import): its host must resolve publicly."""
    return ValueCheck(
        f"{max_chars}文字以内のURL", _given(lambda v: len(v) <= max_chars), fetches=lambda v: [v]
    )


def plain_text(max_chars: int = 1_000) -> ValueCheck:
    """Text shown as-is (a date format, alternative text): no HTML tags or quotes."""
    return ValueCheck(
        f"{max_chars}文字以内のHTMLを含まないテキスト",
        _given(lambda v: len(v) <= max_chars and not HTML_TAG.search(v) and not set(v) & set("<>\"'")),
        samples=("Y年n月j日", "H:i"),
    )


@lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


ANY = ValueCheck("任意の値", lambda value: True, samples=("1", "x"))
BARE = ValueCheck("値なしのフラグ", lambda value: value is None)
ID = ValueCheck("数字のID", _given(_DIGITS.fits), samples=("1",))
DATE = ValueCheck(
    "日時（YYYY-MM-DD HH:MM:SS）",
    _given(_DATE.fits),
    samples=("2030-01-01 09:00:00", "2020-05-01 10:00:00", "2024-12-24"),
)
SLUG = ValueCheck("半角英小文字・数字・-_ のスラッグ", _given(_SLUG.fits), samples=("news", "akismet"))
BOOLEAN = one_of("0", "1", describe_ja="0 または 1")
OPEN_CLOSED = one_of("open", "closed")
COLOUR = ValueCheck("#RRGGBB 形式の色", _given(_HEX_COLOUR.fits), samples=("#ffffff", "1e73be"))
LANGUAGE = ValueCheck("言語コード（ja、en_US など）", _given(_LANGUAGE.fits), samples=("ja", "en_US"))
TIMEZONE = ValueCheck(
    "タイムゾーン名（Asia/Tokyo など）または UTC+9 の形",
    _given(lambda v: v in _zones() or _UTC_OFFSET.fits(v)),
    samples=("Asia/Tokyo", "UTC+9"),
)
GMT_OFFSET = ValueCheck(
    "UTCからの時差（-12〜14）",
    _given(lambda v: _GMT_OFFSET.fits(v) and -12 <= float(v) <= 14),
    samples=("9", "-5.5"),
)
PAGE_TEMPLATE = ValueCheck(
    "default またはテーマのテンプレートファイル名",
    _given(lambda v: v == "default" or (_TEMPLATE.fits(v) and ".." not in v)),
    samples=("default", "template-full-width.php"),
)
HTTP_URL = ValueCheck(
    "http(s) のURL",
    _given(_HTTP_URL.fits),
    samples=("https://example.com/",),
)
EMAIL = ValueCheck(
    "メールアドレス",
    _given(_EMAIL.fits),
    samples=("hanako@example.com",),
)


def visible_url(shown_to: str) -> ValueCheck:
    """A link a visitor or an administrator is shown: http(s) only (or empty). Any other scheme —
    javascript:, data:, vbscript: — runs in the browser of whoever follows it, so it waits."""

    def held(value: str) -> Held | None:
        scheme = urlsplit(value.strip()).scheme.lower() if ":" in value else ""
        if scheme in {"http", "https", ""}:
            return None
        return Held(
            ACTIVE_CONTENT_RULE,
            f"「{scheme[:20]}:」で始まるURLが含まれます。{shown_to}がリンクを開くと、そのブラウザで"
            "スクリプトとして動くことがある形式のため承認が必要です",
        )

    return ValueCheck(
        "http(s) のURL（または空）",
        _given(lambda v: v == "" or _HTTP_URL.fits(v)),
        samples=("https://example.com/", ""),
        held_because=held,
    )


def _attachment_confirmed(value: str) -> Callable[[str | None], bool]:
    return lambda stdout: stdout is not None and stdout.split() == [value]


def _attachment_site_check(value: str) -> SiteCheck:
    return SiteCheck(
        argv=(
            "post",
            "list",
            f"--post__in={value}",
            "--post_type=attachment",
            "--post_status=inherit,private,publish",
            "--post_mime_type=image",
            "--format=ids",
        ),
        confirms=_attachment_confirmed(value),
        reason_ja=f"ID {value} がこのサイトの画像（メディア）であることを確認できませんでした",
    )


# A featured image, a logo: the ID of an image attachment of this site (checked on the site).
IMAGE_ID = ValueCheck(
    "このサイトの画像（メディア）のID", ID.accepts, site_check=_attachment_site_check, samples=("58", "59")
)
