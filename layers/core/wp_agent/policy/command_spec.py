"""One command's row: what the policy knows about it, read from one place.

The table gives its category and label (command_table.py); its grammar is the pinned phar's synopsis or
the official reference's (command_grammar.py, the source recorded); a write runs without approval only
inside its declared effect (effects/); the least role that may ask for it (roles.py); the argument rules
about it (argument_rules.rules_for); what deciding it may read of the site first (decide.reads_first — a
step that reads is asked only about the commands whose row lists it); the summary that tells its approval
and what it may read of the site to word it (approval_summary.summaries_of — a read no row lists is
stopped); its examples — what runs without approval, what waits for approval and
what is refused, as the declaration or rule that lists each gives it (checked as the table loads; the
whole policy may only be stricter, which the tests hold it to). `wp-agent check --explain` shows the row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wp_agent.models.target import Role
from wp_agent.policy.approval_summary import summary_handler, summary_reads
from wp_agent.policy.argument_rules import rules_for
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.command_grammar import synopsis_of
from wp_agent.policy.command_table import ALLOWED_COMMANDS, NEWER_THAN_PINNED
from wp_agent.policy.decide import reads_first
from wp_agent.policy.effects.table import WRITE_EFFECTS, parse_example
from wp_agent.policy.roles import LEAST_ROLE, family_of
from wp_agent.policy.rule import Verdict, strictest


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
    site_reads: tuple[str, ...]  # what deciding it may read of the site first
    summary: str | None  # how its approval is told (None: a read is never held)
    summary_reads: tuple[str, ...]  # what wording its approval may read of the site
    allowed_examples: tuple[str, ...]  # run without approval (the declaration's)
    held_examples: tuple[str, ...]  # near misses that wait for approval (the declaration's and the rules')
    refused_examples: tuple[str, ...]  # and those refused

    def to_json(self) -> dict[str, Any]:
        return {
            "command": " ".join(self.path), "category": self.category.value, "labelJa": self.label_ja,
            "synopsis": self.synopsis, "grammarSource": self.grammar_source, "effectJa": self.effect_ja,
            "leastRole": self.least_role.value, "rules": list(self.rules), "siteReads": list(self.site_reads),
            "summary": self.summary, "summaryReads": list(self.summary_reads), "allowedExamples": list(self.allowed_examples),
            "heldExamples": list(self.held_examples), "refusedExamples": list(self.refused_examples),
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
    near_misses = _near_misses(path)
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
        site_reads=tuple(read.reads_ja for read in reads_first(path)),
        summary=None if reads else summary_handler(path),
        summary_reads=() if reads else tuple(fact.about_ja for fact in summary_reads(path)),
        allowed_examples=effect.match if effect is not None else (),
        held_examples=tuple(e for e, v in near_misses if v.category is PolicyCategory.DESTRUCTIVE),
        refused_examples=tuple(e for e, v in near_misses if v.category is PolicyCategory.BLOCKED),
    )


def _near_misses(path: tuple[str, ...]) -> list[tuple[str, Verdict]]:
    """The examples of `path` that do not run as they are (its declaration's near misses, and its rules'
    examples — a rule's cover all its commands: only this command's are taken), each with the strictest
    verdict its declaration and rules give it, as the policy decides (strictest wins)."""
    effect = WRITE_EFFECTS.get(path)
    examples = [*(effect.not_match if effect is not None else ())]
    for rule in rules_for(path):
        if rule.paths is not None:
            examples += [e for e in rule.match if tuple(e.split()[: len(path)]) == path]
    found = []
    for example in dict.fromkeys(examples):
        parsed = parse_example(example)
        verdict = strictest(
            rule(parsed, path) for rule in rules_for(path)
        )  # (its declaration: declared_effect)
        if verdict is not None:  # (every one has one: checked as the table loads)
            found.append((example, verdict))
    return found
