"""POST /v1/sessions/{sessionId}/runs/{runId}/undo: the requester asks to undo one of their runs.

dryRun answers at once with what the run changed and whether each command can be undone. Otherwise
an undo run starts in the session like any message: the workflow's first turn reads the site and
plans (wp_agent/undo/agent_turn.py), and from there policy, approval and audit are those of any run.
A run with nothing to put back — no revertible change, or already undone by an earlier undo run that
completed — is refused with 409 NOTHING_TO_UNDO before any run starts (undo.revert_run decides).
"""

from __future__ import annotations

from wp_agent.agent.session_state import CommandRecord, SessionState
from wp_agent.models.api import RunAccepted, SessionMessageRequest, UndoCommandView, UndoPreview, UndoRequest
from wp_agent.policy import PolicyCategory
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.sessions import SessionService
from wp_agent.undo.revert_run import nothing_to_undo, standing_undo


def _view(record: CommandRecord, undone_reason: str | None) -> UndoCommandView:
    capture = record.undo
    if undone_reason is None and capture is not None and capture.revertible:
        return UndoCommandView(command=record.command, undo_available=True)
    reason = undone_reason or (
        capture.reason_ja if capture is not None else "実行前の状態が記録されていません。"
    )
    return UndoCommandView(command=record.command, undo_available=False, reason=reason)


def _known_run(state: SessionState, run_id: str) -> bool:
    """The run was started in this session (sessions saved before `runs` existed: by its commands)."""
    return run_id in state.runs or run_id == state.run_id or any(c.run_id == run_id for c in state.commands)


def undo_run(
    sessions: SessionService, session_id: str, run_id: str, user_id: str, body: UndoRequest
) -> UndoPreview | RunAccepted:
    state = sessions.owned(session_id, user_id)  # requester only: anyone else is told it does not exist
    if not _known_run(state, run_id):
        raise ApiError(ApiErrorCode.RUN_NOT_FOUND)
    records = [r for r in state.commands if r.run_id == run_id]
    changes = [r for r in records if r.category is not PolicyCategory.READ and r.status.may_have_run]
    refusal = nothing_to_undo(changes, undone_by=standing_undo(run_id, state.runs, state.commands))
    if body.dry_run:
        undone = refusal.message_ja if refusal is not None and refusal.reason == "already_undone" else None
        return UndoPreview(
            session_id=session_id,
            run_id=run_id,
            undo_available=refusal is None,
            commands=[_view(r, undone) for r in changes],
        )
    if refusal is not None:
        raise ApiError(ApiErrorCode.NOTHING_TO_UNDO, refusal.message_ja)
    same_run = state.run_id == run_id
    request = SessionMessageRequest(
        message=f"{run_id} で行った変更を元に戻してください。",
        multisite=state.input.multisite if same_run else None,
    )
    return sessions.start_run(session_id, user_id, request, reverts_run_id=run_id)
