"""Summary conformance (issue 37): what the person approves is what runs.

A destructive command is decided as the agent decides it (the policy, then the checks it reads the
site for), its approval text is computed on the real site (approval_summary.describe, reading the
site through policy-checked reads), it is approved — its argv runs exactly — and the real change
(database rows and files before and after) is compared with what the text claimed:

- objects: every post, comment, user, option, term or site that was deleted, trashed or changed is
  named in the text (the rows that go with an object — its meta, revisions, comments — are told as a
  class, e.g. 「コメントとリビジョンは戻らず」);
- kind: a `menu item delete` deletes menu items only;
- site: a change on another site of the network is on the site the text names;
- permanence: a row gone for good is said to be (「完全に削除」 or 「元に戻せません」), a post or
  comment moved to the trash is said to go there, files removed are said to go;
- nothing claimed that did not happen: a command that ended well and changed nothing was not
  described as deleting.

Commands come from every destructive content path × the spellings a red team used: two IDs, the
same ID twice, IDs written otherwise (`022`, `1e1`, `+5`), repeated flags, another site's `--url`, an
ID with `--slug`, objects of other types, items already in the trash, side flags. What the policy
refuses does not run (counted by rule).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field
from subprocess import CompletedProcess
from typing import Any

from tests.fakes.wordpress import TestWordPress
from tests.integration.conformance.site_diff import (
    RowChange,
    SiteBaseline,
    SiteChange,
    table_family,
)
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy import CommandPolicy, PolicyCategory, PolicyDecision
from wp_agent.policy.approval_summary import IRREVERSIBLE, describe
from wp_agent.policy.post_targets import guard_post_targets

SITE_PATHS = {1: "/", 2: "/en/", 3: "/shop/"}
PERMANENT_WORDS = ("完全に削除", IRREVERSIBLE)
# Options WordPress itself rewrites on any request (caches and counters), never an object of a delete.
_HOUSEKEEPING_OPTIONS = ("_transient_", "_site_transient_", "cron", "rewrite_rules")


@dataclass
class Mismatch:
    command: str
    said: str
    problems: list[str]

    def __str__(self) -> str:
        return f"wp {self.command}\n    said: {self.said}\n    " + "\n    ".join(self.problems)


@dataclass
class ApprovalTally:
    decisions: Counter[str] = field(default_factory=Counter)
    refused_by: Counter[str] = field(default_factory=Counter)
    approved: int = 0  # held, approved and run on the sandbox
    changed: int = 0
    failed: int = 0  # WP-CLI exited non-zero after approval
    paths: Counter[str] = field(default_factory=Counter)
    mismatches: list[Mismatch] = field(default_factory=list)
    seconds: float = 0.0

    def lines(self) -> list[str]:
        return [
            f"commands generated: {sum(self.decisions.values())}",
            "decisions: " + ", ".join(f"{k}={v}" for k, v in sorted(self.decisions.items())),
            "refused by: " + ", ".join(f"{k}={v}" for k, v in self.refused_by.most_common()),
            f"approved and run on the sandbox: {self.approved} (site changed: {self.changed}; WP-CLI failed: {self.failed})",
            "paths approved: " + ", ".join(f"{k}={v}" for k, v in sorted(self.paths.items())),
            f"mismatches: {len(self.mismatches)}",
            f"seconds: {self.seconds:.1f}",
        ]


class ApprovalConformance:
    def __init__(self, wordpress: TestWordPress, policy: CommandPolicy | None = None) -> None:
        self.wordpress = wordpress
        self.policy = policy or CommandPolicy()
        wordpress.reset()
        self.baseline = SiteBaseline(wordpress)
        self.tally = ApprovalTally()
        facts = wordpress.facts
        self.home = str(facts["home"]).rstrip("/")
        self.pools = _pools(facts)

    # -- one command ------------------------------------------------------------------------------

    def run(self, command: str) -> Mismatch | None:
        started = time.monotonic()
        try:
            decision = guard_post_targets(self.policy.classify(command), self._read)
            self.tally.decisions[decision.category.value] += 1
            if decision.blocked:
                self.tally.refused_by[decision.rule] += 1
                return None
            if decision.category is not PolicyCategory.DESTRUCTIVE:
                return None
            summary, impact = describe(decision, self._read)
            said = f"{summary} {impact}"
            self.tally.approved += 1
            self.tally.paths[" ".join(decision.command_path)] += 1
            done = self.wordpress.wp(*decision.argv)  # approved: exactly this argv runs
            if done.returncode != 0:
                self.tally.failed += 1
            change = self.baseline.changes()
            if not change.empty:
                self.tally.changed += 1
            problems = self.problems(decision, said, change, done)
            self.baseline.restore(change)
            if problems:
                found = Mismatch(command, said, problems)
                self.tally.mismatches.append(found)
                return found
            return None
        finally:
            self.tally.seconds += time.monotonic() - started

    def problems(
        self, decision: PolicyDecision, said: str, change: SiteChange, done: CompletedProcess[str]
    ) -> list[str]:
        path = decision.command_path
        cmd = ParsedCommand.from_argv(decision.argv)
        blog = self._blog_of(cmd)
        found: list[str] = []
        for row in change.rows:
            if self._primary(path, row):
                found += self._row_problems(path, cmd, blog, said, row)
        for table in change.dropped_tables:
            where, _family = table_family(table)
            if where not in (None, blog) and SITE_PATHS.get(where or 1, "") not in said:
                found.append(f"table {table} dropped, its site is not named")
        gone_files = [f for f in change.files if f != "canary" and "/cache/" not in f"/{f}"]
        if gone_files and "ファイル" not in said:
            found.append(f"files changed without the text saying so: {gone_files[:3]}")
        claimed = any(w in said for w in ("削除します", "ゴミ箱へ移動", "完全に削除"))
        disclaimed = any(
            w in said
            for w in (
                "削除されません",
                "変更はありません",
                "変更されるものはありません",
                "見つかりません",
                "確認できませんでした",
            )
        )
        if done.returncode == 0 and change.empty and claimed and not disclaimed:
            found.append("the text says it deletes; WP-CLI ended well and nothing changed")
        return found

    def _row_problems(
        self, path: tuple[str, ...], cmd: ParsedCommand, blog: int, said: str, row: RowChange
    ) -> list[str]:
        """What the text fails to say about one changed row that is an object of the command."""
        found: list[str] = []
        where, family = table_family(row.table)
        name = self._name(family, row)
        if family in ("usermeta", "postmeta") and path[1] == "meta":
            key = row.row.get("meta_key", "")
            if key not in said:
                found.append(f"{row.table}: {key} deleted, the key is not named in the text")
            return found
        if family == "usermeta":  # named by login (or their ID)
            user_id = row.row.get("user_id", "")
            login = self._login(user_id)
            if login not in said and f"ID {user_id}" not in said and f"（{user_id}）" not in said:
                found.append(f"the role of user {login} (ID {user_id}) changed, not named in the text")
            return found
        if name is not None and name not in said:
            found.append(f"{row.table} {name} changed, not named in the text")
        if where is not None and where != blog and not cmd.has_flag("network"):
            found.append(f"{row.table}: changed on site {where}, the command's site is {blog}")
        if where not in (None, 1) and self.home + SITE_PATHS.get(where or 1, "/") not in said:
            found.append(
                f"{row.table}: a change on {SITE_PATHS.get(where or 1)} but the text names no such site"
            )
        if row.after is None and not any(w in said for w in PERMANENT_WORDS):
            found.append(f"{row.table} {name}: deleted for good, the text does not say so")
        if _trashed(row) and "ゴミ箱" not in said:
            found.append(f"{row.table} {name}: moved to the trash, the text does not say so")
        if path == ("menu", "item", "delete") and family == "posts" and row.after is None:
            kind = row.row.get("post_type")
            if kind != "nav_menu_item":
                found.append(f"menu item delete removed a {kind} ({name})")
        return found

    # -- generating -------------------------------------------------------------------------------

    def command(self, rng: random.Random) -> str:
        return rng.choice(_SHAPES)(self, rng)

    def pick(self, rng: random.Random, pool: str) -> str:
        return str(rng.choice(self.pools[pool]))

    # -- helpers ----------------------------------------------------------------------------------

    def _read(self, argv: list[str]) -> str | None:
        """The agent's state reader on the sandbox: a policy-checked read, its stdout or None."""
        if self.policy.classify_argv(argv).category is not PolicyCategory.READ:
            return None
        done = self.wordpress.wp(*argv)
        return done.stdout if done.returncode == 0 else None

    def _blog_of(self, cmd: ParsedCommand) -> int:
        urls = cmd.option_values("url")
        if not urls:
            return 1
        for blog, site_path in SITE_PATHS.items():
            if blog != 1 and urls[-1].rstrip("/").endswith(site_path.rstrip("/")):
                return blog
        return 1

    def _login(self, user_id: str) -> str:
        for row in self.baseline.rows("wp_users").values():
            if row.get("ID") == user_id:
                return row.get("user_login", user_id)
        return user_id

    @staticmethod
    def _primary(path: tuple[str, ...], change: RowChange) -> bool:
        """The rows that are the command's objects (not what goes with them)."""
        _where, family = table_family(change.table)
        row = change.row
        if family == "posts":
            kind = row.get("post_type")
            if kind == "revision" or (path[:2] != ("menu", "item") and kind == "nav_menu_item"):
                return False  # revisions, and the menu items WordPress removes with a deleted post
            return change.after is None or _trashed(change)  # a menu's other items move up: told as a class
        if family == "comments":
            return path[0] == "comment" and (change.after is None or _trashed(change))
        if family == "users":
            return change.after is None
        if family == "usermeta":  # a role changed (or removed): whose; a user meta key deleted
            return path[0] == "user" and (
                row.get("meta_key", "").endswith("capabilities") or path[:2] == ("user", "meta")
            )
        if family == "postmeta":
            return path[:2] == ("post", "meta") and change.after is None
        if family == "options":
            name = row.get("option_name", "")
            return path[0] == "option" and not name.startswith(_HOUSEKEEPING_OPTIONS)
        if family == "terms":
            return change.after is None
        if family == "blogs":  # deleted, or its flags changed (archived, spam, public, …)
            return change.after is None or path[0] == "site"
        return False

    @staticmethod
    def _name(family: str, change: RowChange) -> str | None:
        row = change.row
        return {
            "posts": row.get("ID"),
            "comments": row.get("comment_ID"),
            "users": row.get("user_login"),
            "options": row.get("option_name"),
            "terms": row.get("term_id"),
            "blogs": row.get("path", "").strip("/") or row.get("blog_id"),
        }.get(family)


def _trashed(change: RowChange) -> bool:
    if change.before is None or change.after is None:
        return False
    for column in ("post_status", "comment_approved"):
        if change.after.get(column) == "trash" and change.before.get(column) != "trash":
            return True
    return False


def _pools(facts: dict[str, Any]) -> dict[str, list[str]]:
    """What the generated commands name, as strings: the seeded site's objects by kind."""
    terms: dict[str, int] = facts["term_ids"]
    users: dict[str, int] = facts["users"]
    found: dict[str, list[Any]] = {
        "post": [*facts["publish_post_ids"], *facts["draft_post_ids"], *facts["page_ids"]],
        "trash": list(facts["trash_post_ids"]),
        "attachment": list(facts["attachment_ids"].values()),
        "menu_item": list(facts["menu_item_ids"]),
        "missing": [facts["missing_post_id"]],
        "comment": [i for ids in facts["comment_ids"].values() for i in ids],
        "term": [
            i for key, i in terms.items() if key.startswith("category:") and key != "category:uncategorized"
        ],
        "user": [i for login, i in users.items() if login != "admin"],
        "option": ["posts_per_page", "blogdescription", "date_format", "widget_text", "my_plugin_settings"],
        "menu": [i for key, i in terms.items() if key.startswith("nav_menu:")] + ["main", "footer"],
        "login": [login for login in users if login != "admin"],
    }
    return {kind: [str(v) for v in values] for kind, values in found.items()}


def _padded(rng: random.Random, number: str) -> str:
    return rng.choice([f"0{number}", f"+{number}", f" {number}", f"{number}.0", f"{int(number) / 10:g}e1"])


def _ids(ac: ApprovalConformance, rng: random.Random, pools: tuple[str, ...]) -> list[str]:
    ids = [ac.pick(rng, rng.choice(pools)) for _ in range(rng.choice((1, 1, 2)))]
    spelling = rng.random()
    if spelling < 0.12:
        ids.append(ids[0])  # the same object twice
    elif spelling < 0.22:
        ids[0] = _padded(rng, ids[0])
    return ids


_OTHER_SITE = "--url=https://example.test/en/"


def _post_delete(ac: ApprovalConformance, rng: random.Random) -> str:
    ids = _ids(ac, rng, ("post", "post", "trash", "attachment", "menu_item", "missing"))
    flags = rng.choice([[], [], ["--force"], ["--force", "--force"], ["--defer-term-counting"], [_OTHER_SITE],
                        ["--skip-plugins"]])  # fmt: skip
    return " ".join(["post", "delete", *ids, *flags])


def _comment_delete(ac: ApprovalConformance, rng: random.Random) -> str:
    ids = _ids(ac, rng, ("comment",))
    return " ".join(["comment", "delete", *ids, *rng.choice([[], ["--force"], [_OTHER_SITE]])])


def _menu_item_delete(ac: ApprovalConformance, rng: random.Random) -> str:
    ids = _ids(ac, rng, ("menu_item", "menu_item", "post", "attachment"))
    return " ".join(["menu", "item", "delete", *ids])


def _option_delete(ac: ApprovalConformance, rng: random.Random) -> str:
    keys = rng.sample(ac.pools["option"], k=rng.choice((1, 2)))
    if rng.random() < 0.15:
        keys.append(keys[0].upper())
    return " ".join(["option", "delete", *keys, *rng.choice([[], [_OTHER_SITE]])])


def _user_delete(ac: ApprovalConformance, rng: random.Random) -> str:
    ids = _ids(ac, rng, ("user",))
    flags = rng.choice(
        [["--reassign=1"], [], ["--network"], ["--reassign=1", "--reassign=2"], ["--reassign=01"]]
    )
    return " ".join(["user", "delete", *ids, *flags])


def _term_delete(ac: ApprovalConformance, rng: random.Random) -> str:
    return " ".join(["term", "delete", "category", *_ids(ac, rng, ("term",))])


def _site_delete(ac: ApprovalConformance, rng: random.Random) -> str:
    return rng.choice(["site delete --slug=shop", "site delete 3", "site delete 2 --slug=shop",
                       "site delete 3 --keep-tables", "site delete --slug=shop --slug=en"])  # fmt: skip


def _plugin(ac: ApprovalConformance, rng: random.Random) -> str:
    return rng.choice(["plugin deactivate akismet --uninstall", "plugin uninstall akismet --deactivate",
                       "plugin uninstall akismet --deactivate --skip-delete", "plugin delete hello",
                       "plugin deactivate akismet --network", "plugin deactivate --all --exclude=akismet"])  # fmt: skip


def _meta_delete(ac: ApprovalConformance, rng: random.Random) -> str:
    if rng.random() < 0.5:
        post = ac.pick(rng, "post")
        return rng.choice([f"post meta delete {post} _edit_lock", f"post meta delete {post} --all",
                           "post meta delete 10 _thumbnail_id", "post meta delete 18 _thumbnail_id"])  # fmt: skip
    user = ac.pick(rng, "user")
    return rng.choice([f"user meta delete {user} description", f"user meta delete {user} nickname",
                       f"user meta delete {user} first_name"])  # fmt: skip


def _roles(ac: ApprovalConformance, rng: random.Random) -> str:
    user = rng.choice([ac.pick(rng, "user"), ac.pick(rng, "login")])
    role = rng.choice(["subscriber", "editor", "author", "administrator"])
    return rng.choice([f"user set-role {user} {role}", f"user remove-role {user} {role}",
                       f"user remove-role {user}", f"user spam {user}", f"super-admin remove {user}",
                       f"user set-role {user} {role} --url=https://example.test/en/", f"user set-role {user}",
                       f"user session destroy {user} --all", f"user reset-password {user} --skip-email"])  # fmt: skip


def _appearance(ac: ApprovalConformance, rng: random.Random) -> str:
    return rng.choice([
        f"menu delete {ac.pick(rng, 'menu')}", "theme delete twentytwentytwo", "theme delete twentytwentyone",
        "theme activate twentytwentytwo", "widget delete block-2", "widget delete block-2 block-3",
        "widget reset sidebar-1", "widget reset --all", f"comment trash {ac.pick(rng, 'comment')}",
        "theme mod remove header_textcolor", "cron event delete wp_version_check",
        "option patch insert my_plugin_settings a 1", "option patch delete my_plugin_settings a",
    ])  # fmt: skip


def _site_flags(ac: ApprovalConformance, rng: random.Random) -> str:
    verb = rng.choice(["archive", "deactivate", "spam", "private", "public", "activate", "unarchive"])
    return rng.choice([f"site {verb} 2", f"site {verb} --slug=shop", f"site {verb} 2 3", f"site {verb} 3 3"])


_SHAPES = (
    _post_delete, _post_delete, _post_delete, _comment_delete, _menu_item_delete, _option_delete,
    _user_delete, _term_delete, _site_delete, _plugin, _meta_delete, _roles, _appearance, _site_flags,
)  # fmt: skip
