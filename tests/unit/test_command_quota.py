"""The user's command quota in a turn: each command counted once, by its recorded intent (a turn run
again after another writer saved the session takes no second count), held commands counted when held
so an approved one always runs, and every refusal audited once."""

from __future__ import annotations

import logging

import pytest

from tests.fakes.agent_doubles import (
    CountingLimiter,
    LosesOneSaveWhileStarted,
    RecordingWpCli,
    ScriptedModel,
    make_deps,
    text_reply,
    tool_reply,
)
from wp_agent.agent import site_facts
from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.lifecycle import new_session
from wp_agent.agent.ports import AgentDeps, ApprovalDecision, MemoryAuditLog
from wp_agent.agent.session_state import SessionState, SessionStatus
from wp_agent.agent.site_facts import FactsPlan
from wp_agent.agent.turn import AgentTurn
from wp_agent.errors import AgentErrorCode, StaleSessionError, WpAgentError
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.workflow import Route


def audit_of(deps: AgentDeps) -> list[AuditEvent]:
    assert isinstance(deps.audit, MemoryAuditLog)
    return deps.audit.events


def audit_types(deps: AgentDeps) -> list[AuditEventType]:
    return [e.type for e in audit_of(deps)]


def session(session_id: str = "s1") -> SessionState:
    return new_session(AgentInput(message="削除"), session_id=session_id, user_id="u", target_id="t")


def held_then_approved(deps: AgentDeps, state: SessionState) -> AgentTurn:
    turn = AgentTurn(deps)
    assert turn.advance(state) is Route.AWAITING_APPROVAL
    turn.decide(state, ApprovalDecision(approved=True, decided_by="u"))
    return turn


def test_a_turn_run_again_after_a_stale_save_takes_no_second_count(caplog: pytest.LogCaptureFixture) -> None:
    store = LosesOneSaveWhileStarted()  # the approval API saves while the resumed turn runs: armed below
    wp = RecordingWpCli()
    limiter = CountingLimiter(per_user=10)
    deps = make_deps(
        ScriptedModel([tool_reply("post delete 45"), text_reply("削除しました")]), wp, store=store
    )
    deps.limiter = limiter
    state = session()
    turn = held_then_approved(deps, state)
    store.armed = True
    with caplog.at_level(logging.INFO, logger="wp_agent.agent.turn"), pytest.raises(StaleSessionError):
        turn.advance(state)
    assert wp.changes() == []  # the intent was never saved: nothing ran
    again = store.load("s1")
    assert again is not None
    assert turn.advance(again) is Route.COMPLETED  # as workflow_tasks.run_turn does: reload, run again
    assert wp.changes() == [["post", "delete", "45"]]
    assert limiter.counted["u"] == [again.intent_id(again.commands[0])]
    executed = [e for e in audit_of(deps) if e.type is AuditEventType.COMMAND_EXECUTED]
    facts = [e for e in executed if e.reason == site_facts.READ_REASON]
    assert len(facts) == len(FactsPlan(None, None).reads)  # before the first model call, not again
    assert len(executed) - len(facts) == 3  # the approver's read, the same read when approved, the delete
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any(r.message.startswith("stale session") and r.levelno == logging.INFO for r in caplog.records)


def test_an_approved_command_runs_once_for_a_user_at_the_limit() -> None:
    wp = RecordingWpCli()
    limiter = CountingLimiter(per_user=2)
    model = ScriptedModel(
        [tool_reply("post list --format=ids"), tool_reply("post delete 45"), text_reply("完了")]
    )
    deps = make_deps(model, wp)
    deps.limiter = limiter
    state = session()
    turn = AgentTurn(deps)
    assert turn.advance(state) is Route.CONTINUE  # the read: 1 of 2
    assert turn.advance(state) is Route.AWAITING_APPROVAL  # the delete counted when held: 2 of 2
    with pytest.raises(WpAgentError):
        limiter.before_command("u", "another-session/run/toolu_x")  # the user is at the limit
    turn.decide(state, ApprovalDecision(approved=True, decided_by="u"))
    assert turn.advance(state) is Route.COMPLETED
    assert wp.changes() == [["post", "delete", "45"]]
    assert state.result is not None
    assert state.result.success
    assert AuditEventType.COMMAND_BLOCKED not in audit_types(deps)


def test_a_command_held_over_the_limit_is_refused_before_anyone_is_asked() -> None:
    wp = RecordingWpCli()
    limiter = CountingLimiter(per_user=0)
    deps = make_deps(ScriptedModel([tool_reply("post delete 45"), text_reply("上限でした")]), wp)
    deps.limiter = limiter
    state = session()
    turn = AgentTurn(deps)
    assert turn.advance(state) is Route.CONTINUE  # no approval asked
    assert state.pending_approval is None
    assert turn.advance(state) is Route.FAILED  # every command was refused: not a success
    assert wp.changes() == []
    assert state.status is SessionStatus.FAILED
    assert state.result is not None
    assert not state.result.success
    assert state.result.error is not None
    assert state.result.error.code is AgentErrorCode.COMMAND_BLOCKED
    assert "上限" in state.result.error.message
    assert isinstance(deps.audit, MemoryAuditLog)
    blocked = [e for e in deps.audit.events if e.type is AuditEventType.COMMAND_BLOCKED]
    assert [(e.command, e.rule) for e in blocked] == [("post delete 45", "rate_limit.commands_per_user")]
    assert blocked[0].policy_reason is not None
    assert "上限" in blocked[0].policy_reason
    assert AuditEventType.APPROVAL_REQUESTED not in audit_types(deps)
