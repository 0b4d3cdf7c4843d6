"""Posts addressed by ID whose type decides what a change does, checked on the site before running.

`post update <id> --post_status=publish` (or `post create --from-post=<id>`) looks like ordinary publishing, but when <id> is a draft
`customize_changeset` WordPress applies the changeset's settings as the user named inside it (tried on
WordPress 6.1: the site's name changed, as the customizer would change any option or theme setting).
The argv does not show the type, so the policy cannot; the agent reads it first with a policy-checked,
site-scoped read and refuses the update of any internal post type. A read that fails refuses too.

The same reads confirm what a write's declared effect leaves to the site (policy/effects): a
featured image's ID must be an image of this site, and before `media regenerate` the attachment's
stored file names must stay in its upload folder. Unconfirmed, the write waits for approval (or is
refused, where the declaration says so). Every such read carries the write's own `--url`: on a
network, post 8 of one site is not post 8 of another (a check read on the session's site while the
write named another site would have confirmed the wrong post).
"""

from __future__ import annotations

import dataclasses

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy import PolicyCategory, PolicyDecision
from wp_agent.policy.content_rules import INTERNAL_POST_TYPES
from wp_agent.policy.effects.content import ALL_POST_STATUSES
from wp_agent.policy.effects.table import WRITE_EFFECTS, site_checks
from wp_agent.policy.effects.values import AbsentPost
from wp_agent.policy.site_reads import Path, ReadsFirst, StateReader, not_read_yet

_CHECKED_PATHS = {("post", "update"), ("post", "create")}
_MENU_ITEM_DELETE = ("menu", "item", "delete")
RULE = "blocked.internal_post_target"
MENU_ITEM_RULE = "blocked.not_a_menu_item"


def _effect_reads_site(path: Path) -> bool:
    effect = WRITE_EFFECTS.get(path)
    return effect is not None and effect.reads_site


READS_FIRST = (
    ReadsFirst(
        "post_targets",
        "指定した投稿の種類（WordPressが内部で使う種類、カスタマイザーの変更セットなどでないこと）",
        lambda path: path in _CHECKED_PATHS,
    ),
    ReadsFirst(
        "post_targets",
        "削除するIDがこのサイトのメニュー項目であること",
        lambda path: path == _MENU_ITEM_DELETE,
    ),
    ReadsFirst(
        "post_targets", "承認なしで変更できる値（画像のIDなど）をこのサイトで確認", _effect_reads_site
    ),
)


def guard_post_targets(
    decision: PolicyDecision, read: StateReader, *, alone_in_reply: bool = True
) -> PolicyDecision:
    """`decision`, or a block when an addressed post is of an internal type (or cannot be checked);
    then the site checks of the write's declared effect. Every read is asked at once, so one round
    of reads answers them all (`read` gives None for a read not made yet: unconfirmed).
    `alone_in_reply`: no other call of the model's reply may change the site while this one runs."""
    targets = _internal_targets(decision, read)
    menu_items = _menu_items(decision, read)
    confirmed = _confirmed_on_site(decision, read, alone_in_reply)
    return next((d for d in (targets, menu_items) if d.blocked), confirmed)


def _menu_items(decision: PolicyDecision, read: StateReader) -> PolicyDecision:
    """`menu item delete <id>` deletes whatever post has that ID (a published post, an attachment and
    its files: WP-CLI does not check the type), so every ID must be a menu item of the command's site."""
    if decision.blocked or decision.command_path != _MENU_ITEM_DELETE or decision.reading is None:
        return decision
    ids = list(decision.reading.objects())
    parsed = ParsedCommand.from_argv(decision.argv)
    stdout = read(
        ["post", "list", f"--post__in={','.join(ids)}", "--post_type=nav_menu_item", "--post_status=any",
         "--format=ids", *parsed.url_tokens()]
    )  # fmt: skip
    found = None if stdout is None else stdout.split()
    if found is None:
        return _blocked(
            decision, "メニュー項目かどうかを確認できなかったため、削除を実行しません", MENU_ITEM_RULE
        )
    others = [i for i in ids if i not in found]
    if others:
        return _blocked(
            decision,
            f"ID {', '.join(others)} はこのサイトのメニュー項目ではありません（menu item delete は同じIDの投稿やメディアを"
            "種類を確かめずに削除するため実行しません）。メニュー項目のIDは menu item list <メニュー> で確認できます",
            MENU_ITEM_RULE,
        )
    return decision


def _confirmed_on_site(decision: PolicyDecision, read: StateReader, alone_in_reply: bool) -> PolicyDecision:
    if decision.category is not PolicyCategory.WRITE:
        return decision  # blocked, or already waiting for approval
    checks = site_checks(decision.argv, decision.command_path)
    answers = [read(list(check.argv)) for check in checks]
    for check, answer in zip(checks, answers, strict=True):
        # A read not made yet is unknown, whatever None would mean from a read that failed (a post
        # the site cannot find): the write runs without approval only on an answer.
        known = not not_read_yet(read, list(check.argv))
        if known and check.confirms(answer):
            continue
        reason_ja = check.reason_ja
        if known and answer is None and check.absent is not None:
            if _stays_absent(check.absent, decision, read, alone_in_reply):
                continue  # WP-CLI refuses the post it cannot find, and none can take its ID first
            reason_ja = _absent_reason(check.absent.post_id)
        if check.refuse:
            return dataclasses.replace(
                decision,
                category=PolicyCategory.BLOCKED,
                rule="blocked.site_check",
                reason_ja=reason_ja,
            )
        return dataclasses.replace(
            decision,
            category=PolicyCategory.DESTRUCTIVE,
            rule="confirm.site_check",
            reason_ja=f"{reason_ja}。承認が必要です",
        )
    return decision


def newest_post_read(cmd: ParsedCommand) -> list[str]:
    """The ID of a post the site has (the newest it lists, on the command's site). The database gives
    each new post a larger ID than any it holds, so a missing ID below it stays missing (only an
    explicit `--import_id` could fill it, and the policy holds that)."""
    return [
        "post", "list", "--post_type=any", "--post_status=any", "--orderby=ID", "--order=DESC",
        "--posts_per_page=1", "--format=ids", *cmd.url_tokens(),
    ]  # fmt: skip


def _stays_absent(
    absent: AbsentPost, decision: PolicyDecision, read: StateReader, alone_in_reply: bool
) -> bool:
    """Whether no post can take `absent`'s ID before the write reaches it: the ID lies below one the
    site has given already, or nothing runs on the site before the write looks the ID up (it is the
    reply's only change and the command names it first). A post created by someone else at that very
    moment is the site's own doing, as for any write."""
    if absent.first_in_command and alone_in_reply:
        return True
    newest = read(newest_post_read(ParsedCommand.from_argv(decision.argv)))
    given = (newest or "").strip()
    return given.isdigit() and int(absent.post_id) < int(given)


def _absent_reason(post_id: str) -> str:
    return (
        f"ID {post_id} の投稿はまだありません。この変更がそのIDに届く前に別の変更（更新で保存されるリビジョンなど）が"
        "このIDで投稿を作ると、その投稿が変更されるため"
    )


def _internal_targets(decision: PolicyDecision, read: StateReader) -> PolicyDecision:
    if decision.blocked or decision.command_path not in _CHECKED_PATHS:
        return decision
    parsed = ParsedCommand.from_argv(decision.argv)
    # `post create --from-post=<id>` copies the post, type included (a changeset copy published at
    # once applied its settings on the real site, like an update of the original).
    addressed = parsed.option_values("from-post") if decision.command_path == ("post", "create") else []
    if decision.command_path == ("post", "update"):
        addressed = list(parsed.args_after(decision.command_path))
    ids = [a for a in addressed if a.isascii() and a.isdigit()]
    if addressed and len(ids) != len(addressed):
        return _blocked(decision, "投稿IDは数字で指定してください")
    if not ids:
        return decision
    stdout = read(
        [
            "post", "list", f"--post__in={','.join(ids)}", f"--post_type={','.join(sorted(INTERNAL_POST_TYPES))}",
            f"--post_status={ALL_POST_STATUSES}", "--format=ids",
            *parsed.url_tokens(),  # the site the write goes to
        ]
    )  # fmt: skip
    found = None if stdout is None else stdout.split()
    if found is None or not all(token.isdigit() for token in found):
        return _blocked(decision, "対象の投稿の種類を確認できなかったため、更新を実行しません")
    if found:
        return _blocked(
            decision,
            f"投稿（ID: {', '.join(found)}）はWordPressが内部で使う種類（カスタマイザーの変更セットなど）のため変更できません"
            "（公開すると設定の変更などが実行されるため）",
        )
    return decision


def _blocked(decision: PolicyDecision, reason: str, rule: str = RULE) -> PolicyDecision:
    return dataclasses.replace(decision, category=PolicyCategory.BLOCKED, rule=rule, reason_ja=reason)
