"""What the approval summaries share: the words every one may use (what a deletion loses among them) and how
a read's JSON is taken."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.site_reads import StateReader

# A summary: (parsed command, its path, its arguments, the site's reads) -> (summary, impact), or None when it
# has nothing to say of this command (the next is tried).
Handler = Callable[[ParsedCommand, tuple[str, ...], list[str], StateReader | None], tuple[str, str] | None]

IRREVERSIBLE = "元に戻せません。"

# What undo can do for a post deleted for good (`post delete --force`, or from the trash): make it
# again from its before-image. WordPress deleted its comments and revisions with it (tried on the
# sandbox), and its ID is kept only when still free.
POST_RECREATED_ONLY = (
    "元に戻す操作（undo）では記録した本文・カスタムフィールド・カテゴリ・タグから投稿を作り直すだけで、"
    "コメントとリビジョンは戻らず、IDが変わる場合があります。"
)

POST_STATUSES = "publish,future,draft,pending,private,trash,inherit,auto-draft"

OBJECT_NAMES = {
    "post": "投稿",
    "comment": "コメント",
    "user": "ユーザー",
    "term": "カテゴリ・タグ",
    "menu": "メニュー",
    "site": "サイト",
    "plugin": "プラグイン",
    "theme": "テーマ",
    "option": "設定",
}

IRREVERSIBLE_PATHS = {
    ("term", "delete"): "削除したカテゴリ・タグは元に戻せません。記事との関連付けも外れます。",
    ("plugin", "delete"): "プラグインのファイルが削除されます。" + IRREVERSIBLE,
    ("plugin", "uninstall"): "プラグインのファイルと設定データが削除されます。" + IRREVERSIBLE,
    ("theme", "delete"): "テーマのファイルが削除されます。" + IRREVERSIBLE,
    ("site", "delete"): "サイトの全ての投稿・設定・ユーザーとの関連付けが削除されます。" + IRREVERSIBLE,
    ("menu", "delete"): "メニューと全てのメニュー項目が削除されます。" + IRREVERSIBLE,
    ("comment", "meta", "delete"): "削除したコメントメタの値は" + IRREVERSIBLE,
}

# Deleted, but kept in the before-image: `wp-agent undo` puts the value back.
DELETES: dict[tuple[str, ...], str] = {
    ("post", "meta", "delete"): "カスタムフィールドの値が削除されます。",
    ("term", "meta", "delete"): "タームメタの値が削除されます。",
    ("user", "meta", "delete"): "ユーザーメタの値が削除されます。",
}


def listed(values: list[str]) -> str:
    shown = values[:10]
    rest = f" ほか{len(values) - len(shown)}件" if len(values) > len(shown) else ""
    return "、".join(shown) + rest


def read_json(read: StateReader | None, argv: list[str]) -> Any:
    """Parsed JSON of a read, or None (no reader, the read failed, or it was not JSON)."""
    stdout = read(argv) if read is not None else None
    if stdout is None:
        return None
    try:
        return json.loads(stdout)
    except ValueError:
        return None
