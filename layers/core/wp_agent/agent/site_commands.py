"""WP-CLI on a session's site, for the turn: the reads its decisions ask for and the commands it runs,
each in one of the target's SSH slots, and the log line and metrics of a command that ran. Nothing here
changes the session: the turn records what these return."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from wp_agent.agent.ports import RateLimiter
from wp_agent.agent.session_state import CommandRecord
from wp_agent.agent.site_scope import SiteScope, apply_site_scope
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.port import CommandResult, WpCli
from wp_agent.masking import mask_command
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.telemetry import (
    COMMANDS_BLOCKED_TOTAL,
    COMMANDS_EXECUTED_TOTAL,
    SSH_CONNECTION_FAILURES_TOTAL,
    Telemetry,
)

logger = logging.getLogger(__name__)
RATE_LIMIT_RULE = "rate_limit.commands_per_user"


class SiteCommands:
    def __init__(
        self, wp_cli: WpCli, limiter: RateLimiter, policy: CommandPolicy, telemetry: Telemetry
    ) -> None:
        self._wp_cli = wp_cli
        self._limiter = limiter
        self._policy = policy
        self._telemetry = telemetry

    def over_quota(self, user_id: str, intent_id: str) -> tuple[str, str] | None:
        """Why the user's command quota refuses this command (its rule, the Japanese reason), or None
        when it may run; counted once per intent (see RateLimiter.before_command)."""
        try:
            self._limiter.before_command(user_id, intent_id)
        except WpAgentError as exc:
            self._telemetry.count(COMMANDS_BLOCKED_TOTAL)
            return RATE_LIMIT_RULE, exc.message_ja
        return None

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
