"""What an approval summary may read of the site to word itself, declared per summary (its row lists them,
`wp-agent check --explain` shows them): each fact in words and the first words of the reads that ask it
(the command's own `--url` follows). A summary that asks anything else is stopped — a fault of ours, so the
approval fails closed (approval_steps) — as `decide` asks a site-reading step only about the commands whose
row lists it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from wp_agent.policy.command_table import ALLOWED_COMMANDS
from wp_agent.policy.site_reads import StateReader


@dataclass(frozen=True)
class SummaryRead:
    about_ja: str
    starts: frozenset[tuple[str, ...]]  # the first words of the reads that ask it

    def asks(self, argv: Iterable[str]) -> bool:
        words = tuple(argv)
        return any(words[: len(start)] == start for start in self.starts)


def _read(about_ja: str, *starts: str) -> SummaryRead:
    return SummaryRead(about_ja, frozenset(tuple(start.split()) for start in starts))


class UndeclaredSummaryReadError(RuntimeError):
    """A summary asked the site something its row does not list."""


def limited_to(read: StateReader | None, declared: Iterable[SummaryRead]) -> StateReader | None:
    """`read`, answering only the reads `declared` lists."""
    if read is None:
        return None
    allowed = tuple(declared)

    def declared_read(argv: list[str]) -> str | None:
        if not any(fact.asks(argv) for fact in allowed):
            raise UndeclaredSummaryReadError(f"a summary asked an undeclared read: {' '.join(argv[:3])}")
        return read(argv)

    return declared_read


USER = _read("ユーザーのログイン名・メールアドレス・現在の権限", "user get")
DEFAULT_ROLE = _read("新しいユーザーに付く既定の権限（default_role）", "option get default_role")
NETWORK = _read("マルチサイトかどうか", "core is-installed --network")
NETWORK_SITES = _read("ネットワークのサイト一覧", "site list")
USERS_POSTS = _read("ユーザーが書いた投稿の数", "post list")
POSTS = _read("投稿の種類と状態（ゴミ箱にあるかどうか）", "post list")
COMMENTS = _read("コメントの状態（ゴミ箱・スパムにあるかどうか）", "comment get")
MENU_ITEMS = _read("メニュー項目の種類", "post list")
MENUS = _read("メニューの一覧（名前と項目数）", "menu list")
META_KEYS = SummaryRead(
    "そのオブジェクトにあるメタキーの一覧",
    frozenset((*path[:2], "list") for path in ALLOWED_COMMANDS if path[1:] == ("meta", "delete")),
)
OPTION_VALUE = _read("設定の現在の値（秘密の値を除く）", "option get")
OPTION_NAMES = _read("似た名前の設定があるかどうか", "option list")
ACTIVE_THEME = _read("有効なテーマ", "theme list --status=active")
LANGUAGE = _read("サイトの現在の言語（WPLANG）", "option get WPLANG")
CORE_VERSION = _read("WordPress の現在のバージョン", "core version")
SAME_ADDRESS_PAGE = _read("メインサイトに同じアドレスの固定ページがあるかどうか", "post list")
