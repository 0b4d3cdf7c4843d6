"""The policy's one entry point for a command someone asked to run: `decide`.

In this order, each step only ever tightening what the one before decided: the command table
(`CommandPolicy.classify`: grammar, category, argument rules), the requester's role and the session's
site (site_scope.py), then the checks that need the site's state — the post types a write names
(post_targets.py), the objects the role may change (role_targets.py), the spelling of a kept meta key
(meta_spelling.py). Those ask `site` (a StateReader; site_reads.SiteReads notes what it was asked) and
never read the site themselves. The answer is `Decided` — the decision and the rules that made it — or,
when a check asked for a read that has no answer yet, `NeedsReads`: the caller reads those (as
policy-checked reads; agent/site_commands.decided_after_reads) and decides again with the answers. A plain
function reader answers at once, so it is always `Decided`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from wp_agent.masking import mask_argv
from wp_agent.policy import meta_spelling, post_targets, role_targets
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.command_policy import RULE_FAILED, RULE_FAILED_JA, CommandPolicy, PolicyDecision
from wp_agent.policy.command_table import ALLOWED_COMMANDS
from wp_agent.policy.meta_spelling import guard_meta_spelling
from wp_agent.policy.post_targets import guard_post_targets
from wp_agent.policy.role_targets import guard_role_targets
from wp_agent.policy.site_reads import Argv, NeedsReads, Path, ReadsFirst, SiteReads, StateReader
from wp_agent.policy.site_scope import SiteScope, apply_site_scope

logger = logging.getLogger(__name__)

# The steps in their order: a name for the record (`wp-agent check --explain`) and what each does.
STEPS_JA = {
    "table": "コマンド表（文法・分類・引数のルール）",
    "scope": "依頼者の権限と対象サイト",
    "post_targets": "書き込む投稿の種類（サイトで確認）",
    "role_targets": "権限で変更できる投稿・ターム（サイトで確認）",
    "meta_spelling": "既存のメタキーと同じ名前か（サイトで確認）",
}


# What the steps that read the site read, and for which commands: a step is asked only about those
# (a command's row lists them: command_spec.py).
READS_FIRST: tuple[ReadsFirst, ...] = (
    *post_targets.READS_FIRST,
    *role_targets.READS_FIRST,
    *meta_spelling.READS_FIRST,
)


def reads_first(path: Path) -> tuple[ReadsFirst, ...]:
    """What deciding `path` may read of the site first."""
    return tuple(read for read in READS_FIRST if read.about(path))


def _reads_are_about_known_commands() -> None:
    """Checked as the table loads: each declared read is about some command of the table (a read no row
    lists would be a step that never runs), and names a step of `decide`."""
    for read in READS_FIRST:
        if read.step not in STEPS_JA:
            raise ValueError(f"the site read {read.reads_ja!r} names no step of decide: {read.step!r}")
        if not any(read.about(path) for path in ALLOWED_COMMANDS):
            raise ValueError(f"the site read {read.reads_ja!r} is about no command of the table")


_reads_are_about_known_commands()


@dataclass(frozen=True)
class Step:
    """One step of `decide`: its name (STEPS_JA), the decision after it, and the reads of the site it
    asked that had no answer yet (the caller reads them and decides again)."""

    name: str
    decision: PolicyDecision
    asked: tuple[Argv, ...] = ()


@dataclass(frozen=True)
class Decided:
    """The command decided: the decision, and the rule of each step that changed it, in order (the
    table's first: what `wp-agent check --explain` walks through)."""

    decision: PolicyDecision
    rules: tuple[str, ...]


def decide(
    policy: CommandPolicy,
    command: str | Sequence[str],
    scope: SiteScope,
    site: StateReader,
    *,
    alone_in_reply: bool = True,
) -> Decided | NeedsReads:
    """`command` (as the model wrote it, or an argv already read) decided for the requester and site of
    `scope`, or the reads of the site it needs first. `alone_in_reply`: no other call of the same reply
    may change the site alongside it (post_targets keeps its answer simple then)."""
    steps = decide_steps(policy, command, scope, site, alone_in_reply=alone_in_reply)
    asked = tuple(dict.fromkeys(argv for step in steps for argv in step.asked))
    if asked:
        return NeedsReads(asked)
    rules = [steps[0].decision.rule]
    for before, after in pairwise(steps):
        if after.decision.rule != before.decision.rule:
            rules.append(after.decision.rule)
    return Decided(steps[-1].decision, tuple(rules))


def decide_steps(
    policy: CommandPolicy,
    command: str | Sequence[str],
    scope: SiteScope,
    site: StateReader,
    *,
    alone_in_reply: bool = True,
) -> list[Step]:
    """`decide`, step by step; the last step's decision is the decision."""
    table = policy.classify(command) if isinstance(command, str) else policy.classify_argv(list(command))
    guards: list[tuple[str, Callable[[PolicyDecision], PolicyDecision]]] = [
        ("scope", lambda d: apply_site_scope(d, scope)),
        ("post_targets", lambda d: guard_post_targets(d, site, alone_in_reply=alone_in_reply)),
        ("role_targets", lambda d: guard_role_targets(d, scope.role, site)),
        ("meta_spelling", lambda d: guard_meta_spelling(d, site)),
    ]
    steps = [Step("table", table)]
    reading = {read.step for read in reads_first(table.command_path)}
    for name, guard in guards:
        if name != "scope" and name not in reading:
            steps.append(Step(name, steps[-1].decision))  # (reads nothing, so decides nothing, for it)
            continue
        asked = len(site.unanswered) if isinstance(site, SiteReads) else 0
        decision = _fails_closed(name, guard, steps[-1].decision)
        new = tuple(dict.fromkeys(site.unanswered[asked:])) if isinstance(site, SiteReads) else ()
        steps.append(Step(name, decision, new))
    return steps


def _fails_closed(
    name: str, guard: Callable[[PolicyDecision], PolicyDecision], decision: PolicyDecision
) -> PolicyDecision:
    """The step's decision; a step that fails on a command (a fault of ours) refuses it rather than ending
    the request, as a failing argument rule does (command_policy.RULE_FAILED), and the fault is logged."""
    try:
        return guard(decision)
    except Exception:
        logger.exception("a deciding step failed; the command is refused", extra={"step": name})
        return dataclasses.replace(
            decision, category=PolicyCategory.BLOCKED, rule=RULE_FAILED, reason_ja=RULE_FAILED_JA
        )


def explained(policy: CommandPolicy, command: str, scope: SiteScope) -> list[dict[str, Any]]:
    """`decide`'s steps for someone who runs nothing (`wp-agent check --explain`, MCP's `check`): each
    step's decision and rule, or — for a step that asks the site first — the reads it asks (masked); from
    the first such step on, the site's answers decide when the command really runs."""
    steps = decide_steps(policy, command, scope, SiteReads())
    shown: list[dict[str, Any]] = []
    previous = None
    waits = False
    for step in steps:
        waits = waits or bool(step.asked)
        decision = previous if waits and previous is not None else step.decision
        shown.append({
            "step": step.name, "stepJa": STEPS_JA[step.name], "decision": decision.decision,
            "category": decision.category.value, "rule": decision.rule,
            "changed": previous is not None and (decision.category, decision.rule) != (previous.category, previous.rule),
            "siteReads": [mask_argv(list(argv)) for argv in step.asked], "waitsForSite": waits,
        })  # fmt: skip
        previous = decision
    return shown
