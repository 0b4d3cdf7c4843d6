"""Roles: which member of a target may ask for which commands (issue 27), a layer on the policy.

One mapping, `LEAST_ROLE`: a command family (a prefix of the command table's paths) → the least role
whose members may ask for its writes. A read (what the policy decided `read`: it changes nothing)
needs a viewer. A command of no family here (a path an FR-5.2 allow rule added) needs an admin,
reads included: unknown is closed. The layer only ever tightens: `apply_role` turns a decision the
role does not cover into `blocked`, and leaves every other decision exactly as it was. Network-level
commands stay with network administrators (policy/site_scope.py), whatever the role.

`ROLE_EXAMPLES` are commands each role must and must not get through; tests/unit/test_roles.py runs
every one through the real policy, and `examples_checked` (run at import) that each names a family.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.models.target import Role
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.command_policy import PolicyDecision

V, E, A = Role.VIEWER, Role.EDITOR, Role.ADMIN
ROLE_RULE = "role.insufficient"

# Content is the editor's: posts, pages (post_type=page) and media (attachments, `media`), their meta
# and terms (within the policy's rules), categories and tags, comments, menus. The rest of the site —
# plugins, themes and widgets, users and roles, options, sites and the network, maintenance — is the
# admin's. A family reads as the longest prefix that matches: `post meta` is `post`'s. Within the
# editor's families a write stays the editor's only on content types: a post type other than posts,
# pages and attachments (a shop's products or orders, a plugin's records) or a taxonomy other than
# categories and tags needs an admin (`_content_only`); the posts and terms a write names by ID are
# read on the site first (policy/role_targets.py).
LEAST_ROLE: dict[tuple[str, ...], Role] = {
    ("post",): E,
    ("media",): E,
    ("term",): E,
    ("comment",): E,
    ("menu",): E,
    # Writes the editor's site reads (policy/role_targets.py) do not know how to check: a block or a
    # revision names its post in another place than the post writes do; generated test content.
    ("post", "block"): A,
    ("post", "revision"): A,
    ("post", "generate"): A,
    ("comment", "generate"): A,
    ("term", "generate"): A,
    ("term", "migrate"): A,
    ("term", "prune"): A,
    ("media", "replace"): A,
    ("media", "prune"): A,
    ("font",): A,
    ("post-type",): A,
    ("taxonomy",): A,
    ("theme",): A,
    ("sidebar",): A,
    ("widget",): A,
    ("plugin",): A,
    ("user",): A,
    ("role",): A,
    ("cap",): A,
    ("super-admin",): A,
    ("option",): A,
    ("site",): A,
    ("cache",): A,
    ("transient",): A,
    ("rewrite",): A,
    ("cron",): A,
    ("core",): A,
    ("language",): A,
    ("maintenance-mode",): A,
    ("search-replace",): A,
    ("help",): A,
    ("ability",): A,  # the Abilities registry (only its reads are allowed: a viewer's)
    ("db",): A,  # (only its reads are allowed)
    ("config",): A,
    ("cli",): A,
    ("network",): A,
    ("embed",): A,
}


@dataclass(frozen=True)
class RoleExample:
    role: Role
    allowed: tuple[str, ...]  # commands this role gets through (to run or to approve)
    refused: tuple[str, ...]  # commands refused for this role with `role.insufficient`


ROLE_EXAMPLES: tuple[RoleExample, ...] = (
    RoleExample(
        V,
        allowed=(
            "post list --post_status=draft --format=json",
            "post get 45 --format=json",
            "post list --post_type=page --format=ids",
            "comment list --status=hold --format=json",
            "plugin list --skip-update-check --format=json",
            "user list --fields=ID,user_login,roles --format=json",
            "option get blogname",
            "help post",
        ),
        refused=(
            "post create --post_title=x --post_status=draft",
            "post update 45 --post_title=x",
            "post delete 45",
            "post meta update 45 subtitle x",
            "term create category お知らせ",
            "comment approve 3",
            "menu create メインメニュー",
            "plugin list --format=json",  # stores the update check: a write
            "cache flush",
        ),
    ),
    RoleExample(
        E,
        allowed=(
            "post create --post_title='秋の新メニュー' --post_status=draft",
            "post update 45 --post_status=publish",
            "post create --post_type=page --post_title=会社概要",
            "post delete 45",
            "post meta update 45 subtitle 秋の特集",
            "post term add 45 category お知らせ",
            "media import https://example.com/images/autumn.jpg --post_id=45 --featured_image",
            "term create category お知らせ",
            "comment approve 3",
            "menu item add-post 2 45",
            "plugin is-active akismet",
            "post term set 45 post_tag 秋",
            "term update category 3 --name=お知らせ",
        ),
        refused=(
            "post create --post_type=product --post_title=x",
            "post update 45 --post_type=shop_order",
            "post create --post_type=Page --post_title=x",
            "term create product_cat 靴",
            "post term add 45 product_tag 秋",
            "plugin activate akismet",
            "plugin install akismet",
            "plugin update akismet",
            "theme activate twentytwentythree",
            "theme mod set background_color ffffff",
            "widget add text sidebar-1",
            "user update 3 --display_name=x",
            "user create eve eve@example.com --role=author",
            "user meta update 3 nickname x",
            "option update posts_per_page 10",
            "site create --slug=tokyo --title=東京支店",
            "cache flush",
            "rewrite flush",
            "search-replace http://a https://b wp_posts --include-columns=post_content",
        ),
    ),
    RoleExample(
        A,
        allowed=(
            "plugin activate akismet",
            "user update 3 --display_name=x",
            "option update posts_per_page 10",
            "theme activate twentytwentythree",
            "cache flush",
            "post update 45 --post_title=x",
        ),
        refused=(),
    ),
)


def family_of(command_path: tuple[str, ...]) -> tuple[str, ...] | None:
    """The longest family of `LEAST_ROLE` that prefixes the canonical command path, else None."""
    for length in range(len(command_path), 0, -1):
        if command_path[:length] in LEAST_ROLE:
            return command_path[:length]
    return None


CONTENT_POST_TYPES = frozenset({"post", "page", "attachment"})
CONTENT_TAXONOMIES = frozenset({"category", "post_tag"})


def _content_only(cmd: ParsedCommand, path: tuple[str, ...]) -> bool:
    """Whether a write of an editor's family names only content types: the post types it gives and
    the taxonomy it writes (exact keys: WordPress keys are lower case, anything else is not ours)."""
    types = [t for value in cmd.option_values("post_type") for t in value.split(",")]
    if any(t not in CONTENT_POST_TYPES for t in types):
        return False
    args = cmd.args_after(path)
    if path[:2] == ("post", "term"):
        return len(args) > 1 and args[1] in CONTENT_TAXONOMIES
    if path[:1] == ("term",) and path[:2] != ("term", "meta"):
        return bool(args) and all(
            a in CONTENT_TAXONOMIES for a in (args if path == ("term", "recount") else args[:1])
        )
    return True


def role_needed(decision: PolicyDecision) -> Role:
    """The least role that may ask for this decided command (a read: a viewer; unknown: an admin)."""
    family = family_of(decision.command_path)
    if family is None:
        return A
    if decision.category is PolicyCategory.READ:
        return V
    least = LEAST_ROLE[family]
    if least is E and not _content_only(ParsedCommand.from_argv(decision.argv), decision.command_path):
        return A
    return least


@dataclass(frozen=True)
class RoleSummary:
    """What a role may ask for (`wp-agent check --role`): the families whose writes it may ask for
    (destructive ones still wait for approval), and those it may only read."""

    role: Role
    writes: tuple[str, ...]
    read_only: tuple[str, ...]

    @classmethod
    def of(cls, role: Role) -> RoleSummary:
        families = sorted(LEAST_ROLE.items())
        writes = tuple(" ".join(f) for f, least in families if role.covers(least))
        read_only = tuple(" ".join(f) for f, least in families if not role.covers(least))
        return cls(role, writes, read_only)

    def as_json(self) -> dict[str, object]:
        return {"role": self.role.value, "writes": list(self.writes), "readOnly": list(self.read_only)}


def role_refusal_ja(needed: Role, role: Role | None) -> str:
    have = (
        f"あなたの権限は{role.label_ja}です。"
        if role is not None
        else "あなたはこのサイトのメンバーではありません。"
    )
    return f"この操作には{needed.label_ja}の権限が必要です。{have}"


def apply_role(decision: PolicyDecision, role: Role | None) -> PolicyDecision:
    """The decision for a requester of `role` (None: not a member): blocked with `role.insufficient`
    when the role does not cover the command, otherwise unchanged. Never loosens a decision."""
    if decision.blocked:
        return decision
    needed = role_needed(decision)
    if role is not None and role.covers(needed):
        return decision
    return dataclasses.replace(
        decision,
        category=PolicyCategory.BLOCKED,
        rule=ROLE_RULE,
        reason_ja=role_refusal_ja(needed, role),
        pattern=" ".join(family_of(decision.command_path) or decision.command_path),
    )


def examples_checked() -> None:
    """Every example names a family of the mapping (else it would only show the fail-closed default)."""
    for example in ROLE_EXAMPLES:
        if not example.allowed and not example.refused:
            raise ValueError(f"role {example.role} has no examples")
        for command in (*example.allowed, *example.refused):
            words = tuple(w for w in command.split() if not w.startswith("-"))
            if family_of(words) is None:
                raise ValueError(f"role example {command!r} names no family of LEAST_ROLE")


examples_checked()
