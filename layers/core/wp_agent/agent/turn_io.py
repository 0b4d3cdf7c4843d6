"""What every part of a turn shares: its dependencies and its side effects (checkpoint, progress,
audit, finishing the run), kept in one place so the parts stay about their own step."""

from __future__ import annotations

import threading
from typing import Any

from wp_agent.agent import audit_outbox, lifecycle
from wp_agent.agent.approval_summary import StateReader
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.ports import AgentDeps, ProgressEvent
from wp_agent.agent.session_state import CommandRecord, CommandStatus, SessionState, SessionStatus
from wp_agent.agent.site_scope import apply_site_scope
from wp_agent.agent.tool_results import result_for
from wp_agent.errors import WpAgentError
from wp_agent.masking import mask_command, mask_command_output, mask_text
from wp_agent.policy import PolicyCategory


class TurnIO:
    """The turn's dependencies plus the effects its parts share; safe across threads (commands of
    one tool step run in parallel and checkpoint under the lock)."""

    def __init__(self, deps: AgentDeps) -> None:
        self.deps = deps
        self.lock = threading.RLock()

    def checkpoint(self, state: SessionState) -> None:
        """Save the state, then deliver the audit records it holds (they are true once saved)."""
        with self.lock:
            self.deps.store.save(state)
            audit_outbox.deliver(state, self.deps.audit)

    def emit(self, kind: str, message: str, command: str | None = None) -> None:
        if self.deps.progress is not None:
            self.deps.progress(ProgressEvent(kind, message, command))

    def finish(
        self,
        state: SessionState,
        status: SessionStatus,
        *,
        response: str = "",
        error: WpAgentError | None = None,
    ) -> None:
        lifecycle.finish(state, status, response=response, error=error, simulated=self.deps.wp_cli.simulated)

    def state_reader(self, state: SessionState, reason: str) -> StateReader:
        """Read-only commands the approval summary runs to say what will really happen (is the
        post already in the trash? which role does the user have now?). Policy-checked, scoped to
        the session's site and audited like any command; a refused or failed read gives None."""
        deps = self.deps

        def read(argv: list[str]) -> str | None:
            decision = apply_site_scope(deps.policy.classify_argv(argv), state)
            if decision.category is not PolicyCategory.READ:
                return None
            fields: dict[str, Any] = {
                "command": mask_command(" ".join(decision.argv)),
                "reason": reason,
                "category": decision.category.value,
                "rule": decision.rule,
            }
            try:
                with deps.limiter.command_slot(state.target_id):
                    result = deps.wp_cli.run(list(decision.argv))
            except WpAgentError as exc:
                audit_outbox.audit(
                    state, AuditEventType.COMMAND_EXECUTED, success=False, error=exc.code.value, **fields
                )
                return None
            audit_outbox.audit(state, AuditEventType.COMMAND_EXECUTED, success=result.ok,
                               exit_code=result.exit_code, duration_ms=result.duration_ms, **fields)  # fmt: skip
            return result.stdout if result.ok else None

        return read

    def result_for(self, record: CommandRecord) -> dict[str, Any]:
        return result_for(
            record, timeout_ms=self.deps.settings.wp_cli_timeout, simulated=self.deps.wp_cli.simulated
        )

    def settle_after_retry(self, state: SessionState, record: CommandRecord) -> CommandRecord:
        """A record a crashed attempt left "started": its outcome is unknown (never run twice)."""
        if record.status is CommandStatus.STARTED:
            record.status = CommandStatus.UNKNOWN
            self.audit_record(state, AuditEventType.COMMAND_OUTCOME_UNKNOWN, record)
        return record

    def audit_record(
        self,
        state: SessionState,
        event_type: AuditEventType,
        record: CommandRecord,
        *,
        approval_id: str | None = None,
        approver: str | None = None,
    ) -> None:
        error = None
        if record.error_code is not None:
            error = record.error_code.value
        elif record.status is CommandStatus.FINISHED and record.exit_code not in (0, None):
            error = mask_command_output(record.stderr[:1_000])
        executed = event_type is AuditEventType.COMMAND_EXECUTED
        audit_outbox.audit(
            state,
            event_type,
            command=record.command,
            reason=mask_text(record.reason),
            category=record.category.value,
            rule=record.rule,
            policy_reason=record.policy_reason,
            success=record.succeeded if executed else None,
            exit_code=record.exit_code,
            duration_ms=record.duration_ms if executed else None,
            error=error,
            approval_id=approval_id or record.approval_id,
            approver=approver,
        )
