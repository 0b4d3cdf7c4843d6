"""Session transitions that need no model or WP-CLI: decisions, expiry, cancellation, finishing.

Shared by AgentTurn (local loop) and the serverless API / workflow tasks.
"""

from __future__ import annotations

from wp_agent.agent import approval_protocol, outcome
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.audit_outbox import audit
from wp_agent.agent.ports import ApprovalDecision
from wp_agent.agent.session_state import CommandStatus, SessionState, SessionStatus
from wp_agent.errors import AgentErrorCode, RunCancelledError, RunInfrastructureError, WpAgentError
from wp_agent.policy.masking import mask_text


def finish(
    state: SessionState,
    status: SessionStatus,
    *,
    response: str = "",
    error: WpAgentError | None = None,
    simulated: bool = False,
    expired: bool = False,
) -> None:
    """End the run. Its first end also puts the run's one end record in the outbox (saved and
    delivered with this state, so a retried step that ends it again cannot write a second)."""
    ending = not state.status.terminal
    state.status = status
    state.result = outcome.build_output(state, response=response, error=error, simulated=simulated)
    if ending:
        _record_end(state, "expired" if expired else status.value.lower())


def _record_end(state: SessionState, how: str) -> None:
    """The run summary (`history`, the API's run and activity views): how the run ended
    (completed / failed / cancelled / expired) with its error code, the instruction and the answer."""
    result = state.result
    error = result.error if result is not None else None
    answer = (result.response or (error.message if error else "")) if result is not None else ""
    audit(
        state,
        AuditEventType.RUN_SUMMARY,
        instruction=mask_text(state.input.message),
        answer=mask_text(answer),
        status=how,
        error=error.code.value if error is not None else None,
        reverts_run_id=state.reverts_run_id,
    )


def record_decision(state: SessionState, decision: ApprovalDecision) -> None:
    """The requester's decision on the pending approval; the next turn acts on it."""
    pending = state.pending_approval
    if state.status.terminal or pending is None:
        raise WpAgentError(AgentErrorCode.CONFIRMATION_REQUIRED, "承認待ちの操作はありません。")
    try:
        approval_protocol.decide(
            state,
            pending.approval_id,
            decided_by=decision.decided_by,
            approved=decision.approved,
            comment=decision.comment,
            declined=decision.declined,
        )
    except approval_protocol.ApprovalRefusedError as refused:
        raise WpAgentError(AgentErrorCode.CONFIRMATION_REQUIRED, "承認待ちの操作はありません。") from refused
    if decision.approved and decision.declined:  # approved in part: the declined ones never run
        for record in state.commands:
            if record.approval_id == pending.approval_id and record.tool_use_id in decision.declined:
                record.status = CommandStatus.REJECTED


def expire_approval(state: SessionState, *, simulated: bool = False) -> bool:
    """The approval wait ended without the run resuming: nothing held runs; the run ends with
    CONFIRMATION_REQUIRED. Also when a decision was recorded but never reached the wait (too late)."""
    pending = state.pending_approval
    if pending is None or not approval_protocol.expire(state):
        return False
    error = WpAgentError(
        AgentErrorCode.CONFIRMATION_REQUIRED,
        "承認の期限が切れたため、確認が必要な操作は実行されませんでした。",
        details=outcome.approval_details(pending),
    )
    finish(state, SessionStatus.FAILED, error=error, simulated=simulated, expired=True)
    return True


def cancel_run(state: SessionState, *, simulated: bool = False) -> bool:
    """The requester cancelled the run (audited); a command already running finishes."""
    if state.status.terminal:
        return False
    approval_protocol.cancel(state)
    audit(state, AuditEventType.RUN_CANCELLED)
    finish(state, SessionStatus.CANCELLED, error=RunCancelledError(), simulated=simulated)
    return True


def fail_run(state: SessionState, reason: str, *, simulated: bool = False) -> bool:
    """An infrastructure failure ended the run; the session records it (no internals shown)."""
    if state.status.terminal:
        return False
    approval_protocol.cancel(state)
    finish(state, SessionStatus.FAILED, error=RunInfrastructureError(reason), simulated=simulated)
    return True
