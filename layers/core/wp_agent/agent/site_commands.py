"""WP-CLI on a session's site, for the turn: the reads its decisions ask for (agent/site_reads.py) and
the commands it runs, each in one of the target's SSH slots, and the log line and metrics of a command
that ran. Nothing here changes the session: the turn records what these return (the audit fields of
every read that ran)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from wp_agent.agent.ports import RateLimiter
from wp_agent.agent.session_state import CommandRecord
from wp_agent.agent.site_reads import Argv, SiteReads
from wp_agent.agent.site_scope import SiteScope, apply_site_scope
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.port import CommandResult, WpCli
from wp_agent.masking import mask_command
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.telemetry import COMMANDS_EXECUTED_TOTAL, SSH_CONNECTION_FAILURES_TOTAL, Telemetry

logger = logging.getLogger(__name__)
T = TypeVar("T")
_READ_ROUNDS = 4  # a decision reading what an earlier read named (a user, then their posts) — and a cap


class SiteCommands:
    def __init__(
        self, wp_cli: WpCli, limiter: RateLimiter, policy: CommandPolicy, telemetry: Telemetry
    ) -> None:
        self._wp_cli = wp_cli
        self._limiter = limiter
        self._policy = policy
        self._telemetry = telemetry

    def run(self, target_id: str, argv: Sequence[str]) -> CommandResult:
        with self._limiter.command_slot(target_id):
            return self._wp_cli.run(list(argv))

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
        }
        try:
            result = self.run(target_id, decision.argv)
        except WpAgentError as exc:
            return None, {**fields, "success": False, "error": exc.code.value}
        audited = {"success": result.ok, "exit_code": result.exit_code, "duration_ms": result.duration_ms}
        return (result.stdout if result.ok else None), {**fields, **audited}

    def decided(
        self, scope: SiteScope, target_id: str, reason: str, decide: Callable[[SiteReads], T]
    ) -> tuple[T, list[dict[str, Any]]]:
        """What `decide` decides once the site has answered the reads it asks for (each round may ask
        for what an earlier answer named), and the audit fields of the reads that ran."""
        answers: dict[Argv, str | None] = {}
        audited: list[dict[str, Any]] = []
        for _ in range(_READ_ROUNDS):
            site = SiteReads(answers)
            decided = decide(site)
            if not site.requested:
                break
            for argv in site.requested:
                answers[argv], fields = self.read(scope, target_id, reason, list(argv))
                audited += [fields] if fields is not None else []
        return decided, audited

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
