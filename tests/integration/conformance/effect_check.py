"""Does what a command changed lie inside the effect its declaration names? (policy/effects)

Every changed row must be allowed by one `Rows` of the declaration: its table family, the site the
command ran on (network tables excepted), the object that owns it (an id or name the command gave,
an object the command created, or any), its key (options and meta), for rows that existed the
columns that changed, and the values its `where` names (a post's type) before and after. New
options and meta values of listed keys must pass their value check, new cron events must be ones
the declaration names, and files may change only below its paths.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tests.integration.conformance.site_diff import (
    GLOBAL_FAMILIES,
    RowChange,
    SiteBaseline,
    SiteChange,
    table_family,
)
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.effects.declaration import ANY, NEW, Effect, Rows
from wp_agent.policy.effects.meta_keys import LISTED_PROTECTED
from wp_agent.policy.effects.options import OPTIONS
from wp_agent.policy.effects.values import SiteCheck

# family -> (column naming the object a row belongs to, family of that object, key column)
_OWNERS: dict[str, tuple[str | None, str | None, str | None]] = {
    "posts": ("ID", "posts", None),
    "comments": ("comment_ID", "comments", None),
    "terms": ("term_id", "terms", None),
    "term_taxonomy": ("term_id", "terms", None),
    "term_relationships": ("object_id", "posts", None),
    "users": ("ID", "users", None),
    "blogs": ("blog_id", "blogs", None),
    "links": ("link_id", "links", None),
    "registration_log": ("ID", "registration_log", None),
    "signups": ("signup_id", "signups", None),
    "postmeta": ("post_id", "posts", "meta_key"),
    "termmeta": ("term_id", "terms", "meta_key"),
    "commentmeta": ("comment_id", "comments", "meta_key"),
    "usermeta": ("user_id", "users", "meta_key"),
    "blogmeta": ("blog_id", "blogs", "meta_key"),
    "sitemeta": (None, None, "meta_key"),
    "options": (None, None, "option_name"),
}
# Columns that name an object besides its id (a command may give a slug, login or email).
_NAMES = {
    "posts": ("post_name",),
    "terms": ("slug", "name"),
    "users": ("user_login", "user_email", "user_nicename"),
    "blogs": ("path",),
}
_META_FAMILY = {"postmeta": "post", "termmeta": "term", "usermeta": "user"}
_HOOK = re.compile(r's:\d+:"([^"]+)";a:\d+:\{s:32:"[0-9a-f]{32}"')


def blog_of(cmd: ParsedCommand) -> int:
    """The site a sandbox command runs on: the main site unless --url names /en/ or /shop/."""
    url = (cmd.option_values("url") or [""])[-1]  # WP-CLI takes the last --url
    return {"/en/": 2, "/shop/": 3}.get(re.sub(r"^https?://[^/]+", "", url.rstrip("/") + "/"), 1)


class EffectCheck:
    def __init__(
        self, baseline: SiteBaseline, effect: Effect, cmd: ParsedCommand, path: tuple[str, ...]
    ) -> None:
        self.baseline = baseline
        self.effect = effect
        self.cmd = cmd
        self.path = path
        self.blog = blog_of(cmd)

    def violations(self, change: SiteChange) -> list[str]:
        found: list[str] = []
        creates_site = any(r.table == "site_tables" and NEW in r.objects for r in self.effect.all_changes)
        found += [f"table dropped: {t}" for t in change.dropped_tables]
        if not creates_site:
            found += [f"table created: {t}" for t in change.created_tables]
        for row in change.rows:
            if row.table in change.created_tables:
                continue
            problem = self._row_problem(row)
            if problem is not None:
                found.append(problem)
        allowed = self.effect.files
        for path in change.files:
            if not any(path == p or path.startswith(p.rstrip("/") + "/") for p in allowed):
                found.append(f"file changed: {path}")
        return found

    # -- rows -----------------------------------------------------------------------------------

    def _row_problem(self, change: RowChange) -> str | None:
        blog, family = table_family(change.table)
        where = f"{change.table} {_describe(change)}"
        if blog is not None and blog != self.blog:
            return f"another site's table changed: {where}"
        candidates = [r for r in self.effect.all_changes if r.table == family]
        if not candidates:
            return f"undeclared table: {where}"
        reasons = [self._rows_problem(rows, family, change) for rows in candidates]
        if all(r is not None for r in reasons):
            return f"outside the declaration: {where} ({'; '.join(r for r in reasons if r)})"
        return self._value_problem(family, change)

    def _rows_problem(self, rows: Rows, family: str, change: RowChange) -> str | None:
        owner_column, owner_family, key_column = _OWNERS.get(family, (None, None, None))
        row = change.row
        for column, allowed in rows.where:
            for side in (change.before, change.after):
                if side is not None and side.get(column) not in allowed:
                    return f"{column} {side.get(column)!r} not among {sorted(allowed)}"
        if key_column is not None and not rows.allows_key(row.get(key_column, ""), self.cmd, self.path):
            return f"key {row.get(key_column)!r} not declared"
        if owner_column is not None and owner_family is not None and ANY not in rows.objects:
            owner = row.get(owner_column, "")
            named, new_allowed, _ = rows.object_refs(self.cmd, self.path)
            existed = owner in self._ids(owner_family, blog_table=change.table)
            if not (
                owner in self._resolve(owner_family, change.table, named) or (new_allowed and not existed)
            ):
                return f"object {owner} not named by the command"
        if (
            key_column is None
            and change.before is not None
            and change.after is not None
            and rows.columns is not None
        ):
            extra = change.changed_columns() - rows.columns
            if extra:
                return f"columns {sorted(extra)} not declared"
        return None

    def _value_problem(self, family: str, change: RowChange) -> str | None:
        row = change.after
        if row is None:
            return None
        if family == "options":
            name = row.get("option_name", "")
            check = OPTIONS.get(name)
            if (
                check is not None
                and self.path[:1] == ("option",)
                and not check.accepts(row.get("option_value"))
            ):
                return f"option {name} stored outside its value check: {row.get('option_value')!r}"
            if name == "cron":
                before = set(_HOOK.findall(change.before.get("option_value", ""))) if change.before else set()
                new_hooks = set(_HOOK.findall(row.get("option_value", ""))) - before
                undeclared = sorted(h for h in new_hooks if h not in self.effect.cron_hooks)
                if undeclared:
                    return f"cron events scheduled outside the declaration: {undeclared}"
        meta = _META_FAMILY.get(family)
        if meta is not None:
            key = row.get("meta_key", "")
            check = LISTED_PROTECTED.get(meta, {}).get(key)
            value = row.get("meta_value", "")
            if check is not None and not check.accepts(value):
                return f"{family} {key} stored outside its value check: {value!r}"
            if (
                check is not None
                and check.site_check is not None
                and not self._confirmed(check.site_check(value))
            ):
                return f"{family} {key} stored a value the site does not confirm: {value!r}"
        return None

    def _confirmed(self, check: SiteCheck) -> bool:
        """The site check of a listed value, read afterwards on the site the command wrote to."""
        urls = [o.token for o in self.cmd.options if o.name == "url"]
        done = self.baseline.wordpress.wp(*check.argv, *urls)
        return check.confirms(done.stdout if done.returncode == 0 else None)

    # -- objects --------------------------------------------------------------------------------

    def _owner_table(self, owner_family: str, blog_table: str) -> str:
        blog, _ = table_family(blog_table)
        if owner_family in GLOBAL_FAMILIES:
            return f"wp_{owner_family}"
        return f"wp_{owner_family}" if blog in (None, 1) else f"wp_{blog}_{owner_family}"

    def _ids(self, owner_family: str, *, blog_table: str) -> set[str]:
        table = self._owner_table(owner_family, blog_table)
        column = _OWNERS[owner_family][0]
        return {row.get(column or "", "") for row in self.baseline.rows(table).values()}

    def _resolve(self, owner_family: str, blog_table: str, refs: Iterable[str]) -> set[str]:
        """The ids of the objects the command named (by id, slug, login, email …) as they were."""
        wanted = set(refs)
        if not wanted:
            return set()
        table = self._owner_table(owner_family, blog_table)
        column = _OWNERS[owner_family][0] or ""
        names = _NAMES.get(owner_family, ())
        resolved = {
            row.get(column, "")
            for row in self.baseline.rows(table).values()
            if row.get(column) in wanted or any(row.get(n) in wanted for n in names)
        }
        return resolved | {r for r in wanted if r.isdigit()}


def _describe(change: RowChange) -> str:
    row = change.row
    shown = {k: v[:40] for k, v in row.items() if k in {"option_name", "meta_key", "ID", "post_id", "user_id",
                                                          "term_id", "comment_ID", "post_type", "blog_id"}}  # fmt: skip
    kind = "+" if change.before is None else "-" if change.after is None else "~"
    columns = "" if kind != "~" else f" columns={sorted(change.changed_columns())}"
    return f"{kind}{shown}{columns}"
