"""Session transitions that need no model or WP-CLI: a run starts (a new session, or a follow-up run
in a finished one, with the messages the model sees first), is decided, expires, is cancelled, fails,
finishes.

Shared by AgentTurn (local loop) and the serverless API / workflow tasks.
"""

from __future__ import annotations

import uuid
from typing import Any

from wp_agent import clock
from wp_agent.agent import approval_protocol, outcome
from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.audit_outbox import audit, command_fields, new_event
from wp_agent.agent.ports import ApprovalDecision
from wp_agent.agent.prompt import multisite_note
from wp_agent.agent.session_state import CommandStatus, SessionState, SessionStatus
from wp_agent.agent.tool_results import closing_results
from wp_agent.errors import (
    AgentErrorCode,
    OwnerRemovedError,
    RunCancelledError,
    RunInfrastructureError,
    SessionBusyError,
    WpAgentError,
)
from wp_agent.masking import mask_text
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.target import Role, UpdateAllowance

# -- a run starts ---------------------------------------------------------------------------------


def new_run_id() -> str:
    return f"run_{uuid.uuid4().hex[:20]}"


def _as_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def new_session(
    agent_input: AgentInput,
    *,
    session_id: str,
    user_id: str,
    target_id: str,
    site_url: str | None = None,
    run_id: str | None = None,
    network_admin: bool = False,
    role: Role = Role.ADMIN,
    update_allowance: UpdateAllowance | None = None,
) -> SessionState:
    """Initial state: conversation history (text only) + the new instruction as the last user message.
    `network_admin`: may run network-level commands when no site is chosen (the target's network admins).
    `role`: the requester's role on the target (locally the operator is its administrator; a served
    run takes it from the registry in `start_run` and every turn in `refresh_rights`).
    `update_allowance`: the updates the site's owner allows without a per-change approval (a named site's)."""
    messages: list[dict[str, Any]] = []
    for item in agent_input.conversation_history or []:
        content = (
            item.content
            if isinstance(item.content, str)
            else [b for b in item.content if b.get("type") == "text"]
        )
        if not content:
            continue
        if messages and messages[-1]["role"] == item.role:
            previous = messages[-1]["content"]
            messages[-1]["content"] = (
                f"{previous}\n\n{content}"
                if isinstance(previous, str) and isinstance(content, str)
                else [*_as_blocks(previous), *_as_blocks(content)]
            )
        else:
            messages.append({"role": item.role, "content": content})
    text = agent_input.message
    network_wide = bool(agent_input.multisite and agent_input.multisite.network_wide)
    note = multisite_note(site_url, network_wide)
    if note:
        text = f"{text}\n\n{note}"
    if messages and messages[-1]["role"] == "user":
        messages.append({"role": "assistant", "content": "承知しました。続きの指示をどうぞ。"})
    messages.append({"role": "user", "content": text})
    state = SessionState(
        session_id=session_id,
        run_id=run_id or new_run_id(),
        user_id=user_id,
        target_id=target_id,
        input=agent_input,
        messages=messages,
        started_at=clock.now_iso(),
        site_url=site_url,
        network_admin=network_admin,
        role=role,
        update_allowance=update_allowance,
    )
    _record_start(state)
    return state


def _record_start(state: SessionState) -> None:
    audit(state, AuditEventType.RUN_STARTED, instruction=mask_text(state.input.message))


def continue_session(
    state: SessionState, agent_input: AgentInput, *, run_id: str | None = None, timeout_ms: int = 60_000
) -> None:
    """Start a follow-up run in a finished session: the conversation so far stays the context."""
    if not state.status.terminal and state.status is not SessionStatus.IDLE:
        raise SessionBusyError()
    # A run that ended mid-way (expiry, cancel, failure) may have left tool calls unanswered.
    closing = closing_results(state, timeout_ms=timeout_ms)
    if closing:
        state.messages.append({"role": "user", "content": closing})
        state.held_results = []
    approval_protocol.cancel(state)
    if state.messages and state.messages[-1]["role"] == "user":
        # The previous run ended without an assistant reply (e.g. an error); keep roles alternating.
        state.messages.append({"role": "assistant", "content": "（前回の処理は途中で終了しました）"})
    state.messages.append({"role": "user", "content": agent_input.message})
    state.input = agent_input
    # A follow-up is a run of its own: never the fleet run this session was part of (its plan and its
    # approval covered that run only).
    state.fleet = None
    state.run_id = run_id or new_run_id()
    state.status = SessionStatus.IDLE
    state.iterations = 0
    state.elapsed_ms = 0
    state.stop_reason = None
    state.result = None
    _record_start(state)


def start_run(
    state: SessionState,
    *,
    site_url: str | None,
    network_admin: bool,
    role: Role | None,
    update_allowance: UpdateAllowance | None = None,
    reverts_run_id: str | None = None,
    execution_arn: str | None = None,
) -> None:
    """A new or follow-up run is about to begin (serverless): its site, the requester's rights as the
    registry says now (role None: not a member), the run it reverts (an undo run) and its workflow
    execution."""
    state.site_url = site_url
    state.network_admin = network_admin
    state.role = role
    state.update_allowance = update_allowance
    state.reverts_run_id = reverts_run_id
    state.runs[state.run_id] = reverts_run_id  # which run each undo reverts (an undo of an undo too)
    state.execution_arn = execution_arn
    state.status = SessionStatus.PLANNING


def refresh_rights(
    state: SessionState,
    *,
    role: Role | None,
    network_admin: bool,
    update_allowance: UpdateAllowance | None = None,
) -> bool:
    """Rights as the registry says now, every turn: a removed owner's or member's run ends (role None),
    a removed network administrator loses network-level commands, a member whose role changed gets
    the new role's commands only (the turn's policy and the approval re-check apply it). False: the
    run was ended (its refusal audited)."""
    if role is None:
        refuse_run(state, OwnerRemovedError(), rule=OWNER_REMOVED_RULE)
        return False
    state.network_admin = network_admin
    state.role = role
    state.update_allowance = update_allowance
    return True


OWNER_REMOVED_RULE = "role.owner_removed"
_WAITING = {CommandStatus.QUEUED, CommandStatus.HELD}


def refuse_run(state: SessionState, error: WpAgentError, *, rule: str) -> None:
    """The run may not go on (the requester lost the right to): what was about to run (approved,
    queued) or waited for approval is refused, one `command_blocked` record each with the rule; a run
    with nothing waiting gets one `run_refused` record. The run ends Failed with the error."""
    approval_protocol.cancel(state)
    waiting = [r for r in state.run_commands() if r.status in _WAITING]
    for record in waiting:
        record.status, record.rule, record.policy_reason = CommandStatus.BLOCKED, rule, error.message_ja
        audit(state, AuditEventType.COMMAND_BLOCKED, **command_fields(record, AuditEventType.COMMAND_BLOCKED))
    if not waiting:
        audit(
            state,
            AuditEventType.RUN_REFUSED,
            rule=rule,
            policy_reason=error.message_ja,
            error=error.code.value,
        )
    finish(state, SessionStatus.FAILED, error=error)


# -- a run is decided, expires, is cancelled, fails, finishes ------------------------------------


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
    if status is SessionStatus.COMPLETED and outcome.refused_run(state) is not None:
        status = SessionStatus.FAILED  # every command was refused: the run did nothing it was asked
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
        time_zone=state.site_time_zone,
    )


def held_summary(state: SessionState) -> AuditEvent | None:
    """The end record of a run that stops held for a decision taken elsewhere (`wp-agent approve`),
    for the front door to write: status awaiting_approval, the instruction (masked). None for a run
    that ended (its first end wrote its own, exactly once) or that is not held."""
    if state.status is not SessionStatus.AWAITING_APPROVAL:
        return None
    return new_event(
        AuditEventType.RUN_SUMMARY,
        state.audit_about(),
        instruction=mask_text(state.input.message),
        answer="",
        status="awaiting_approval",
        reverts_run_id=state.reverts_run_id,
        time_zone=state.site_time_zone,
    )


def record_decision(state: SessionState, decision: ApprovalDecision) -> None:
    """The requester's decision on the pending approval; the next turn acts on it. A decision the
    approval protocol refuses raises its one refusal type, ApprovalRefusedError (each front door
    maps it once: the API to its error codes, the local runner and MCP by expiring the approval)."""
    pending = state.pending_approval
    if state.status.terminal:
        raise approval_protocol.ApprovalRefusedError(approval_protocol.Refusal.RUN_ENDED)
    if pending is None:
        raise approval_protocol.ApprovalRefusedError(approval_protocol.Refusal.NOT_FOUND)
    approval_protocol.decide(
        state,
        pending.approval_id,
        decided_by=decision.decided_by,
        approved=decision.approved,
        comment=decision.comment,
        declined=decision.declined,
    )
    if decision.approved and decision.declined:  # approved in part: the declined ones never run
        for record in state.commands:
            if record.approval_id == pending.approval_id and record.tool_use_id in decision.declined:
                record.status = CommandStatus.REJECTED


def expire_approval(state: SessionState, *, simulated: bool = False) -> bool:
    """The approval wait ended without the run resuming: nothing held runs; the run ends with
    APPROVAL_EXPIRED. Also when a decision was recorded but never reached the wait (too late)."""
    pending = state.pending_approval
    if pending is None or not approval_protocol.expire(state):
        return False
    error = WpAgentError(AgentErrorCode.APPROVAL_EXPIRED, details=outcome.approval_details(pending))
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
