"""`search-replace` over the database: only tables named plainly, only the options WP-CLI documents for it."""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.global_flags import GLOBAL_OPTIONS
from wp_agent.policy.rule import Verdict, argument_rule
from wp_agent.whole_values import whole

B = PolicyCategory.BLOCKED


SEARCH_REPLACE_OPTIONS = frozenset(
    {
        "dry-run",
        "precise",
        "no-precise",
        "recurse-objects",
        "no-recurse-objects",
        "skip-columns",
        "include-columns",
        "skip-tables",
        "network",
        "format",
        "report",
        "no-report",
        "report-changed-only",
        "regex",
        "regex-flags",
        "regex-delimiter",
        "regex-limit",
        "verbose",
    }
)


_TABLE = whole(r"[A-Za-z0-9_$]+", "wp_posts", "wp_2_posts")


@argument_rule(
    match=("search-replace a b --all-tables", "search-replace a b --all-tables-with-prefix"),
    not_match=("search-replace a b wp_posts", "search-replace a b --dry-run"),
    paths=("search-replace",),
)
def all_tables(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    for option in cmd.options:  # (`db size --all-tables` only lists: not this rule's command)
        if option.name.startswith("all-tables"):
            return Verdict(
                B,
                "blocked.search_replace_all_tables",
                "全テーブルを対象にする置換（--all-tables）は破壊の恐れがあるため実行できません",
                f"--{option.name}",
            )
    return None


@argument_rule(
    match=(
        "search-replace a b --export=/tmp/x.sql",
        "search-replace a b --log=/tmp/x",
        "search-replace a b 'wp_*'",
    ),
    not_match=("search-replace a b --dry-run --precise", "search-replace a b wp_posts wp_postmeta"),
    paths=("search-replace",),
)
def search_replace(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """Only known-safe options: --log writes files (or dumps rows), --callback calls PHP functions,
    --export dumps SQL; table wildcards reach beyond WordPress's tables."""
    for option in cmd.options:
        if option.name.startswith("export"):
            return Verdict(
                B,
                "blocked.data_export",
                "置換結果のSQL書き出し（--export）は情報漏洩の恐れがあるため実行できません",
                "--export",
            )
        if option.name not in SEARCH_REPLACE_OPTIONS and option.name not in GLOBAL_OPTIONS:
            return Verdict(
                B,
                "blocked.search_replace_option",
                f"search-replace のオプション --{option.name} は使用できません（ファイル書き込み・コード実行・情報漏洩の恐れ）",
                f"--{option.name}",
            )
    for table in cmd.args_after(path)[2:]:
        if not _TABLE.fits(table):
            return Verdict(
                B,
                "blocked.search_replace_tables",
                f"テーブル名にはワイルドカード等を使えません: {table}",
                table,
            )
    return None
