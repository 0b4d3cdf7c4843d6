"""One run put together from its audit records (the same records `wp-agent history` / `show` read):
the instruction and the answer from its end record (`run_summary`), each command with the policy's
decision, the approver and the outcome. A run still going has no end record: its status then comes
from the session, and `undoAvailable` always does (undo needs the session's before-images)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from wp_agent.agent import command_outcomes
from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.session_state import CommandRecord, SessionState, SessionStatus
from wp_agent.errors import AgentErrorCode
from wp_agent.masking import mask_command, mask_text
from wp_agent.models.api import RunCommandView, RunErrorView, RunView
from wp_agent.models.run_status import RunStatus, ended_status
from wp_agent.policy import PolicyCategory
from wp_agent.undo.revert_run import standing_undo

RunStatusName = Literal["running", "awaiting_approval", "completed", "failed", "cancelled", "expired"]
_LIVE_STATUS: dict[SessionStatus, RunStatusName] = {
    SessionStatus.AWAITING_APPROVAL: "awaiting_approval",
    SessionStatus.COMPLETED: "completed",
    SessionStatus.FAILED: "failed",
    SessionStatus.CANCELLED: "cancelled",
}
_END_STATUS: dict[str, RunStatusName] = {
    "completed": "completed",
    "failed": "failed",
    "cancelled": "cancelled",
    "expired": "expired",
    "awaiting_approval": "awaiting_approval",
}


@dataclass
class _Command:
    view: RunCommandView
    record_command: str = ""


@dataclass
class _Run:
    instruction: str = ""
    answer: str | None = None
    status: RunStatusName | None = None
    error: str | None = None
    ended_at: str | None = None
    reverts_run_id: str | None = None
    commands: list[_Command] = field(default_factory=list)


def build_run_view(state: SessionState, run_id: str, events: list[AuditEvent]) -> RunView | None:
    """The run's view, or None when neither the audit nor the session knows the run."""
    current = state.run_id == run_id
    if not events and not current:
        return None
    run = _Run()
    for event in sorted(events, key=lambda e: e.timestamp):
        _apply(run, event)
    status = run.status
    if status is None:
        status = _LIVE_STATUS.get(state.status, "running") if current else "failed"
    if not run.instruction and current:
        run.instruction = mask_text(state.input.message)
    error = run.error
    if error is None and current and state.status.terminal and state.result and state.result.error:
        error = state.result.error.code.value
    undo = _undo_by_command(state, run_id)
    return RunView(
        run_status=_run_status(
            status, error, run, undone=standing_undo(run_id, state.runs, state.commands) is not None
        ),
        session_id=state.session_id,
        run_id=run_id,
        target_id=state.target_id,
        requested_by=state.user_id,
        status=status,
        error=_error(error),
        instruction=run.instruction,
        answer=run.answer,
        started_at=events[0].timestamp if events else state.started_at,
        ended_at=run.ended_at,
        reverts_run_id=run.reverts_run_id or (state.reverts_run_id if current else None),
        commands=[_with_undo(c, undo) for c in run.commands],
    )


def _run_status(status: RunStatusName, error: str | None, run: _Run, *, undone: bool) -> RunStatus:
    """The run in the one run-status vocabulary (models/run_status.py)."""
    live = {"running": RunStatus.RUNNING, "awaiting_approval": RunStatus.AWAITING_APPROVAL}
    if status in live:
        return live[status]
    if undone:
        return RunStatus.UNDONE
    if status == "expired":
        return RunStatus.EXPIRED
    if status == "cancelled":
        return RunStatus.CANCELLED
    if status == "failed":
        return ended_status(error or AgentErrorCode.UNKNOWN_ERROR.value, declined=False)
    return ended_status(error, declined=any(c.view.outcome == "rejected" for c in run.commands))


def _error(code: str | None) -> RunErrorView | None:
    try:
        return RunErrorView(code=AgentErrorCode(code)) if code else None
    except ValueError:  # a code of the infrastructure, not the agent's (never shown as one)
        return RunErrorView(code=AgentErrorCode.UNKNOWN_ERROR)


def _apply_run_record(run: _Run, event: AuditEvent) -> bool:
    """A record about the run as a whole (its start, end, cancel, revert); False for any other."""
    kind = event.type
    if kind is AuditEventType.RUN_SUMMARY:
        run.instruction = mask_text(event.instruction or run.instruction)
        run.answer = mask_text(event.answer) if event.answer else None
        run.status = _END_STATUS.get(event.status or "", "failed")
        run.error = event.error
        run.reverts_run_id = event.reverts_run_id or run.reverts_run_id
        if run.status != "awaiting_approval":
            run.ended_at = event.timestamp
    elif kind is AuditEventType.RUN_STARTED:
        run.instruction = run.instruction or mask_text(event.instruction or "")
    elif kind is AuditEventType.RUN_CANCELLED:
        run.status = run.status or "cancelled"
    elif kind in (AuditEventType.RUN_REVERT_STARTED, AuditEventType.RUN_REVERT_FINISHED):
        run.reverts_run_id = event.reverts_run_id or run.reverts_run_id
    else:
        return False
    return True


def _apply(run: _Run, event: AuditEvent) -> None:
    if _apply_run_record(run, event) or not command_outcomes.about_a_command(event):
        return
    line = _command(run, event)
    view = line.view
    view.reason = view.reason or (mask_text(event.reason) if event.reason else None)
    view.rule = view.rule or event.rule
    after = command_outcomes.outcome_after(event)
    if after is None:
        return
    view.outcome, success = after
    kind = event.type
    if kind is AuditEventType.COMMAND_BLOCKED:
        view.decision = "blocked"
        view.policy_reason = mask_text(event.policy_reason or "") or None
    elif kind is AuditEventType.APPROVAL_REQUESTED:
        view.approval_id = event.approval_id
    elif kind in (AuditEventType.APPROVAL_APPROVED, AuditEventType.APPROVAL_REJECTED):
        view.approver = event.approver
    elif kind is AuditEventType.COMMAND_EXECUTED:
        view.exit_code, view.duration_ms = event.exit_code, event.duration_ms
        view.error = mask_text(event.error) if event.error else None
        view.executed_at = event.timestamp
    if success is not None or kind is AuditEventType.COMMAND_EXECUTED:
        view.success = success


def _command(run: _Run, event: AuditEvent) -> _Command:
    """The latest line of the same command not yet settled, else a new one."""
    command = event.command or ""
    for line in reversed(run.commands):
        if line.record_command == command and line.view.outcome not in command_outcomes.SETTLED:
            return line
    view = RunCommandView(
        command=mask_command(command),
        decision=command_outcomes.decision_of(event.category),
        reason=mask_text(event.reason) if event.reason else None,
        policy_reason=mask_text(event.policy_reason) if event.policy_reason else None,
        rule=event.rule,
        approval_id=event.approval_id,
        outcome="not_run",
        origin=command_outcomes.origin_of(event),
    )
    line = _Command(view, command)
    run.commands.append(line)
    return line


def _undo_by_command(state: SessionState, run_id: str) -> dict[str, list[CommandRecord]]:
    found: dict[str, list[CommandRecord]] = {}
    for record in state.commands:
        if record.run_id == run_id and record.category is not PolicyCategory.READ:
            found.setdefault(record.command, []).append(record)
    return found


def _with_undo(line: _Command, undo: dict[str, list[CommandRecord]]) -> RunCommandView:
    view = line.view
    if view.decision == "read" or view.executed_at is None:
        return view
    records = undo.get(line.record_command) or []
    record = records.pop(0) if records else None
    view.undo_available = bool(record and record.undo and record.undo.revertible)
    return view
