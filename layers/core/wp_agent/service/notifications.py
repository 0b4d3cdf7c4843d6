"""The events a run emits (README "Events"): built from session state, secrets-free."""

from __future__ import annotations

from typing import Any

from wp_agent.agent.outcome import current_run_status
from wp_agent.agent.session_state import SessionState, SessionStatus
from wp_agent.models.events import APPROVAL_REQUESTED, RUN_COMPLETED, RUN_FAILED
from wp_agent.service.ports import EventSink
from wp_agent.telemetry import ERRORS_TOTAL, FAILED_REQUESTS_TOTAL, SERVICE_FAULT_CODES, Telemetry


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


def run_finished(events: EventSink, state: SessionState, telemetry: Telemetry) -> None:
    """Tell the backend the run ended, and count its error (spec §10.3 errors by code)."""
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
    completed = state.status is SessionStatus.COMPLETED and (result is None or result.success)
    events.publish(RUN_COMPLETED if completed else RUN_FAILED, detail)
