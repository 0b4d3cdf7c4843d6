"""WP-CLI on a session's site, for the turn: the reads its decisions ask for (policy/site_reads.py), the
site's facts for a run's first model request (agent/site_facts.py, cached per target) and the commands it
runs, each in one of the target's SSH slots, and the log line and metrics of a command that ran. Nothing
here changes the session: the turn records what these return (the audit fields of every read that ran)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from wp_agent.agent import site_facts
from wp_agent.agent.command_outcomes import SYSTEM
from wp_agent.agent.ports import RateLimiter
from wp_agent.agent.session_state import CommandRecord
from wp_agent.agent.site_facts_cache import SiteFactsCache
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.port import CommandResult, WpCli, run_read
from wp_agent.masking import mask_command
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.site_reads import Argv, NeedsReads, SiteReads
from wp_agent.policy.site_scope import SiteScope, apply_site_scope
from wp_agent.telemetry import (
    COMMANDS_BLOCKED_TOTAL,
    COMMANDS_EXECUTED_TOTAL,
    SSH_CONNECTION_FAILURES_TOTAL,
    Telemetry,
)

logger = logging.getLogger(__name__)
T = TypeVar("T")
RATE_LIMIT_RULE = "rate_limit.commands_per_user"
# A decision reading what an earlier read named (a user, then their posts) — and a cap: the last round
# answers what is still unread as a failed read, so it decides.
READ_ROUNDS = 4


class SiteCommands:
    def __init__(
        self,
        wp_cli: WpCli,
        limiter: RateLimiter,
        policy: CommandPolicy,
        telemetry: Telemetry,
        facts_cache: SiteFactsCache | None = None,
    ) -> None:
        self._wp_cli = wp_cli
        self._limiter = limiter
        self._policy = policy
        self._telemetry = telemetry
        self._facts_cache = facts_cache

    def over_quota(self, user_id: str, intent_id: str) -> tuple[str, str] | None:
        """Why the user's command quota refuses this command (its rule, the Japanese reason), or None
        when it may run; counted once per intent (see RateLimiter.before_command)."""
        try:
            self._limiter.before_command(user_id, intent_id)
        except WpAgentError as exc:
            self._telemetry.count(COMMANDS_BLOCKED_TOTAL)
            return RATE_LIMIT_RULE, exc.message_ja
        return None

    def run(self, target_id: str, argv: Sequence[str], *, read: bool = False) -> CommandResult:
        """`argv` in one of the target's slots; `read` (the policy classed it a read): run once more when
        the connection died under it (executors/port.run_read)."""
        with self._limiter.command_slot(target_id):
            return run_read(self._wp_cli, argv) if read else self._wp_cli.run(list(argv))

    def read(
        self, scope: SiteScope, target_id: str, reason: str, argv: list[str]
    ) -> tuple[str | None, dict[str, Any] | None]:
        """A read a decision asked for, policy-checked as a read and scoped to the session's site: its
        stdout (None when refused or failed) and what its audit record says (None: refused, nothing ran)."""
        decision = apply_site_scope(self._policy.classify_argv(argv), scope)
        if decision.category is not PolicyCategory.READ:
            return None, None
        fields: dict[str, Any] = {
            "command": mask_command(" ".join(decision.argv)),
            "reason": reason,
            "category": decision.category.value,
            "rule": decision.rule,
            "origin": SYSTEM,  # the agent's own read, not one the model asked for
        }
        try:
            result = self.run(target_id, decision.argv, read=True)
        except WpAgentError as exc:
            return None, {**fields, "success": False, "error": exc.code.value}
        audited = {"success": result.ok, "exit_code": result.exit_code, "duration_ms": result.duration_ms}
        return (result.stdout if result.ok else None), {**fields, **audited}

    def decided(
        self, scope: SiteScope, target_id: str, reason: str, decide: Callable[[SiteReads], T | NeedsReads]
    ) -> tuple[T, list[dict[str, Any]]]:
        """What `decide` decides once the site has answered the reads it asks for (decided_after_reads,
        below), and the audit fields of the reads that ran. The reads of one round run side
        by side (up to the executor's concurrency), audited in the order asked."""
        audited: list[dict[str, Any]] = []

        def read(reads: Sequence[Argv]) -> list[str | None]:
            answered = self._side_by_side(scope, target_id, reason, reads)
            audited.extend(fields for _, fields in answered if fields is not None)
            return [stdout for stdout, _ in answered]

        return decided_after_reads(decide, read), audited

    def _side_by_side(
        self, scope: SiteScope, target_id: str, reason: str, reads: Sequence[Argv]
    ) -> list[tuple[str | None, dict[str, Any] | None]]:
        if len(reads) == 1:
            return [self.read(scope, target_id, reason, list(reads[0]))]
        workers = max(1, min(len(reads), self._wp_cli.max_concurrency))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="wp-cli") as pool:
            return list(pool.map(lambda argv: self.read(scope, target_id, reason, list(argv)), reads))

    def facts(
        self, scope: SiteScope, target_id: str, plan: site_facts.FactsPlan
    ) -> tuple[dict[Argv, site_facts.ReadAnswer], list[dict[str, Any]]]:
        """The answers to the site-fact reads — from the cache, or read side by side (up to the
        executor's concurrency: channels of the pooled SSH connection, local processes) — and the
        audit fields of the reads that ran."""
        cached = self._facts_cache.get(target_id, plan) if self._facts_cache is not None else None
        if cached is not None:
            return cached, []
        reads = plan.reads
        done = self._side_by_side(scope, target_id, site_facts.READ_REASON, reads)
        answers = {
            argv: site_facts.ReadAnswer(fields["exit_code"], stdout or "")
            for argv, (stdout, fields) in zip(reads, done, strict=True)
            if fields is not None and fields.get("exit_code") is not None
        }
        if self._facts_cache is not None:
            self._facts_cache.put(target_id, plan, answers)
        return answers, [fields for _, fields in done if fields is not None]

    def report(self, record: CommandRecord, **about: Any) -> None:
        """The metrics and the `execution` log line of a command that ran (`about`: whose run)."""
        self._telemetry.count(COMMANDS_EXECUTED_TOTAL)
        if record.error_code is AgentErrorCode.SSH_CONNECTION_FAILED:
            self._telemetry.count(SSH_CONNECTION_FAILURES_TOTAL)
        logger.info(
            "command executed",
            extra={
                "type": "execution",
                "command": record.command,
                "success": record.succeeded,
                "exit_code": record.exit_code,
                "duration_ms": record.duration_ms,
                "error_code": record.error_code.value if record.error_code else None,
                **about,
            },
        )


def decided_after_reads(
    decide: Callable[[SiteReads], T | NeedsReads], read: Callable[[Sequence[Argv]], Sequence[str | None]]
) -> T:
    """What `decide` decides once the site has answered what it asks (each round may ask for what an
    earlier answer named; `read` answers one round's reads, None for a read that failed). Never a
    decision made while a read it asked for was still unread: after READ_ROUNDS rounds, what is still
    unread counts as failed."""
    answers: dict[Argv, str | None] = {}
    for round_ in range(READ_ROUNDS):
        site = SiteReads(answers, final=round_ == READ_ROUNDS - 1)
        decided = decide(site)
        asked = site.requested
        if not asked and not isinstance(decided, NeedsReads):
            return decided
        if not asked:  # not decided, yet nothing left to read: the decider's own mistake
            break
        answers.update(zip(asked, read(asked), strict=True))
    raise RuntimeError("not decided although every read it asked for was answered")
