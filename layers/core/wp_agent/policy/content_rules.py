"""Posts and comments: what a status hides or deletes, the internal post types a write may not reach, and
rendering that is not a read.

Statuses are compared the way WordPress stores them (`sanitize_key`), so a disguised spelling cannot slip past.
"""

from __future__ import annotations

import re

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.masking import folded
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.rule import Verdict, argument_rule

B = PolicyCategory.BLOCKED
D = PolicyCategory.DESTRUCTIVE


TRASHING_POST_STATUSES = frozenset({"trash", "auto-draft", "inherit"})  # auto-drafts are purged by cron


def sanitize_key(value: str) -> str:
    """WordPress sanitize_key(): lowercase, then drop everything but a-z 0-9 _ -."""
    return re.sub(r"[^a-z0-9_\-]", "", value.lower())


@argument_rule(
    match=("post update 5 --post_status=trash", "post update 5 --post_status=Auto-Draft"),
    not_match=("post update 5 --post_status=publish", "post update 5 --post_title=trash"),
    paths=("post update",),
)
def post_trash_status(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """Trash by update (WordPress sanitize_key()s the status), and auto-draft, which cron deletes."""
    for value in cmd.option_values("post_status"):
        if sanitize_key(value) in TRASHING_POST_STATUSES:
            return Verdict(
                D,
                "confirm.post.trash_status",
                "投稿をゴミ箱へ移動（または非表示・自動削除対象に）します。承認が必要です",
                f"--post_status={value}",
            )
    return None


@argument_rule(
    match=("comment update 3 --comment_approved=spam", "comment update 3 --comment_approved=Trash"),
    not_match=("comment update 3 --comment_approved=1", "comment update 3 --comment_content=spam"),
    paths=("comment update",),
)
def comment_trash_status(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """A comment moved to the trash or spam by update (the status is sanitize_key()d too)."""
    for value in cmd.option_values("comment_approved"):
        if sanitize_key(value) in {"trash", "spam"}:
            return Verdict(
                D,
                "confirm.comment.trash_status",
                "コメントをゴミ箱またはスパムへ移動します。承認が必要です",
                f"--comment_approved={value}",
            )
    return None


@argument_rule(
    match=("post block export 5 --format=html", "post block export 5 --format=HTML"),
    not_match=("post block export 5 --format=json", "post block export 5"),
    paths=("post block export",),
)
def rendering_export(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """Exporting blocks as HTML renders them (render_block): not a read (see `post block render`)."""
    if not any(v.lower() == "html" for v in cmd.option_values("format")):
        return None
    return Verdict(
        B,
        "blocked.render_read",
        "HTML形式の書き出し（--format=html）はブロックを描画し、動的ブロックやプラグインのコードが保存や外部への取得を"
        "行うことがあるため、読み取りとして実行できません。構造は --format=json で確認できます",
        "--format=html",
    )


# Post types WordPress acts on when such a post is saved or published: a published
# customize_changeset applies its settings (tried on WordPress 6.1: `post create
# --post_type=customize_changeset --post_status=publish --post_content='{"blogname":…}'` renamed the
# site without the approval an option change needs), user_request starts privacy exports/erasures,
# scheduled-action runs hooks, templates and global styles change every page.
_INTERNAL_POST_TYPES = frozenset(
    {
        "customize_changeset",
        "user_request",
        "scheduled-action",
        "revision",
        "oembed_cache",
        "custom_css",
        "wp_global_styles",
        "wp_template",
        "wp_template_part",
        "wp_navigation",
    }
)


INTERNAL_POST_TYPES = _INTERNAL_POST_TYPES  # for the agent's check of posts addressed by ID


@argument_rule(
    match=(
        "post create --post_type=customize_changeset --post_status=publish --post_content='{}'",
        "post update 8 --post_type=user_request",
        "post create --post_type=CUSTOM_CSS --post_content=x",
    ),
    not_match=(
        "post create --post_type=page --post_title=会社概要",
        "post list --post_type=customize_changeset --format=ids",
    ),
    paths=("post create", "post update"),
)
def internal_post_types(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    internal = next((t for t in cmd.option_values("post_type") if folded(t) in _INTERNAL_POST_TYPES), None)
    if internal is None:
        return None
    return Verdict(
        B,
        "blocked.internal_post_type",
        f"WordPressが内部で使う投稿タイプ（{internal}）は作成・変更できません（保存時に設定変更などが実行されるため）",
        f"--post_type={internal}",
    )
