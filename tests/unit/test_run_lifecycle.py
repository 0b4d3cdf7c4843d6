"""How runs end and how the next run starts: every ending leaves a conversation the Messages API
accepts, approvals of ended runs cannot be acted on, and interrupted work is never hidden."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.agent_doubles import (
    LosesOneSaveWhileStarted,
    RecordingWpCli,
    ScriptedModel,
    conversation_problems,
    make_deps,
    text_reply,
    tool_reply,
)
from wp_agent.agent import lifecycle
from wp_agent.agent.approval_protocol import ApprovalRefusedError, Refusal
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.lifecycle import continue_session, new_session
from wp_agent.agent.ports import (
    AgentDeps,
    ApprovalDecision,
    MemoryAuditLog,
    NoApprovals,
)
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.session_state import ApprovalStatus, CommandStatus, SessionState, SessionStatus
from wp_agent.agent.turn import AgentTurn
from wp_agent.errors import AgentErrorCode, StaleSessionError, WpAgentError
from wp_agent.executors.port import CommandResult
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.workflow import Route
from wp_agent.policy import CommandPolicy, PolicyCategory


class LambdaDied(BaseException):
    """The function was killed mid-command: nothing after this point ran."""


def ssh_down(argv: list[str]) -> WpAgentError:
    return WpAgentError(AgentErrorCode.SSH_CONNECTION_FAILED, "SSH接続できませんでした。")


def session(message: str = "テスト", **input_fields: Any) -> SessionState:
    return new_session(
        AgentInput(message=message, **input_fields), session_id="ses_lifecycle", user_id="u1", target_id="t1"
    )


def awaiting_approval(deps: AgentDeps) -> tuple[AgentTurn, SessionState]:
    turn = AgentTurn(deps)
    state = session("45を削除して")
    assert turn.advance(state) is Route.AWAITING_APPROVAL
    return turn, state


def follow_up_is_well_formed(turn: AgentTurn, state: SessionState, model: ScriptedModel) -> None:
    continue_session(state, AgentInput(message="続けて"))
    assert turn.advance(state) is Route.COMPLETED
    assert conversation_problems(model.calls[-1]) == []
    assert state.pending_approval is None


def test_ssh_failure_of_an_approved_command_ends_the_run() -> None:
    model = ScriptedModel([tool_reply("post delete 45"), text_reply("削除できませんでした")])
    turn, state = awaiting_approval(make_deps(model, RecordingWpCli(handler=ssh_down)))
    turn.decide(state, ApprovalDecision(approved=True, decided_by="u1"))
    assert turn.advance(state) is Route.FAILED
    assert state.result is not None
    assert state.result.error is not None
    assert state.result.error.code is AgentErrorCode.SSH_CONNECTION_FAILED
    assert len(model.calls) == 1  # the model is not asked to carry on against an unreachable site


def test_follow_up_after_an_expired_approval() -> None:
    model = ScriptedModel([tool_reply("post delete 45"), text_reply("了解しました")])
    turn, state = awaiting_approval(make_deps(model))
    turn.expire_approval(state)
    approval_id = state.pending_approval.approval_id if state.pending_approval else ""
    follow_up_is_well_formed(turn, state, model)
    archived = state.find_approval(approval_id)
    assert archived is not None
    assert archived.status is ApprovalStatus.EXPIRED
    assert "実行していません" in str(model.calls[-1])  # the model learns the held command never ran


def test_follow_up_after_a_cancel_during_the_approval_wait() -> None:
    model = ScriptedModel([tool_reply("post list", "post delete 45"), text_reply("了解しました")])
    turn, state = awaiting_approval(make_deps(model))
    approval_id = state.pending_approval.approval_id if state.pending_approval else ""
    turn.cancel(state)
    follow_up_is_well_formed(turn, state, model)
    archived = state.find_approval(approval_id)
    assert archived is not None
    assert archived.status is ApprovalStatus.CANCELLED


def test_follow_up_after_an_ssh_failure() -> None:
    model = ScriptedModel([tool_reply("post list"), text_reply("了解しました")])
    wp = RecordingWpCli(handler=ssh_down)
    turn = AgentTurn(make_deps(model, wp))
    state = session()
    assert turn.advance(state) is Route.FAILED
    wp.handler = None
    follow_up_is_well_formed(turn, state, model)


def test_history_in_text_and_blocks_of_one_speaker_is_joined() -> None:
    model = ScriptedModel([text_reply("はい")])
    state = session(
        "続きです",
        conversation_history=[
            {"role": "user", "content": "前の依頼"},
            {"role": "user", "content": [{"type": "text", "text": "補足"}]},
            {"role": "assistant", "content": "前の回答"},
        ],
    )
    assert AgentTurn(make_deps(model)).advance(state) is Route.COMPLETED
    sent = model.calls[0]
    assert conversation_problems(sent) == []
    assert sent[0]["content"] == [{"type": "text", "text": "前の依頼"}, {"type": "text", "text": "補足"}]


def test_a_decision_on_an_ended_run_is_refused() -> None:
    _, state = awaiting_approval(make_deps(ScriptedModel([tool_reply("post delete 45")])))
    lifecycle.cancel_run(state)
    with pytest.raises(ApprovalRefusedError) as refused:
        lifecycle.record_decision(state, ApprovalDecision(approved=True, decided_by="u1"))
    assert refused.value.refusal is Refusal.RUN_ENDED


def test_the_local_runner_ends_a_run_whose_approval_expired_while_it_waited() -> None:
    """The local front door's one mapping of a refused decision: nothing held runs, the run ends as
    an expired approval (APPROVAL_EXPIRED), never a traceback."""
    wp = RecordingWpCli()
    deps = make_deps(ScriptedModel([tool_reply("post delete 45")]), wp)
    _, state = awaiting_approval(deps)
    assert state.pending_approval is not None
    state.pending_approval.expires_at = "2000-01-01T00:00:00Z"
    runner = AgentRunner(deps, NoApprovals())
    runner.decide(state, ApprovalDecision(approved=True, decided_by="u1"))
    output = runner.resume(state)
    assert output.error is not None
    assert output.error.code is AgentErrorCode.APPROVAL_EXPIRED
    assert state.pending_approval is not None
    assert state.pending_approval.status is ApprovalStatus.EXPIRED
    assert wp.changes() == []


def test_a_decision_that_never_reached_the_wait_expires() -> None:
    _, state = awaiting_approval(make_deps(ScriptedModel([tool_reply("post delete 45")])))
    lifecycle.record_decision(state, ApprovalDecision(approved=True, decided_by="u1"))
    assert lifecycle.expire_approval(state)  # the wait timed out before the decision arrived
    assert state.status is SessionStatus.FAILED
    assert state.pending_approval is not None
    assert state.pending_approval.status is ApprovalStatus.EXPIRED
    assert not lifecycle.expire_approval(state)  # once only


def test_a_command_interrupted_by_a_crash_is_reported_when_the_run_fails() -> None:
    def die(argv: list[str]) -> CommandResult:
        if CommandPolicy().classify_argv(argv).category is PolicyCategory.READ:
            return CommandResult("[]", "", 0, 1)  # the reads of its before-image
        raise LambdaDied

    deps = make_deps(
        ScriptedModel([tool_reply("post delete 45 --force")]),
        RecordingWpCli(handler=die),
        agent_allow_skip_confirmation=True,
    )
    state = session("削除", skip_destructive_confirmation=True)
    with pytest.raises(LambdaDied):
        AgentTurn(deps).advance(state)
    stored = deps.store.load(state.session_id)
    assert stored is not None
    assert stored.commands[0].status is CommandStatus.STARTED
    assert lifecycle.fail_run(stored, "workflow_error:Runtime.ExitError")
    assert stored.result is not None
    reported = stored.result.executed_commands
    assert [c.command for c in reported] == ["post delete 45 --force"]
    assert reported[0].success is False  # may or may not have run: never claimed as done


def test_a_site_lookup_interrupted_by_a_crash_is_asked_again() -> None:
    def die(argv: list[str]) -> CommandResult:
        raise LambdaDied

    wp = RecordingWpCli(handler=die)
    deps = make_deps(ScriptedModel([text_reply("確認しました")]), wp)
    state = session(multisite={"siteId": 3})
    with pytest.raises(LambdaDied):
        AgentTurn(deps).advance(state)
    stored = deps.store.load(state.session_id)
    assert stored is not None
    wp.handler = lambda argv: CommandResult("https://example.com/shop/\n", "", 0, 1)
    assert AgentTurn(deps).advance(stored) is Route.COMPLETED
    assert stored.site_url == "https://example.com/shop/"
    assert [argv[:2] for argv in wp.commands()] == [
        ["site", "list"],
        ["site", "list"],
    ]  # a read: safe to ask again (then the site's facts, of the site it found)
    assert isinstance(deps.audit, MemoryAuditLog)
    assert AuditEventType.COMMAND_OUTCOME_UNKNOWN in [e.type for e in deps.audit.events]


def test_a_site_lookup_whose_save_loses_a_race_runs_again_instead_of_failing() -> None:
    store = LosesOneSaveWhileStarted(armed=True)  # another writer saves first as the lookup starts
    wp = RecordingWpCli(handler=lambda argv: CommandResult("https://example.com/shop/\n", "", 0, 1))
    deps = make_deps(ScriptedModel([text_reply("確認しました")]), wp, store=store)
    state = session(multisite={"siteId": 3})
    store.save(state)
    with pytest.raises(StaleSessionError):
        AgentTurn(deps).advance(state)
    again = store.load(state.session_id)
    assert again is not None
    assert again.status is not SessionStatus.FAILED  # not ended by the lost race
    assert (
        AgentTurn(deps).advance(again) is Route.COMPLETED
    )  # as workflow_tasks.run_turn does: reload, run again
    assert again.site_url == "https://example.com/shop/"


def test_a_site_lookup_over_a_broken_connection_fails_with_the_connection_error() -> None:
    deps = make_deps(ScriptedModel([]), RecordingWpCli(handler=ssh_down))
    state = session(multisite={"siteId": 3})
    assert AgentTurn(deps).advance(state) is Route.FAILED
    assert state.result is not None
    assert state.result.error is not None
    assert state.result.error.code is AgentErrorCode.SSH_CONNECTION_FAILED  # not "site not found"
