"""An argument rule: a check on a canonical command plus the commands it must and must not catch.

The examples are part of the rule (codex execpolicy style) and tests/unit/test_rule_examples.py
runs every one through the real policy, so a rule cannot silently stop catching what it was for.
"""

from __future__ import annotations

from collections.abc import Callable
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


@dataclass(frozen=True)
class ArgumentRule:
    check: RuleCheck
    match: tuple[str, ...]  # commands this rule must give a verdict for
    not_match: tuple[str, ...]  # near misses it must leave alone

    @property
    def name(self) -> str:
        return self.check.__name__

    def __call__(self, cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
        return self.check(cmd, path)


_OPTION_WRITES = frozenset(
    {("option", "update"), ("option", "add"), ("option", "patch"), ("option", "delete")}
)


def written_option(cmd: ParsedCommand, path: tuple[str, ...]) -> str | None:
    """The option an `option update|add|patch|delete` writes (`patch <action> <key> …`), else None."""
    if path not in _OPTION_WRITES:
        return None
    args = cmd.args_after(path)[1:] if path == ("option", "patch") else cmd.args_after(path)
    return args[0] if args else None


def argument_rule(
    *, match: tuple[str, ...], not_match: tuple[str, ...]
) -> Callable[[RuleCheck], ArgumentRule]:
    """Decorator: a rule function with its examples (both lists must be non-empty)."""

    def wrap(check: RuleCheck) -> ArgumentRule:
        if not match or not not_match:
            raise ValueError(f"rule {check.__name__} needs match and not_match examples")
        return ArgumentRule(check, match, not_match)

    return wrap
