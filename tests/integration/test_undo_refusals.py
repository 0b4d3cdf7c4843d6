"""POST …/runs/{runId}/undo when there is nothing to undo: a run without changes and a run already
undone are 409 NOTHING_TO_UNDO (nothing starts); an unknown run stays 404. Sessions in moto DynamoDB;
the workflow is recorded. (The whole undo through the serverless stack: test_undo_api.py.)"""

from __future__ import annotations

import pytest

from tests.fakes.service_runtime import RecordedRuntime
from wp_agent.agent.session_state import CommandRecord, CommandStatus, SessionState, SessionStatus
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.api import RunAccepted, UndoPreview, UndoRequest
from wp_agent.models.undo import EntityRef, UndoCapture, UndoItem
from wp_agent.policy import PolicyCategory
from wp_agent.service.api_errors import ApiError
from wp_agent.service.sessions import SessionService
from wp_agent.service.undo import undo_run

pytestmark = pytest.mark.usefixtures("aws")

SESSION = "ses_undo_refusal_01"
CHANGED = "run_" + "a" * 20
QUIET = "run_" + "b" * 20


def title_change(run_id: str, number: int, *, exit_code: int = 0) -> CommandRecord:
    item = UndoItem(
        entity=EntityRef(kind="post", key=["45"], parts=["fields"]),
        before={"post_title": "旧"},
        after={"post_title": "新"},
        after_recorded=True,
    )
    return CommandRecord(
        tool_use_id=f"toolu_{run_id[4:]}_{number}", run_id=run_id, command="post update 45 --post_title=新",
        category=PolicyCategory.WRITE, rule="post.update", policy_reason="", status=CommandStatus.FINISHED,
        iteration=1, exit_code=exit_code, undo=UndoCapture(revertible=True, items=[item]),
    )  # fmt: skip


def session(rt: RecordedRuntime) -> SessionState:
    """A finished session of two runs: one changed a title, the next only answered."""
    rt.register_target()
    state = SessionState(
        session_id=SESSION, run_id=QUIET, user_id="u1", target_id="site-a", status=SessionStatus.COMPLETED,
        input=AgentInput(message="こんにちは"), started_at="2025-01-06T00:00:00Z",
        commands=[title_change(CHANGED, 0)], runs={CHANGED: None, QUIET: None},
    )  # fmt: skip
    rt.sessions.save(state)
    return state


def undo(rt: RecordedRuntime, run_id: str, *, dry_run: bool = False) -> UndoPreview | RunAccepted:
    return undo_run(SessionService(rt), SESSION, run_id, "u1", UndoRequest(dry_run=dry_run))


def refused(rt: RecordedRuntime, run_id: str) -> ApiError:
    with pytest.raises(ApiError) as refusal:
        undo(rt, run_id)
    return refusal.value


def finish_undo(rt: RecordedRuntime, undo_run_id: str, *, exit_code: int = 0) -> None:
    """The undo run's turn ran its plan: its change recorded with its outcome, the run completed."""
    state = rt.sessions.load(SESSION)
    assert state is not None
    assert state.runs[undo_run_id] is not None  # the API recorded which run it reverts
    state.commands.append(title_change(undo_run_id, 0, exit_code=exit_code))
    state.status = SessionStatus.COMPLETED
    rt.sessions.save(state)


def test_a_run_without_changes_is_nothing_to_undo_not_an_unknown_run() -> None:
    rt = RecordedRuntime()
    session(rt)
    refusal = refused(rt, QUIET)
    assert (refusal.status, refusal.code) == (409, "NOTHING_TO_UNDO")
    assert refusal.message_ja == "この実行には元に戻せる変更がありません。"
    preview = undo(rt, QUIET, dry_run=True)
    assert isinstance(preview, UndoPreview)
    assert (preview.undo_available, preview.commands) == (False, [])
    unknown = refused(rt, "run_" + "c" * 20)
    assert (unknown.status, unknown.code) == (404, "RUN_NOT_FOUND")
    assert rt.recording_workflow.started == []


def test_a_run_already_undone_is_refused_without_starting_a_run() -> None:
    rt = RecordedRuntime()
    session(rt)
    accepted = undo(rt, CHANGED)
    assert isinstance(accepted, RunAccepted)
    finish_undo(rt, accepted.run_id)

    refusal = refused(rt, CHANGED)
    assert (refusal.status, refusal.code) == (409, "NOTHING_TO_UNDO")
    assert refusal.message_ja == (
        f"この実行はすでに取り消しました（取り消しの実行ID: {accepted.run_id}）。"
        "もう一度元に戻す操作は行いません。"
    )
    preview = undo(rt, CHANGED, dry_run=True)
    assert isinstance(preview, UndoPreview)
    assert preview.undo_available is False
    assert [c.reason for c in preview.commands] == [refusal.message_ja]
    assert rt.recording_workflow.started == [accepted.run_id]  # no second undo run

    # Undoing the undo brings the run's changes back: the run can be undone again.
    redo = undo(rt, accepted.run_id)
    assert isinstance(redo, RunAccepted)
    finish_undo(rt, redo.run_id)
    again = undo(rt, CHANGED)
    assert isinstance(again, RunAccepted)


def test_an_undo_that_failed_leaves_the_run_undoable() -> None:
    rt = RecordedRuntime()
    session(rt)
    first = undo(rt, CHANGED)
    assert isinstance(first, RunAccepted)
    finish_undo(rt, first.run_id, exit_code=1)
    second = undo(rt, CHANGED)
    assert isinstance(second, RunAccepted)
    assert second.run_id != first.run_id
