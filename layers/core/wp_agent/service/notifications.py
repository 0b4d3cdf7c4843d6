"""The events a run emits (README "Events"): built from session state, secrets-free."""

from __future__ import annotations

from typing import Any

from wp_agent.agent.outcome import current_run_status
from wp_agent.agent.session_state import ApprovalStatus, PendingApproval, SessionState, SessionStatus
from wp_agent.models.events import (
    APPROVAL_DECIDED,
    APPROVAL_REQUESTED,
    RUN_CANCELLED,
    RUN_COMPLETED,
    RUN_FAILED,
    RUN_UNDONE,
)
from wp_agent.models.run_status import RunStatus
from wp_agent.service.ports import EventSink
from wp_agent.telemetry import ERRORS_TOTAL, FAILED_REQUESTS_TOTAL, SERVICE_FAULT_CODES, Telemetry
from wp_agent.undo.revert_run import undo_completed

# An approval closed by its run's end rather than by an answer (announced with the run's end).
_CLOSED_BY_THE_RUN = (ApprovalStatus.EXPIRED, ApprovalStatus.CANCELLED)


def _base(state: SessionState) -> dict[str, Any]:
    return {
        "sessionId": state.session_id,
        "runId": state.run_id,
        "userId": state.user_id,
        "targetId": state.target_id,
        "status": state.status.value,
        "runStatus": current_run_status(state).value,
    }


def approval_requested(events: EventSink, state: SessionState) -> None:
    pending = state.pending_approval
    if pending is None:
        return
    detail = _base(state) | {
        "approvalId": pending.approval_id,
        "approvalStatus": pending.status.value,
        "expiresAt": pending.expires_at,
        "commands": [
            {"command": i.command, "summary": i.summary_ja, "impact": i.impact_ja} for i in pending.items
        ],
    }
    events.publish(APPROVAL_REQUESTED, detail)


def approval_decided(events: EventSink, state: SessionState, approval_id: str) -> None:
    """Tell the backend an approval closed (approved, rejected, expired or cancelled)."""
    approval = state.find_approval(approval_id)
    if approval is None or approval.status is ApprovalStatus.PENDING:
        return
    _announce_decision(events, state, approval)


def _closed_by_this_run(state: SessionState, approval: PendingApproval) -> bool:
    if approval.status not in _CLOSED_BY_THE_RUN:
        return False
    if approval.run_id is None:  # stored before approvals named their run: the pending one is this run's
        return approval is state.pending_approval
    return approval.run_id == state.run_id


def _announce_decision(events: EventSink, state: SessionState, approval: PendingApproval) -> None:
    detail: dict[str, Any] = {
        "sessionId": state.session_id,
        "runId": approval.run_id or state.run_id,
        "userId": state.user_id,
        "targetId": state.target_id,
        "approvalId": approval.approval_id,
        "approvalStatus": approval.status.value,
        "decidedAt": approval.decided_at or approval.requested_at,
    }
    if approval.status in (ApprovalStatus.APPROVED, ApprovalStatus.REJECTED) and approval.decided_by:
        detail["decidedBy"] = approval.decided_by
    events.publish(APPROVAL_DECIDED, detail)


def run_finished(events: EventSink, state: SessionState, telemetry: Telemetry) -> None:
    """Tell the backend the run ended (with the approval its end closed, and, for an undo run that put
    everything back, the run it undid), and count its error (spec §10.3 errors by code)."""
    result = state.result
    code = result.error.code.value if result is not None and result.error is not None else None
    if code is not None:
        telemetry.count(ERRORS_TOTAL, dimensions={"ErrorCode": code})
        if code in SERVICE_FAULT_CODES:
            telemetry.count(FAILED_REQUESTS_TOTAL)
    detail = _base(state)
    if result is not None:
        detail["success"] = result.success
        detail["response"] = result.response[:2_000]
        if result.error is not None:
            detail["errorCode"] = result.error.code.value
            detail["errorMessage"] = result.error.message
        if result.metadata is not None:
            detail["metadata"] = result.metadata.to_json_dict()
    for approval in [*state.approval_history, state.pending_approval]:
        if approval is not None and _closed_by_this_run(state, approval):
            _announce_decision(events, state, approval)
    completed = state.status is SessionStatus.COMPLETED and (result is None or result.success)
    if completed:
        events.publish(RUN_COMPLETED, detail)
    elif detail["runStatus"] == RunStatus.CANCELLED:
        events.publish(RUN_CANCELLED, detail)
    else:
        events.publish(RUN_FAILED, detail)
    if completed and state.reverts_run_id and undo_completed(state.run_commands()):
        undone = {
            "sessionId": state.session_id,
            "runId": state.reverts_run_id,
            "undoRunId": state.run_id,
            "userId": state.user_id,
            "targetId": state.target_id,
            "runStatus": RunStatus.UNDONE.value,
        }
        events.publish(RUN_UNDONE, undone)
