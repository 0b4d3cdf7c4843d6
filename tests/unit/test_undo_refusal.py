"""When an undo has nothing to do: the one decision (undo.revert_run) the API and the CLI both answer from."""

from __future__ import annotations

import pytest

from wp_agent.agent.session_state import CommandRecord, CommandStatus
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.models.undo import EntityRef, PlanStep, UndoCapture, UndoItem
from wp_agent.policy import CommandPolicy, PolicyCategory, PolicyDecision, approval_summary
from wp_agent.policy.command_policy import RULE_FAILED
from wp_agent.undo.revert_run import (
    NothingToUndo,
    RevertRun,
    nothing_to_undo,
    standing_undo,
    undo_completed,
)

TITLE = EntityRef(kind="post", key=["45"], parts=["fields"])


def record(
    run_id: str,
    command: str = "post update 45 --post_title=新しい題名",
    *,
    status: CommandStatus = CommandStatus.FINISHED,
    exit_code: int | None = 0,
    category: PolicyCategory = PolicyCategory.WRITE,
    capture: UndoCapture | None = None,
    number: int = 0,
) -> CommandRecord:
    return CommandRecord(
        tool_use_id=f"toolu_{run_id}_{number}",
        run_id=run_id,
        command=command,
        category=category,
        rule="test",
        policy_reason="",
        status=status,
        iteration=1,
        exit_code=exit_code,
        undo=capture,
    )


def revertible() -> UndoCapture:
    item = UndoItem(
        entity=TITLE, before={"post_title": "旧"}, after={"post_title": "新"}, after_recorded=True
    )
    return UndoCapture(revertible=True, items=[item])


def test_a_run_without_changes_has_nothing_to_undo() -> None:
    assert nothing_to_undo([], undone_by=None) == NothingToUndo("no_changes")
    reads = [record("run_a", "post list", category=PolicyCategory.READ)]
    assert nothing_to_undo(reads, undone_by=None) == NothingToUndo("no_changes")
    not_run = [record("run_a", status=CommandStatus.REJECTED, exit_code=None, capture=revertible())]
    assert nothing_to_undo(not_run, undone_by=None) == NothingToUndo("no_changes")
    irreversible = [record("run_a", capture=UndoCapture(revertible=False, reason_ja="元に戻せません。"))]
    assert nothing_to_undo(irreversible, undone_by=None) == NothingToUndo("no_changes")
    assert "元に戻せる変更がありません" in NothingToUndo("no_changes").message_ja


def test_a_post_deleted_for_good_can_still_be_created_again() -> None:
    recreatable = UndoCapture(
        revertible=False, recreatable=True, reason_ja="完全に削除され、元に戻せません。"
    )
    assert (
        nothing_to_undo([record("run_a", "post delete 45 --force", capture=recreatable)], undone_by=None)
        is None
    )


def test_a_run_undone_by_a_completed_undo_is_already_undone() -> None:
    changes = [record("run_a", capture=revertible())]
    assert nothing_to_undo(changes, undone_by=None) is None
    refusal = nothing_to_undo(changes, undone_by="run_u")
    assert refusal == NothingToUndo("already_undone", "run_u")
    assert refusal is not None
    assert "すでに取り消しました" in refusal.message_ja
    assert "run_u" in refusal.message_ja


def test_an_undo_is_complete_only_when_every_change_it_made_succeeded() -> None:
    assert undo_completed([record("run_u")])
    assert not undo_completed([])  # planned nothing (everything changed since): not an undo to stand on
    assert not undo_completed([record("run_u", "post list", category=PolicyCategory.READ)])
    assert not undo_completed([record("run_u"), record("run_u", exit_code=1, number=1)])
    assert not undo_completed([record("run_u", status=CommandStatus.REJECTED, exit_code=None)])
    assert not undo_completed([record("run_u", status=CommandStatus.UNKNOWN, exit_code=None)])
    assert not undo_completed([record("run_u", status=CommandStatus.HELD, exit_code=None)])


def test_the_standing_undo_follows_undos_of_undos() -> None:
    run = [record("run_a", capture=revertible())]
    undo = [record("run_u", capture=revertible())]
    redo = [record("run_r", capture=revertible())]
    again = [record("run_v", capture=revertible())]
    assert standing_undo("run_a", {"run_a": None}, run) is None
    reverts: dict[str, str | None] = {"run_a": None, "run_u": "run_a"}
    assert standing_undo("run_a", reverts, run + undo) == "run_u"
    reverts["run_r"] = "run_u"  # the undo itself undone: the run's changes are back
    assert standing_undo("run_a", reverts, run + undo + redo) is None
    reverts["run_v"] = "run_a"  # and undone once more
    assert standing_undo("run_a", reverts, run + undo + redo + again) == "run_v"


def test_a_failed_undo_leaves_the_run_undoable() -> None:
    failed = [record("run_u", exit_code=1)]
    reverts: dict[str, str | None] = {"run_a": None, "run_u": "run_a"}
    assert standing_undo("run_a", reverts, [record("run_a", capture=revertible()), *failed]) is None


def test_an_undo_step_whose_approval_text_fails_refuses_the_whole_undo(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As a blocked step does: nothing of the undo runs, and the request ends with a refusal, not a fault."""

    def failing(decision: PolicyDecision, site: object = None) -> tuple[str, str]:
        raise KeyError("a summary's own mistake")

    monkeypatch.setattr(approval_summary, "describe", failing)
    step = PlanStep(argv=["post", "delete", "45", "--force"], restores_ja="投稿 ID 45 を作成前に戻す")
    decision = CommandPolicy().classify_argv(step.argv)
    assert decision.needs_approval
    with pytest.raises(WpAgentError) as refused:
        RevertRun._described(step, decision)
    assert refused.value.code is AgentErrorCode.COMMAND_BLOCKED
    assert refused.value.details["rule"] == RULE_FAILED
    assert "承認内容" in refused.value.message_ja
    monkeypatch.undo()
    summary, _impact = RevertRun._described(step, decision)
    assert "45" in summary
