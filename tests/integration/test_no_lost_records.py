"""Crash, throttling and lost-answer probes between storing something and telling someone: no
decision is lost, no audit record goes missing or doubles. Sessions and the audit log live in moto
DynamoDB; the workflow, bus, model and WP-CLI are recorded doubles (tests/fakes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import boto3
import pytest

from tests.fakes.agent_doubles import text_reply, tool_reply
from tests.fakes.aws import (
    REGION,
    TABLES,
    AuditFaults,
    LostAnswer,
    sdk_retries_run_out,
    sdk_retry_meets_the_write,
    throttling,
)
from tests.fakes.service_runtime import RecordedRuntime
from tests.integration.test_session_races import (
    APPROVE,
    SESSION,
    awaiting_approval,
    holding_delete_45,
    runtime,
    started,
)
from wp_agent.adapters.aws.audit_log import DynamoAuditLog
from wp_agent.adapters.aws.session_store import DynamoSessionStore
from wp_agent.agent import site_facts
from wp_agent.agent.approval_protocol import ResumeOutcome
from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.session_state import DecisionDelivery, SessionState, SessionStatus
from wp_agent.service import workflow_tasks
from wp_agent.service.api_errors import ApiError
from wp_agent.service.sessions import SessionService

pytestmark = pytest.mark.usefixtures("aws")


class LambdaDied(BaseException):
    """The invocation was killed here (timeout, crash): nothing after this line ran."""


def kinds(rt: RecordedRuntime) -> list[str]:
    """The kinds of the session's audit records, the reads of the site's facts left out."""
    return [e["type"] for e in rt.audit.for_session(SESSION) if e.get("reason") != site_facts.READ_REASON]


def not_a_fact_read(event: AuditEvent) -> bool:
    return event.reason != site_facts.READ_REASON


def run_to_the_end(rt: RecordedRuntime, run_id: str) -> str:
    """The workflow's loop: turns until the run leaves CONTINUE (a died turn is retried)."""
    for _ in range(10):
        try:
            route = str(workflow_tasks.run_turn(rt, SESSION, run_id)["route"])
        except LambdaDied:
            continue  # Step Functions retries a timed-out turn
        if route != "CONTINUE":
            return route
    raise AssertionError("the run did not end")


# -- a decision: stored, then handed over ----------------------------------------------------------


def test_a_decision_whose_audit_write_is_throttled_still_reaches_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reported loss: decision saved, audit write throttled -> 500, resend 409, run expired, no
    approval_approved. Now the decision is handed over, and the run's next turn writes the record."""
    rt, state, approval_id = holding_delete_45()
    rt.scripted_model._steps.append(text_reply("削除しました"))
    faults = AuditFaults(monkeypatch, {"approval_approved"}, times=3, error=throttling())
    decided = SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    assert decided.status == "AwaitingApproval"
    assert [r["token"] for r in rt.recording_workflow.resumed] == ["token-1"]
    assert "approval_approved" not in kinds(rt)  # still in the session's outbox
    assert run_to_the_end(rt, state.run_id) == "COMPLETED"
    assert kinds(rt).count("approval_approved") == 1
    assert faults.attempts.count("approval_approved") >= 2
    assert rt.recording_wp.changes() == [["post", "delete", "45"]]


def test_a_decision_stored_by_a_request_that_died_before_the_hand_over_can_be_resent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rt, _state, approval_id = holding_delete_45()

    def died(task_token: str, decision: dict[str, Any], **kwargs: Any) -> ResumeOutcome:
        raise LambdaDied

    with monkeypatch.context() as dying:
        dying.setattr(rt.recording_workflow, "resume", died)
        with pytest.raises(LambdaDied):
            SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    again = SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    assert again.status == "AwaitingApproval"
    assert [r["token"] for r in rt.recording_workflow.resumed] == ["token-1"]
    assert kinds(rt).count("approval_approved") == 1


@pytest.mark.parametrize("note_fails", [False, True])
def test_a_decision_the_wait_did_not_take_stays_resendable(
    monkeypatch: pytest.MonkeyPatch, note_fails: bool
) -> None:
    """The hand-over fails (503); even when noting that fails too, a resend hands it over."""
    rt, _state, approval_id = holding_delete_45()

    def throttled(task_token: str, decision: dict[str, Any], **kwargs: Any) -> ResumeOutcome:
        raise ConnectionError("states endpoint throttled")

    with monkeypatch.context() as broken:
        broken.setattr(rt.recording_workflow, "resume", throttled)
        if note_fails:
            real_update = SessionService._update
            calls: list[int] = []

            def second_save_fails(self: SessionService, *args: Any, **kwargs: Any) -> Any:
                calls.append(1)
                if len(calls) == 2:
                    raise ConnectionError("sessions table throttled")
                return real_update(self, *args, **kwargs)

            broken.setattr(SessionService, "_update", second_save_fails)
        with pytest.raises(ApiError) as unavailable:
            SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    assert (unavailable.value.status, unavailable.value.code) == (503, "WORKFLOW_UNAVAILABLE")
    noted = rt.sessions.load(SESSION)
    assert noted is not None
    assert noted.pending_approval is not None
    expected = DecisionDelivery.STORED if note_fails else DecisionDelivery.HANDOVER_FAILED
    assert noted.pending_approval.delivery is expected
    again = SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    assert again.decision == "approve"
    assert [r["token"] for r in rt.recording_workflow.resumed] == ["token-1"]
    assert kinds(rt).count("approval_approved") == 1


def test_a_hand_over_whose_answer_was_lost_is_already_decided_on_the_resend() -> None:
    rt, _state, approval_id = holding_delete_45()

    def answered_then_lost(token: str) -> None:
        rt.recording_workflow.on_resume = None
        rt.recording_workflow.resume(token, {"approvalId": approval_id, "decision": "approve"})
        raise ConnectionError("the answer of SendTaskSuccess was lost")

    rt.recording_workflow.on_resume = answered_then_lost
    with pytest.raises(ApiError) as lost:
        SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    assert lost.value.status == 503
    with pytest.raises(ApiError) as resent:  # the wait has it: closed, and the decision is not new
        SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    assert (resent.value.status, resent.value.code) == (409, "APPROVAL_ALREADY_DECIDED")
    assert kinds(rt).count("approval_approved") == 1


def test_a_decision_save_that_landed_but_lost_its_answer_is_the_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rt, _state, approval_id = holding_delete_45()
    table = boto3.resource("dynamodb", region_name=REGION).Table(TABLES["sessions"])
    lost = LostAnswer(table, "put_item", sdk_retries_run_out, times=1)
    with monkeypatch.context() as flaky:
        flaky.setattr(DynamoSessionStore, "_table", property(lambda self: lost))
        decided = SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    assert decided.decision == "approve"
    assert [r["token"] for r in rt.recording_workflow.resumed] == ["token-1"]
    assert kinds(rt).count("approval_approved") == 1


# -- audit records of commands and cancels ---------------------------------------------------------


def test_a_turn_that_died_between_the_result_checkpoint_and_the_audit_write_writes_it_on_retry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rt = runtime(tool_reply("post list --format=ids"), text_reply("3件です"))
    state = started(rt, "投稿を一覧して")
    AuditFaults(monkeypatch, {"command_executed"}, times=1, error=LambdaDied(), when=not_a_fact_read)
    assert run_to_the_end(rt, state.run_id) == "COMPLETED"
    assert rt.recording_wp.commands() == [["post", "list", "--format=ids"]]  # never run twice
    assert kinds(rt).count("command_executed") == 1
    assert "command_outcome_unknown" not in kinds(rt)


def test_a_throttled_audit_write_after_the_command_ran_is_written_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rt = runtime(tool_reply("post list --format=ids"), text_reply("3件です"))
    state = started(rt, "投稿を一覧して")
    AuditFaults(monkeypatch, {"command_executed"}, times=2, error=throttling(), when=not_a_fact_read)
    assert run_to_the_end(rt, state.run_id) == "COMPLETED"
    done = rt.sessions.load(SESSION)
    assert done is not None
    assert done.result is not None
    assert done.result.success
    assert kinds(rt).count("command_executed") == 1


def test_a_blocked_commands_record_survives_a_throttled_audit_log_until_the_failure_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rt = runtime(tool_reply("db drop --yes"), text_reply("できません"))
    state = started(rt, "DBを消して")
    with monkeypatch.context() as throttled:
        AuditFaults(throttled, {"command_blocked"}, times=100, error=throttling())
        assert run_to_the_end(rt, state.run_id) == "FAILED"  # its only command was refused
    assert "command_blocked" not in kinds(rt)  # every delivery during the run was throttled
    workflow_tasks.record_failure(rt, SESSION, state.run_id, {"Error": "Unknown"})  # the failure path
    assert kinds(rt) == ["run_started", "command_blocked", "run_summary"]  # then the run's one end record


def test_cancel_is_audited_once() -> None:
    rt = runtime()
    started(rt)
    SessionService(rt).cancel(SESSION, "u1")
    # The cancel and the run's one end record (written in one delivery: the same millisecond may
    # order them either way in the log's time order).
    assert sorted(kinds(rt)) == ["run_cancelled", "run_started", "run_summary"]


def test_a_cancel_whose_audit_write_failed_lets_the_waiting_run_write_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rt = runtime(tool_reply("post delete 45"))
    state = awaiting_approval(rt)
    with monkeypatch.context() as throttled:
        AuditFaults(throttled, {"run_cancelled"}, times=1, error=throttling())
        view = SessionService(rt).cancel(SESSION, "u1")
    assert view.status == "Cancelled"
    assert rt.recording_workflow.stopped == []  # not stopped: the run ends itself, writing the record
    assert rt.recording_workflow.resumed[-1]["token"] == "token-1"  # woken from its wait
    assert workflow_tasks.run_turn(rt, SESSION, state.run_id)["route"] == "COMPLETED"
    assert kinds(rt).count("run_cancelled") == 1


@pytest.mark.parametrize("then", [sdk_retry_meets_the_write, sdk_retries_run_out])
def test_an_audit_put_whose_answer_was_lost_is_stored_once(
    monkeypatch: pytest.MonkeyPatch, then: Callable[[Any, dict[str, Any]], Any]
) -> None:
    table = boto3.resource("dynamodb", region_name=REGION).Table(TABLES["audit"])
    event = AuditEvent(
        type=AuditEventType.COMMAND_EXECUTED, user_id="u1", session_id=SESSION, target_id="t", command="x"
    )
    log = DynamoAuditLog(TABLES["audit"])
    with monkeypatch.context() as flaky:
        once = _Resource(table, then)
        flaky.setattr("wp_agent.adapters.aws.audit_log.resource", lambda name: once)
        try:
            log.append(event)
        except ConnectionError:
            log.append(event)  # delivered again from the outbox
    assert [r["record_id"] for r in log.for_session(SESSION)] == [event.record_id]
    other = AuditEvent.model_validate(event.model_dump() | {"command": "y"})  # same id, other content
    with pytest.raises(Exception, match="ConditionalCheckFailed"):
        log.append(other)


class _Resource:
    def __init__(self, table: Any, then: Callable[[Any, dict[str, Any]], Any]) -> None:
        self._lost = LostAnswer(table, "put_item", then, times=1)

    def Table(self, name: str) -> Any:  # noqa: N802 - boto3's name
        return self._lost


def test_records_waiting_in_the_outbox_survive_a_save(monkeypatch: pytest.MonkeyPatch) -> None:
    rt = runtime()
    state: SessionState = started(rt)
    with monkeypatch.context() as throttled:
        AuditFaults(throttled, {"run_cancelled"}, times=1, error=throttling())
        SessionService(rt).cancel(SESSION, "u1")
    stored = DynamoSessionStore(TABLES["sessions"]).load(SESSION)
    assert stored is not None
    # Delivered in order: the end record waits behind the cancel that could not be written.
    assert [e.type for e in stored.audit_outbox] == [
        AuditEventType.RUN_STARTED,
        AuditEventType.RUN_CANCELLED,
        AuditEventType.RUN_SUMMARY,
    ]
    assert stored.status is SessionStatus.CANCELLED
    assert state.run_id == stored.run_id
