"""POST /v1/sessions/{sessionId}/runs/{runId}/undo: the requester asks to undo one of their runs.

dryRun answers at once with what the run changed and whether each command can be undone. Otherwise
an undo run starts in the session like any message: the workflow's first turn reads the site and
plans (wp_agent/undo/agent_turn.py), and from there policy, approval and audit are those of any run.
"""

from __future__ import annotations

from wp_agent.agent.session_state import CommandRecord, CommandStatus
from wp_agent.models.api import RunAccepted, SessionMessageRequest, UndoCommandView, UndoPreview, UndoRequest
from wp_agent.policy import PolicyCategory
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.sessions import SessionService
from wp_agent.undo.revert_run import undo_available

_RAN = {CommandStatus.FINISHED, CommandStatus.UNKNOWN, CommandStatus.STARTED}


def _view(record: CommandRecord) -> UndoCommandView:
    capture = record.undo
    if capture is not None and capture.revertible:
        return UndoCommandView(command=record.command, undo_available=True)
    reason = capture.reason_ja if capture is not None else "実行前の状態が記録されていません。"
    return UndoCommandView(command=record.command, undo_available=False, reason=reason)


def undo_run(
    sessions: SessionService, session_id: str, run_id: str, user_id: str, body: UndoRequest
) -> UndoPreview | RunAccepted:
    state = sessions.owned(session_id, user_id)  # requester only: anyone else is told it does not exist
    records = [r for r in state.commands if r.run_id == run_id]
    if not records:
        raise ApiError(ApiErrorCode.RUN_NOT_FOUND)
    changes = [r for r in records if r.category is not PolicyCategory.READ and r.status in _RAN]
    if body.dry_run:
        return UndoPreview(
            session_id=session_id,
            run_id=run_id,
            undo_available=undo_available(changes),
            commands=[_view(r) for r in changes],
        )
    if not undo_available(changes):
        raise ApiError(ApiErrorCode.NOTHING_TO_UNDO)
    same_run = state.run_id == run_id
    request = SessionMessageRequest(
        message=f"{run_id} で行った変更を元に戻してください。",
        multisite=state.input.multisite if same_run else None,
    )
    return sessions.start_run(session_id, user_id, request, reverts_run_id=run_id)
