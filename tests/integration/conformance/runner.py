"""One generated command through the agent's own decision (the policy, then the site checks the
agent runs before a write) and, when it may run without approval, on the real site: its changes
against its declared effect, then back to the seed (only what changed)."""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field

from tests.fakes.wordpress import TestWordPress
from tests.integration.conformance.command_grammar import Grammar, synopses_of
from tests.integration.conformance.effect_check import EffectCheck
from tests.integration.conformance.site_diff import SiteBaseline
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy import CommandPolicy, PolicyCategory, PolicyDecision
from wp_agent.policy.effects.declaration import Effect
from wp_agent.policy.effects.table import WRITE_EFFECTS
from wp_agent.policy.post_targets import guard_post_targets

# A read's declared effect: nothing at all (not even WordPress's caches: tests/integration/
# test_read_means_read.py shows the reads of the table leave every transient alone).
READS_CHANGE_NOTHING = Effect(
    summary_ja="変更なし", changes=(), refreshes_caches=False, match=("-",), not_match=("-",)
)


@dataclass
class Violation:
    command: str
    problems: list[str]

    def __str__(self) -> str:
        return f"wp {self.command}\n    " + "\n    ".join(self.problems)


@dataclass
class Tally:
    decisions: Counter[str] = field(default_factory=Counter)  # read / write / destructive / blocked
    ran: int = 0  # commands run on the site without approval (writes and reads)
    failed: int = 0  # of those, WP-CLI exited non-zero (a failed write must change nothing undeclared too)
    changed: int = 0  # of those, the site changed (and was restored)
    paths: Counter[str] = field(default_factory=Counter)  # unapproved writes run, per command path
    failures: Counter[str] = field(default_factory=Counter)  # of those, failed, per command path
    last_errors: dict[str, str] = field(default_factory=dict)  # a failed command and its error, per path
    violations: list[Violation] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def writes(self) -> int:
        return sum(n for p, n in self.paths.items() if not p.endswith("(read)"))

    def lines(self) -> list[str]:
        return [
            f"commands generated: {sum(self.decisions.values())}",
            "decisions: " + ", ".join(f"{k}={v}" for k, v in sorted(self.decisions.items())),
            f"run on the sandbox without approval: {self.ran} (writes {self.writes}, reads {self.ran - self.writes};"
            f" WP-CLI failed: {self.failed}; site changed: {self.changed})",
            f"write paths exercised: {len([p for p in self.paths if not p.endswith('(read)')])} of {len(WRITE_EFFECTS)}",
            f"violations: {len(self.violations)}",
            f"seconds: {self.seconds:.1f}",
        ]


class ConformanceRun:
    def __init__(self, wordpress: TestWordPress, policy: CommandPolicy | None = None) -> None:
        self.wordpress = wordpress
        self.policy = policy or CommandPolicy()
        wordpress.reset()
        self.baseline = SiteBaseline(wordpress)
        options = [row.get("option_name", "") for row in self.baseline.rows("wp_options").values()]
        self.grammar = Grammar(wordpress.facts, synopses_of(wordpress.wp), options)
        self.tally = Tally()

    def decide(self, command: str) -> PolicyDecision:
        """The agent's decision without a session scope: the policy, then the site checks of a write."""
        decision = self.policy.classify(command)
        return guard_post_targets(decision, self._read)

    def run_random(self, rng: random.Random) -> Violation | None:
        return self.run(self.grammar.command(rng))

    def run(self, command: str) -> Violation | None:
        started = time.monotonic()
        try:
            decision = self.decide(command)
            self.tally.decisions[decision.category.value] += 1
            if decision.category is PolicyCategory.READ:
                return self._run(command, decision, READS_CHANGE_NOTHING)
            if decision.category is not PolicyCategory.WRITE:
                return None
            return self._run(command, decision, WRITE_EFFECTS[decision.command_path])
        finally:
            self.tally.seconds += time.monotonic() - started

    def _run(self, command: str, decision: PolicyDecision, effect: Effect) -> Violation | None:
        path = decision.command_path
        reading = effect is READS_CHANGE_NOTHING
        self.tally.ran += 1
        self.tally.paths[" ".join(path) + (" (read)" if reading else "")] += 1
        done = self.wordpress.wp(*decision.argv)
        if done.returncode != 0:
            self.tally.failed += 1
            self.tally.failures[" ".join(path)] += 1
            self.tally.last_errors[" ".join(path)] = f"{command} -> {done.stderr.strip()[-200:]}"
        change = self.baseline.changes()
        violation = None
        if not change.empty:
            self.tally.changed += 1
            check = EffectCheck(
                self.baseline, WRITE_EFFECTS[path], ParsedCommand.from_argv(decision.argv), path
            )
            problems = check.violations(change)
            if problems:
                violation = Violation(command, problems)
                self.tally.violations.append(violation)
        self.baseline.restore(change)
        return violation

    def _read(self, argv: list[str]) -> str | None:
        """The agent's state reader on the sandbox: a policy-checked read, its stdout or None."""
        if self.policy.classify_argv(argv).category is not PolicyCategory.READ:
            return None
        done = self.wordpress.wp(*argv)
        return done.stdout if done.returncode == 0 else None
