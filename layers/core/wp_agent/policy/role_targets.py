"""The objects an editor's write names by ID, checked on the site against the role (issue 27).

The role layer (policy/roles.py) sees the command: `post update 12` is the `post` family, an editor's.
The argv does not show what post 12 is — a page, or a shop's order, a template, the site's global
styles — nor whether term 7 of `term meta update 7` is a category or a plugin's taxonomy. Before an
editor's write runs or waits for approval, the agent reads the type of each post and term it names (the
same policy-checked, site-scoped reads as the write's other site checks, on the write's own `--url`):
only posts, pages and media, and categories and tags, are the editor's. A type the site does not
confirm — another type, a read that failed, an ID that is not a number — is refused like any command
outside the role, so an editor cannot approve it either. Admins are not read for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.models.target import Role
from wp_agent.policy import PolicyCategory, PolicyDecision
from wp_agent.policy.effects.content import post_type_read
from wp_agent.policy.roles import CONTENT_POST_TYPES, CONTENT_TAXONOMIES, ROLE_RULE, role_refusal_ja
from wp_agent.policy.site_reads import Path, ReadsFirst, StateReader, not_read_yet

# Paths whose every argument is a post ID; paths whose first argument is one (after `patch`'s action).
_ALL_ARGS_ARE_POSTS = {("post", "update"), ("post", "delete")}
_FIRST_ARG_IS_THE_OBJECT = {("post", "meta"), ("post", "term"), ("term", "meta")}
# Options naming the post a write attaches to or copies.
_POST_OPTIONS = {
    ("post", "create"): "from-post",
    ("media", "import"): "post_id",
    ("comment", "create"): "comment_post_id",  # option names are read lower case
}


def _names_objects(path: Path) -> bool:
    return (
        path in _ALL_ARGS_ARE_POSTS
        or path in _POST_OPTIONS
        or (path[:2] in _FIRST_ARG_IS_THE_OBJECT and len(path) > 2)
    )


READS_FIRST = (
    ReadsFirst(
        "role_targets",
        "管理者以外の依頼で、指定した投稿・タームの種類（投稿・固定ページ・メディア、カテゴリー・タグだけが編集者のもの）",
        _names_objects,
    ),
)

# Categories and tags only: an ID of another taxonomy (or none) is not listed.
_TERM_READ = ("term", "list", *sorted(CONTENT_TAXONOMIES), "--field=term_id")


def guard_role_targets(decision: PolicyDecision, role: Role | None, read: StateReader) -> PolicyDecision:
    """`decision`, or a role refusal when a write of a requester below admin names a post or term
    that is not content. Reads not made yet leave the decision as it is (the turn reads and decides
    again); an admin, a read and a refusal are never read for."""
    if (
        decision.blocked
        or decision.category is PolicyCategory.READ
        or role is None
        or role.covers(Role.ADMIN)
    ):
        return decision
    cmd = ParsedCommand.from_argv(decision.argv)
    urls = cmd.url_tokens()  # the site the write goes to
    posts, terms = _addressed(cmd, decision.command_path)
    reads: list[tuple[str, list[str], Callable[[str, str | None], str | None]]]
    reads = [(post_id, [*post_type_read(post_id), *urls], _post_type) for post_id in posts]
    reads += [(term_id, [*_TERM_READ, f"--include={term_id}", *urls], _term_kind) for term_id in terms]
    for object_id, argv, kind in reads:
        if not (object_id.isascii() and object_id.isdigit()):
            return _refused(decision, role, f"ID「{object_id}」は数字ではないため、種類を確かめられません")
        answer = read(argv)
        if not_read_yet(read, argv):
            continue
        refusal = kind(object_id, answer)
        if refusal is not None:
            return _refused(decision, role, refusal)
    return decision


def _post_type(post_id: str, answer: str | None) -> str | None:
    if answer is None:
        return f"投稿（ID: {post_id}）の種類を確認できませんでした"
    if answer.strip() not in CONTENT_POST_TYPES:
        return f"ID {post_id} は投稿・固定ページ・メディアではありません（種類: {answer.strip()}）"
    return None


def _term_kind(term_id: str, answer: str | None) -> str | None:
    if answer is None:
        return f"ターム（ID: {term_id}）の種類を確認できませんでした"
    if answer.split() != [term_id]:
        return f"ID {term_id} はカテゴリー・タグではありません"
    return None


def _addressed(cmd: ParsedCommand, path: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The post IDs and term IDs a write names, in order, each once."""
    args = list(cmd.args_after(path))
    named: list[str] = []
    if path in _ALL_ARGS_ARE_POSTS:
        named = args
    elif path[:2] in _FIRST_ARG_IS_THE_OBJECT and len(path) > 2:
        named = args[1:2] if path[2] == "patch" else args[:1]
    elif path in _POST_OPTIONS:
        named = cmd.option_values(_POST_OPTIONS[path])
    unique = list(dict.fromkeys(named))
    return ([], unique) if path[:1] == ("term",) else (unique, [])


def _refused(decision: PolicyDecision, role: Role, detail: str) -> PolicyDecision:
    return dataclasses.replace(
        decision,
        category=PolicyCategory.BLOCKED,
        rule=ROLE_RULE,
        reason_ja=f"{role_refusal_ja(Role.ADMIN, role)}{detail}。",
    )
