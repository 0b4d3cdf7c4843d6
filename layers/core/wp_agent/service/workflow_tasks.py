"""The state machine's tasks: one agent turn, the approval wait, expiry, failure recording."""

from __future__ import annotations

import logging
from typing import Any

from wp_agent.agent import approval_protocol, audit_outbox, lifecycle
from wp_agent.agent.ledger import Moment, commit
from wp_agent.agent.session_state import SessionState, SessionStatus
from wp_agent.errors import StaleSessionError
from wp_agent.models.target import Target
from wp_agent.models.workflow import Route
from wp_agent.service import notifications
from wp_agent.service.runtime import AwsRuntime
from wp_agent.service.session_updates import update_session
from wp_agent.telemetry import APPROVALS_RESOLVED_TOTAL, REQUESTS_TOTAL

logger = logging.getLogger(__name__)

_STALE_ATTEMPTS = 3


class WorkflowTaskError(Exception):
    """A state-machine task cannot proceed; Step Functions catches it and records the failure."""


def _route(state: SessionState, result: Route) -> dict[str, Any]:
    pending = state.pending_approval
    return {
        "sessionId": state.session_id,
        "runId": state.run_id,
        "route": result.value,
        "approvalId": pending.approval_id
        if pending is not None and result is Route.AWAITING_APPROVAL
        else None,
    }


def _ended(state: SessionState) -> Route:
    """How a finished session ends the execution: a requester's cancel is not a workflow failure."""
    return (
        Route.COMPLETED
        if state.status in {SessionStatus.COMPLETED, SessionStatus.CANCELLED}
        else Route.FAILED
    )


def _load_run(runtime: AwsRuntime, session_id: str, run_id: str) -> SessionState:
    state = runtime.sessions.load(session_id)
    if state is None:
        raise WorkflowTaskError(f"session {session_id} not found")
    if state.run_id != run_id:
        raise WorkflowTaskError(f"run {run_id} is not the session's current run")
    return state


def refresh_rights(state: SessionState, target: Target) -> bool:
    """Rights come from the registry as it is now, every turn: a removed owner's or member's run
    ends, a removed network administrator loses network-level commands, a changed role applies from
    this turn on (False: the run was ended)."""
    return lifecycle.refresh_rights(
        state,
        role=target.role_of(state.user_id),
        network_admin=target.multisite and target.network_admin(state.user_id),
        update_allowance=target.update_allowance,
    )


def run_turn(runtime: AwsRuntime, session_id: str, run_id: str) -> dict[str, Any]:
    """One agent turn; the answer tells the state machine where to go next."""
    for attempt in range(_STALE_ATTEMPTS):
        state = _load_run(runtime, session_id, run_id)
        if state.status.terminal:
            # Ended by someone else (a cancel): write what its audit trail still holds.
            audit_outbox.deliver(state, runtime.audit)
            return _route(state, _ended(state))
        target = runtime.registry.get(state.target_id)
        if target is None:
            lifecycle.fail_run(state, "target_missing")
            commit(runtime.sessions, runtime.audit, state, Moment.RUN_ENDED)
            notifications.run_finished(runtime.events, state, runtime.telemetry)
            return _route(state, Route.FAILED)
        if not refresh_rights(state, target):
            commit(runtime.sessions, runtime.audit, state, Moment.RIGHTS_CHECKED)
            notifications.run_finished(runtime.events, state, runtime.telemetry)
            return _route(state, Route.FAILED)
        try:
            result = runtime.agent_turn(target).advance(state)
        except StaleSessionError:
            # Someone else changed the session mid-turn: a cancel stands (the reload sees it);
            # otherwise the turn runs again on their state (commands are never run twice: each
            # intent is stored before it runs).
            logger.info(
                "session changed during the turn", extra={"session_id": session_id, "attempt": attempt}
            )
            continue
        if result in (Route.COMPLETED, Route.FAILED):
            notifications.run_finished(runtime.events, state, runtime.telemetry)
        return _route(state, result)
    # Raised, not routed: the workflow's catch then records the failure on the session.
    raise WorkflowTaskError(f"session {session_id} kept changing during the turn")


def wait_for_approval(
    runtime: AwsRuntime, session_id: str, run_id: str, approval_id: str, task_token: str
) -> None:
    """Store the wait's task token on the pending approval and tell the backend an approval is needed.
    A decision that arrived before the token (a fast requester) is answered here."""
    for _ in range(_STALE_ATTEMPTS):
        state = _load_run(runtime, session_id, run_id)
        try:
            came_first = approval_protocol.attach_token(state, approval_id, task_token)
        except approval_protocol.ApprovalRefusedError as refused:
            raise WorkflowTaskError(f"approval {approval_id}: {refused.refusal.value}") from None
        if came_first is not None:
            # The requester answered before the wait began: still announce it (with its status),
            # then hand the stored decision to this wait.
            notifications.approval_requested(runtime.events, state)
            runtime.approval_waits.resume(task_token, came_first)
            return
        try:
            commit(runtime.sessions, runtime.audit, state, Moment.APPROVAL_WAITING)
        except StaleSessionError:
            continue  # the decision may have landed meanwhile; look again
        notifications.approval_requested(runtime.events, state)
        return
    raise WorkflowTaskError(f"could not record the approval wait for {session_id}")


def expire_approval(runtime: AwsRuntime, session_id: str, run_id: str) -> dict[str, Any]:
    """The approval wait timed out: the held commands never run and the run ends."""
    try:
        state, expired = update_session(
            runtime.sessions,
            runtime.audit,
            lambda: _load_run(runtime, session_id, run_id),
            lifecycle.expire_approval,
        )
    except StaleSessionError:
        raise WorkflowTaskError(f"could not record the approval expiry for {session_id}") from None
    if expired:
        runtime.telemetry.count(APPROVALS_RESOLVED_TOTAL)
        notifications.run_finished(runtime.events, state, runtime.telemetry)
    return {"sessionId": session_id, "runId": run_id, "status": state.status.value}


def record_failure(
    runtime: AwsRuntime, session_id: str | None, run_id: str | None, error: Any
) -> dict[str, Any]:
    """Catch-all: mark the session failed with a generic message (the error name only, no cause text)."""
    name = error.get("Error", "Unknown") if isinstance(error, dict) else "Unknown"
    logger.error(
        "run failed in the workflow", extra={"session_id": session_id, "run_id": run_id, "error_name": name}
    )
    if not session_id or not run_id:
        return {"recorded": False}
    state = runtime.sessions.load(session_id)
    if state is None or state.run_id != run_id:
        return {"recorded": False}

    def fail(current: SessionState) -> bool:
        return lifecycle.fail_run(current, f"workflow_error:{name}")

    state, recorded = update_session(
        runtime.sessions, runtime.audit, lambda: _load_run(runtime, session_id, run_id), fail
    )
    if not recorded:
        return {"recorded": False}
    notifications.run_finished(runtime.events, state, runtime.telemetry)
    return {"recorded": True, "sessionId": session_id, "runId": run_id}


def start_scheduled_run(runtime: AwsRuntime, payload: dict[str, Any]) -> dict[str, Any]:
    """A schedule fired: create its session (once per firing) and hand the ids to the turn loop."""
    from wp_agent.agent.lifecycle import new_session
    from wp_agent.models.schedule import ScheduledRunInput

    run = ScheduledRunInput.model_validate(payload)
    session_id = run.session_id()
    existing = runtime.sessions.load(session_id)
    if existing is not None:
        return {"sessionId": existing.session_id, "runId": existing.run_id}
    target = runtime.registry.get(run.target_id)
    if target is None or target.role_of(run.owner_id) is None:  # neither an owner nor a member now
        raise WorkflowTaskError(
            f"schedule {run.schedule_id}: the owner may no longer use target {run.target_id}"
        )
    site_url = run.agent_input.multisite.site_url if run.agent_input.multisite else None
    state = new_session(
        run.agent_input,
        session_id=session_id,
        user_id=run.owner_id,
        target_id=run.target_id,
        site_url=site_url,
    )
    lifecycle.start_run(
        state,
        site_url=site_url,
        network_admin=target.multisite and target.network_admin(run.owner_id),
        role=target.role_of(run.owner_id),
    )
    commit(runtime.sessions, runtime.audit, state, Moment.RUN_STARTED)
    runtime.telemetry.count(REQUESTS_TOTAL)
    return {"sessionId": state.session_id, "runId": state.run_id}
