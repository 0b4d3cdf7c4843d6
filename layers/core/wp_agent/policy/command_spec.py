"""One command's row: what the policy knows about it, read from one place.

The table gives its category and label (command_table.py); its grammar is the pinned phar's synopsis or
the official reference's (command_grammar.py, the source recorded); a write runs without approval only
inside its declared effect (effects/); the least role that may ask for it (roles.py); the argument rules
about it (argument_rules.rules_for); the summary that tells its approval (approval_summary.summaries_of);
its examples — what runs without approval, and the near misses that do not — are the declarations' and the
rules', checked as the table loads and by the tests against the real policy. `wp-agent check --explain`
shows the row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wp_agent.models.target import Role
from wp_agent.policy.approval_summary import summary_handler
from wp_agent.policy.argument_rules import rules_for
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.command_grammar import synopsis_of
from wp_agent.policy.command_table import ALLOWED_COMMANDS, NEWER_THAN_PINNED
from wp_agent.policy.effects.table import WRITE_EFFECTS
from wp_agent.policy.roles import LEAST_ROLE, family_of


@dataclass(frozen=True)
class CommandSpec:
    path: tuple[str, ...]
    category: PolicyCategory
    label_ja: str
    synopsis: str | None  # None: a command of a custom allow rule (FR-5.2), read by WP-CLI's own parse
    grammar_source: str  # the pinned phar, or the official reference (never run here)
    effect_ja: str | None  # a write's declared effect: what it may change without approval
    least_role: Role  # for a write; a read is every role's
    rules: tuple[str, ...]  # the argument rules about it
    summary: str | None  # how its approval is told (None: a read is never held)
    allowed_examples: tuple[str, ...]  # run without approval (the declaration's)
    other_examples: tuple[str, ...]  # near misses: held or refused (the declaration's and the rules')

    def to_json(self) -> dict[str, Any]:
        return {
            "command": " ".join(self.path), "category": self.category.value, "labelJa": self.label_ja,
            "synopsis": self.synopsis, "grammarSource": self.grammar_source, "effectJa": self.effect_ja,
            "leastRole": self.least_role.value, "rules": list(self.rules), "summary": self.summary,
            "allowedExamples": list(self.allowed_examples), "otherExamples": list(self.other_examples),
        }  # fmt: skip


def spec_of(path: tuple[str, ...]) -> CommandSpec | None:
    """The row of a command path of the built-in table, else None."""
    entry = ALLOWED_COMMANDS.get(path)
    if entry is None:
        return None
    synopsis = synopsis_of(path)
    effect = WRITE_EFFECTS.get(path)
    rules = rules_for(path)
    family = family_of(path)
    reads = entry.category is PolicyCategory.READ
    return CommandSpec(
        path=path,
        category=entry.category,
        label_ja=entry.label_ja,
        synopsis=synopsis.text if synopsis is not None else None,
        grammar_source=(
            "reference" if path in NEWER_THAN_PINNED else "phar" if synopsis is not None else "none"
        ),
        effect_ja=effect.summary_ja if effect is not None else None,
        least_role=Role.VIEWER if reads else (LEAST_ROLE[family] if family is not None else Role.ADMIN),
        rules=tuple(rule.name.lstrip("_") for rule in rules if rule.paths is not None),
        summary=None if reads else summary_handler(path).lstrip("_"),
        allowed_examples=effect.match if effect is not None else (),
        other_examples=tuple(
            example
            for example in (
                *(effect.not_match if effect is not None else ()),
                *(example for rule in rules if rule.paths is not None for example in rule.match),
            )
            if tuple(example.split()[: len(path)]) == path  # (a rule's examples cover all its commands)
        ),
    )
