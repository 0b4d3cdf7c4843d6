"""An argument rule: a check on a canonical command plus the commands it must and must not catch.

The examples are part of the rule (codex execpolicy style) and tests/unit/test_rule_examples.py
runs every one through the real policy, so a rule cannot silently stop catching what it was for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.categories import PolicyCategory
from wp_agent.whole_values import whole

# Argument shapes several rules check.
SLUG = whole(r"[a-z0-9][a-z0-9_\-]*", "akismet", "twentytwentyfive", "wp-2fa")
DIGITS = whole(r"\d+", "1", "45")
ID_RANGE = whole(
    r"\d+-\d*|-\d+", "15-35", "34-", "-35"
)  # WP-CLI expands 15-35, 34-, -35 to every existing ID


@dataclass(frozen=True)
class Verdict:
    category: PolicyCategory
    rule: str
    reason_ja: str
    pattern: str


RuleCheck = Callable[[ParsedCommand, tuple[str, ...]], Verdict | None]


def strictest(verdicts: Iterable[Verdict | None]) -> Verdict | None:
    """The strictest of the verdicts given (a refusal over an approval), the first among equals; None
    when none was given: how the policy combines what its rules and declarations say."""
    return max((v for v in verdicts if v is not None), key=lambda v: v.category.rank, default=None)


Path = tuple[str, ...]


@dataclass(frozen=True)
class ArgumentRule:
    check: RuleCheck
    match: tuple[str, ...]  # commands this rule must give a verdict for
    not_match: tuple[str, ...]  # near misses it must leave alone
    # The commands it is about — a command path, or a group's first words (`config`: every config
    # command) — or None for every command. The check is asked only there (the table's rows name their
    # rules by this), and argument_rules.py refuses to load a rule naming a command the table lacks.
    paths: frozenset[Path] | None = None

    @property
    def name(self) -> str:
        return self.check.__name__

    def applies_to(self, path: Path) -> bool:
        return self.paths is None or any(path[: len(p)] == p for p in self.paths)

    def __call__(self, cmd: ParsedCommand, path: Path) -> Verdict | None:
        return self.check(cmd, path) if self.applies_to(path) else None


# A site's options and the network's (`site option`, and `network meta <network-id>`: the same sitemeta
# rows): one name space of rules. For each writing path, the argument its key is (patch: after the action).
_OPTION_WRITES: dict[tuple[str, ...], int] = {
    (*owner, verb): (1 if verb == "patch" else 0) + skip
    for owner, skip in ((("option",), 0), (("site", "option"), 0), (("network", "meta"), 1))
    for verb in ("update", "add", "patch", "delete")
}


# The commands that write an option (the rules about an option's key name these).
OPTION_WRITES: frozenset[Path] = frozenset(_OPTION_WRITES)
# Those that write the network's options (`site option`, `network meta`), not one site's.
NETWORK_OPTION_WRITES: frozenset[Path] = frozenset(p for p in OPTION_WRITES if p[0] != "option")


def written_option(cmd: ParsedCommand, path: tuple[str, ...]) -> str | None:
    """The option an `option|site option|network meta update|add|patch|delete` writes (`patch <action>
    <key> …`, `network meta update <id> <key> …`), else None."""
    at = _OPTION_WRITES.get(path)
    args = cmd.args_after(path)
    return args[at] if at is not None and len(args) > at else None


def argument_rule(
    *, match: tuple[str, ...], not_match: tuple[str, ...], paths: Iterable[str | Path] | None = None
) -> Callable[[RuleCheck], ArgumentRule]:
    """Decorator: a rule function with its examples (both lists must be non-empty) and the commands it
    is about (`paths`: "post create", or already split; None: every command)."""
    about = None if paths is None else frozenset(tuple(p.split()) if isinstance(p, str) else p for p in paths)

    def wrap(check: RuleCheck) -> ArgumentRule:
        if not match or not not_match:
            raise ValueError(f"rule {check.__name__} needs match and not_match examples")
        return ArgumentRule(check, match, not_match, about)

    return wrap
