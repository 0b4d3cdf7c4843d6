"""What GET /v1/sessions/{id} shows: status, pending approval summaries, result — capped, masked."""

from __future__ import annotations

from wp_agent.agent.outcome import current_run_status, executed_commands
from wp_agent.agent.session_state import SessionState
from wp_agent.models.agent_io import AgentOutput, ExecutedCommand
from wp_agent.models.api import (
    VIEW_OUTPUT_LIMIT_CHARS,
    ApprovalCommandView,
    PendingApprovalView,
    SessionView,
)


def _cap(text: str | None) -> str | None:
    if text is None or len(text) <= VIEW_OUTPUT_LIMIT_CHARS:
        return text
    return (
        text[:VIEW_OUTPUT_LIMIT_CHARS]
        + f"\n…（{len(text) - VIEW_OUTPUT_LIMIT_CHARS}文字省略。APIでは各出力を64KBまで返します）"
    )


def _capped_commands(commands: list[ExecutedCommand]) -> list[ExecutedCommand]:
    return [c.model_copy(update={"output": _cap(c.output), "error": _cap(c.error)}) for c in commands]


def session_view(state: SessionState) -> SessionView:
    pending = None
    if state.pending_approval is not None:
        p = state.pending_approval
        pending = PendingApprovalView(
            approval_id=p.approval_id,
            requested_by=p.requested_by,
            requested_at=p.requested_at,
            expires_at=p.expires_at,
            commands=[
                ApprovalCommandView(command=i.command, summary=i.summary_ja, impact=i.impact_ja)
                for i in p.items
            ],
        )
    result: AgentOutput | None = None
    if state.result is not None:
        result = state.result.model_copy(
            update={"executed_commands": _capped_commands(state.result.executed_commands)}
        )
    return SessionView(
        session_id=state.session_id,
        run_id=state.run_id,
        target_id=state.target_id,
        status=state.status.value,
        run_status=current_run_status(state),
        pending_approval=pending,
        result=result,
        executed_commands=_capped_commands(executed_commands(state)),
        iterations=state.iterations,
        started_at=state.started_at,
    )
