"""A declared effect: what one write command may change without approval, and which commands stay
inside that declaration.

The declaration has two sides, kept together so they cannot drift apart:
- what the command may say: its flags (each with a value check), its positional arguments, and a
  family-specific check (meta keys, option names); anything else waits for approval (or is refused);
- what the command may change on the site (`changes`, `files`): the rows of which tables, owned by
  which objects, under which keys, and which files. The policy does not need them to decide; the
  conformance test (tests/integration/test_effect_conformance.py) runs every command the policy
  lets through on the real sandbox and fails when anything else changed.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.effects.values import SiteCheck, ValueCheck
from wp_agent.policy.rule import Verdict, strictest

D = PolicyCategory.DESTRUCTIVE
B = PolicyCategory.BLOCKED

# WP-CLI's global parameters that change how a command prints or where it runs, never what it writes
# (the forbidden ones are refused before; `--url` is pinned by the site scope). `--skip-plugins` and
# `--skip-themes` are not among them: a write without the site's plugins skips what they enforce on
# every save (a capability filter, an audit log), so it waits for approval.
GLOBAL_FLAGS = frozenset(
    {"url", "quiet", "skip-packages", "no-color", "color", "debug", "context", "allow-root"}
)


# -- which rows: references to the objects a command names ----------------------------------------


@dataclass(frozen=True)
class Arg:
    """The positional argument at `index` after the command path (and every later one if `rest`)."""

    index: int
    rest: bool = False

    def values(self, cmd: ParsedCommand, path: tuple[str, ...]) -> list[str]:
        args = cmd.args_after(path)
        return list(args[self.index :] if self.rest else args[self.index : self.index + 1])


@dataclass(frozen=True)
class Flag:
    """The value(s) of `--name` (comma-separated values count one by one when `split`)."""

    name: str
    split: bool = False

    def values(self, cmd: ParsedCommand, path: tuple[str, ...]) -> list[str]:
        found = cmd.option_values(self.name)
        return [p for v in found for p in v.split(",")] if self.split else found


@dataclass(frozen=True)
class JsonKeys:
    """The keys of the JSON object(s) given as `--name` (`--meta_input='{"subtitle": …}'`)."""

    name: str

    def values(self, cmd: ParsedCommand, path: tuple[str, ...]) -> list[str]:
        keys: list[str] = []
        for raw in cmd.option_values(self.name):
            try:
                data = json.loads(raw)
            except ValueError:
                continue
            keys += [str(k) for k in data] if isinstance(data, dict) else []
        return keys


@dataclass(frozen=True)
class Names:
    """Fixed names or glob patterns (`_transient_*`): keys WordPress itself writes as bookkeeping."""

    patterns: tuple[str, ...]

    def values(self, cmd: ParsedCommand, path: tuple[str, ...]) -> list[str]:
        return list(self.patterns)


NEW = "new"  # rows the command creates
ANY = "any"  # any row of the table (counters such as term_taxonomy.count)
Ref = Arg | Flag | JsonKeys | Names | str


@dataclass(frozen=True)
class Rows:
    """Rows of one table family (`posts`, `postmeta`, `options`, … in any site's tables) the write
    may change: owned by `objects` (ids or names the command gives, NEW or ANY), for key/value
    tables only under `keys`, for existing rows only in `columns` (None: any column), and only
    rows whose `where` columns hold one of the listed values before and after (`post_type`)."""

    table: str
    objects: tuple[Ref, ...] = (ANY,)
    keys: tuple[Ref, ...] = ()
    columns: frozenset[str] | None = None
    where: tuple[tuple[str, frozenset[str]], ...] = ()

    def allows_key(self, key: str, cmd: ParsedCommand, path: tuple[str, ...]) -> bool:
        """Whether a row of `key` is inside the declaration (case folded, as MySQL compares keys). Only
        `Names` are glob patterns: a key the command gives is matched as written (`[1,2]` is a key)."""
        if not self.keys or ANY in self.keys:
            return True
        folded = key.casefold()
        return any(
            fnmatch.fnmatchcase(folded, value.casefold())
            if isinstance(ref, Names)
            else folded == value.casefold()
            for ref in self.keys
            if not isinstance(ref, str)
            for value in ref.values(cmd, path)
        )

    def object_refs(self, cmd: ParsedCommand, path: tuple[str, ...]) -> tuple[set[str], bool, bool]:
        """(ids or names the command gives, new rows allowed, any row allowed)."""
        named = {v for ref in self.objects if not isinstance(ref, str) for v in ref.values(cmd, path)}
        return named, NEW in self.objects, ANY in self.objects


def post_types(*names: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """`Rows.where` for rows of the posts table of these types only."""
    return (("post_type", frozenset(names)),)


# What loading WordPress for any command may refresh: its own caches in transients (the theme roots,
# the update checks), in the site's options and, on a multisite, in the network's table.
WORDPRESS_CACHES = (
    Rows("options", keys=(Names(("_transient_*", "_site_transient_*")),)),
    Rows("sitemeta", keys=(Names(("_site_transient_*",)),)),
)


# -- the declaration -------------------------------------------------------------------------------

Refinement = Callable[[ParsedCommand, tuple[str, ...]], Verdict | None]
SiteChecks = Callable[[ParsedCommand, tuple[str, ...]], list[SiteCheck]]


@dataclass(frozen=True)
class Effect:
    """What a write may change without approval (see the module docstring)."""

    summary_ja: str  # what it changes, for people (README, `wp-agent://policy`)
    changes: tuple[Rows, ...]
    fields: Mapping[str, ValueCheck] = field(default_factory=dict)
    refused_fields: Mapping[str, str] = field(default_factory=dict)  # flag -> why it is refused
    args: tuple[ValueCheck, ...] = ()  # positional arguments in order; the last repeats if `repeat`
    repeat: bool = False
    refine: Refinement | None = None
    site_checks: SiteChecks | None = None
    files: tuple[str, ...] = ()  # paths relative to the WordPress directory it may change below
    cron_hooks: tuple[str, ...] = ()  # events WordPress itself may schedule in the `cron` option
    refreshes_caches: bool = True  # WordPress may refresh its own transients while the command runs
    match: tuple[str, ...] = ()  # commands inside the declaration (run without approval)
    not_match: tuple[str, ...] = ()  # near misses outside it (approval or refused)

    @property
    def reads_site(self) -> bool:
        """Whether a value of it must be confirmed on the site (checks_on_site may ask a read)."""
        specs = (*self.fields.values(), *self.args)
        return self.site_checks is not None or any(spec.site_check is not None for spec in specs)

    @property
    def all_changes(self) -> tuple[Rows, ...]:
        """What the write may change, WordPress's own caches included."""
        return (*self.changes, *WORDPRESS_CACHES) if self.refreshes_caches else self.changes

    def judge(self, cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
        """None when the command stays inside this declaration; else why it does not (a refusal wins
        over an approval)."""
        verdicts: list[Verdict | None] = [self._judge_flag(o.name, o.value, o.token) for o in cmd.options]
        verdicts.append(self._judge_args(cmd.args_after(path)))
        if self.refine is not None:
            verdicts.append(self.refine(cmd, path))
        return strictest(verdicts)

    def _judge_flag(self, name: str, value: str | None, token: str) -> Verdict | None:
        if name in GLOBAL_FLAGS:
            return None
        if name in self.refused_fields:
            return Verdict(B, "blocked.effect.field", self.refused_fields[name], token)
        check = self.fields.get(name)
        if check is None:
            return Verdict(
                D,
                "confirm.effect.undeclared_field",
                f"--{name} は承認なしで変更できる項目として確認されていないため承認が必要です",
                f"--{name}",
            )
        if not check.accepts(value):
            held = check.why_held(value)
            if held is not None:
                return Verdict(D, held.rule, f"--{name} の値に{held.reason_ja}", token)
            return Verdict(
                D,
                "confirm.effect.value",
                f"--{name} の値は{check.describe_ja}だけを承認なしで指定できます。それ以外の値は承認が必要です",
                token,
            )
        return None

    def _judge_args(self, args: tuple[str, ...]) -> Verdict | None:
        for index, value in enumerate(args):
            if index < len(self.args):
                check = self.args[index]
            elif self.repeat and self.args:
                check = self.args[-1]
            else:
                return Verdict(
                    D,
                    "confirm.effect.argument",
                    f"引数「{value}」は、承認なしで実行できる形に含まれない余分な引数のため承認が必要です",
                    value,
                )
            if not check.accepts(value):
                held = check.why_held(value)
                if held is not None:
                    return Verdict(D, held.rule, f"引数「{value[:40]}」に{held.reason_ja}", value)
                return Verdict(
                    D,
                    "confirm.effect.argument",
                    f"引数「{value}」は{check.describe_ja}だけを承認なしで指定できます。それ以外は承認が必要です",
                    value,
                )
        return None

    def fetched_urls(self, cmd: ParsedCommand, path: tuple[str, ...]) -> list[str]:
        """The URLs the server (or the agent, for media) fetches because of this write's values."""
        urls: list[str] = []
        for option in cmd.options:
            check = self.fields.get(option.name)
            if check is not None and check.fetches is not None and option.value is not None:
                urls += check.fetches(option.value)
        for index, value in enumerate(cmd.args_after(path)):
            spec = self.args[min(index, len(self.args) - 1)] if self.args else None
            if spec is not None and spec.fetches is not None and (index < len(self.args) or self.repeat):
                urls += spec.fetches(value)
        return urls

    def checks_on_site(self, cmd: ParsedCommand, path: tuple[str, ...]) -> list[SiteCheck]:
        """Reads of the site that must confirm values the argv cannot prove (an attachment's ID)."""
        found: list[SiteCheck] = []
        for option in cmd.options:
            check = self.fields.get(option.name)
            if check is not None and check.site_check is not None and option.value is not None:
                found.append(check.site_check(option.value))
        args = cmd.args_after(path)
        for index, value in enumerate(args):
            spec = self.args[min(index, len(self.args) - 1)] if self.args else None
            if spec is not None and spec.site_check is not None and (index < len(self.args) or self.repeat):
                found.append(spec.site_check(value))
        if self.site_checks is not None:
            found += self.site_checks(cmd, path)
        return found
