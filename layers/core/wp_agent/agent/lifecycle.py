"""Session transitions that need no model or WP-CLI: decisions, expiry, cancellation, finishing.

Shared by AgentTurn (local loop) and the serverless API / workflow tasks.
"""

from __future__ import annotations

import logging
from typing import Any

from wp_agent.agent import outcome
from wp_agent.agent.ports import ApprovalDecision, AuditEvent, AuditEventType, AuditLog
from wp_agent.agent.session_state import ApprovalStatus, SessionState, SessionStatus
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.models.agent_io import utc_now_iso
from wp_agent.policy.categories import PolicyCategory

logger = logging.getLogger(__name__)


def audit(log: AuditLog, state: SessionState, event_type: AuditEventType, **fields: Any) -> None:
    """Append to the audit log and write the same record as an `audit` log line (spec §10.1)."""
    event = AuditEvent(
        type=event_type,
        user_id=state.user_id,
        session_id=state.session_id,
        target_id=state.target_id,
        **fields,
    )
    log.append(event)
    details = event.model_dump(mode="json", exclude_none=True, exclude={"type"})
    logger.info("audit record", extra={"type": "audit", "event": event_type.value, **details})


def finish(
    state: SessionState,
    status: SessionStatus,
    *,
    response: str = "",
    error: WpAgentError | None = None,
    simulated: bool = False,
) -> None:
    state.status = status
    state.result = outcome.build_output(state, response=response, error=error, simulated=simulated)


def record_decision(state: SessionState, decision: ApprovalDecision, log: AuditLog) -> None:
    """The requester's decision on the pending approval; the next turn acts on it."""
    pending = state.pending_approval
    if state.status.terminal or pending is None or pending.status is not ApprovalStatus.PENDING:
        raise WpAgentError(AgentErrorCode.CONFIRMATION_REQUIRED, "承認待ちの操作はありません。")
    pending.status = ApprovalStatus.APPROVED if decision.approved else ApprovalStatus.REJECTED
    pending.decided_by = decision.decided_by
    pending.decided_at = utc_now_iso()
    pending.comment = decision.comment
    event_type = AuditEventType.APPROVAL_APPROVED if decision.approved else AuditEventType.APPROVAL_REJECTED
    for item in pending.items:
        audit(
            log,
            state,
            event_type,
            command=item.command,
            category=PolicyCategory.DESTRUCTIVE.value,
            rule=item.rule,
            approval_id=pending.approval_id,
            approver=decision.decided_by,
            comment=decision.comment,
        )


def expire_approval(state: SessionState, log: AuditLog, *, simulated: bool = False) -> bool:
    """The approval wait ended without the run resuming: nothing held runs; the run ends with
    CONFIRMATION_REQUIRED. Also when a decision was recorded but never reached the wait (too late)."""
    pending = state.pending_approval
    if (
        state.status.terminal
        or pending is None
        or pending.status in {ApprovalStatus.EXPIRED, ApprovalStatus.CANCELLED}
    ):
        return False
    pending.status = ApprovalStatus.EXPIRED
    pending.decided_at = utc_now_iso()
    pending.task_token = None
    for item in pending.items:
        audit(
            log,
            state,
            AuditEventType.APPROVAL_EXPIRED,
            command=item.command,
            rule=item.rule,
            approval_id=pending.approval_id,
        )
    error = WpAgentError(
        AgentErrorCode.CONFIRMATION_REQUIRED,
        "承認の期限が切れたため、確認が必要な操作は実行されませんでした。",
        details=outcome.approval_details(pending),
    )
    finish(state, SessionStatus.FAILED, error=error, simulated=simulated)
    return True


def archive_pending_approval(state: SessionState) -> None:
    """Move an approval the run no longer waits for into the history (decisions then get 409, not 404)."""
    pending = state.pending_approval
    if pending is None:
        return
    if pending.status is ApprovalStatus.PENDING:
        pending.status = ApprovalStatus.CANCELLED
        pending.decided_at = utc_now_iso()
    pending.task_token = None
    state.approval_history.append(pending)
    state.pending_approval = None


def cancel_run(state: SessionState, *, simulated: bool = False) -> bool:
    if state.status.terminal:
        return False
    archive_pending_approval(state)
    error = WpAgentError(
        AgentErrorCode.UNKNOWN_ERROR,
        "利用者の指示により処理を中止しました。",
        details={"reason": "cancelled"},
    )
    finish(state, SessionStatus.CANCELLED, error=error, simulated=simulated)
    return True


def fail_run(state: SessionState, reason: str, *, simulated: bool = False) -> bool:
    """An infrastructure failure ended the run; the session records it (no internals shown)."""
    if state.status.terminal:
        return False
    archive_pending_approval(state)
    error = WpAgentError(
        AgentErrorCode.UNKNOWN_ERROR,
        "処理中にシステムエラーが発生したため中断しました。時間をおいて再度お試しください。",
        details={"reason": reason},
    )
    finish(state, SessionStatus.FAILED, error=error, simulated=simulated)
    return True
