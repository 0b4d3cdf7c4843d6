"""The services when things happen at once: a turn and the API writing the same session, a decision
arriving as the approval wait times out, a cancel during a wait, an article attempt outliving its
job. Sessions live in moto DynamoDB; the workflow, bus, model and WP-CLI are recorded doubles."""

from __future__ import annotations

import base64
import functools
import os
from collections.abc import Callable
from typing import Any

import pytest

from tests.fakes import aws as aws_fakes
from tests.fakes.agent_doubles import ScriptedModel, is_fact_read, text_reply, tool_reply
from tests.fakes.aws import TaskTokensAsOnAws
from tests.fakes.service_runtime import RecordedRuntime
from wp_agent.adapters.aws import workflow as workflow_adapter
from wp_agent.adapters.aws.article_jobs import ArticleJobStore
from wp_agent.adapters.aws.events import APPROVAL_DECIDED, ARTICLE_FAILED, RUN_CANCELLED, RUN_FAILED
from wp_agent.adapters.aws.session_store import DynamoSessionStore
from wp_agent.adapters.aws.workflow import RunWorkflow
from wp_agent.agent import site_facts
from wp_agent.agent.approval_protocol import ResumeOutcome
from wp_agent.agent.model_client import ModelReply
from wp_agent.agent.session_state import ApprovalStatus, DecisionDelivery, SessionState, SessionStatus
from wp_agent.errors import AgentErrorCode
from wp_agent.executors.port import CommandResult
from wp_agent.models.api import ApprovalDecisionRequest, ArticlePublishRequest, SessionMessageRequest
from wp_agent.models.article import PublishArticleOutput
from wp_agent.models.events import event_id
from wp_agent.service import workflow_tasks
from wp_agent.service.api_errors import ApiError
from wp_agent.service.articles import ArticleService
from wp_agent.service.sessions import SessionService

pytestmark = pytest.mark.usefixtures("aws")

SESSION = "ses_race_0001"
APPROVE = ApprovalDecisionRequest(decision="approve")


def runtime(*steps: Any) -> RecordedRuntime:
    rt = RecordedRuntime(ScriptedModel(list(steps)))
    rt.register_target()
    return rt


def started(rt: RecordedRuntime, message: str = "45を削除して") -> SessionState:
    accepted = SessionService(rt).post_message(
        SESSION, "u1", SessionMessageRequest(message=message, target_id="site-a")
    )
    state = rt.sessions.load(SESSION)
    assert state is not None
    assert state.run_id == accepted.run_id
    return state


def awaiting_approval(rt: RecordedRuntime) -> SessionState:
    state = started(rt)
    assert workflow_tasks.run_turn(rt, SESSION, state.run_id)["route"] == "AWAITING_APPROVAL"
    loaded = rt.sessions.load(SESSION)
    assert loaded is not None
    assert loaded.pending_approval is not None
    workflow_tasks.wait_for_approval(
        rt, SESSION, loaded.run_id, loaded.pending_approval.approval_id, "token-1"
    )
    return loaded


def holding_delete_45() -> tuple[RecordedRuntime, SessionState, str]:
    """A run waiting for approval of `post delete 45`: the runtime, the state and the approval id."""
    rt = runtime(tool_reply("post delete 45"))
    state = awaiting_approval(rt)
    assert state.pending_approval is not None
    return rt, state, state.pending_approval.approval_id


def another_writer_saves() -> None:
    """An unrelated save by someone else (another Lambda): the session's version moves on."""
    other = DynamoSessionStore(aws_fakes.TABLES["sessions"])
    state = other.load(SESSION)
    assert state is not None
    other.save(state)


def a_rival_saves_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next save of the session loses the race to another writer (later saves do not)."""
    real_save = DynamoSessionStore.save
    raced: list[bool] = []

    def save_after_a_rival(store: DynamoSessionStore, session: SessionState) -> None:
        if not raced:
            raced.append(True)
            another_writer_saves()
        real_save(store, session)

    monkeypatch.setattr(DynamoSessionStore, "save", save_after_a_rival)


def racing(reply: ModelReply) -> Callable[[list[dict[str, Any]]], ModelReply]:
    """A model step during which another writer saves the session."""

    def step(messages: list[dict[str, Any]]) -> ModelReply:
        another_writer_saves()
        return reply

    return step


def approval_events(rt: RecordedRuntime) -> list[str]:
    return [e["type"] for e in rt.audit.for_session(SESSION) if e["type"].startswith("approval_")]


def test_the_first_turn_finds_the_session_as_the_api_left_it() -> None:
    rt = runtime(text_reply("こんにちは"))
    state = started(rt, "こんにちは")
    # Saved once, with the execution already named: nothing the API writes later can race the turn.
    assert state.execution_arn == rt.recording_workflow.execution_arn(state.run_id)
    assert rt.recording_workflow.started == [state.run_id]
    assert workflow_tasks.run_turn(rt, SESSION, state.run_id)["route"] == "COMPLETED"
    done = rt.sessions.load(SESSION)
    assert done is not None
    assert done.status is SessionStatus.COMPLETED


def test_a_turn_that_lost_a_race_runs_again_on_the_current_state() -> None:
    rt = runtime(racing(text_reply("一回目")), text_reply("二回目"))
    state = started(rt, "こんにちは")
    assert workflow_tasks.run_turn(rt, SESSION, state.run_id)["route"] == "COMPLETED"
    done = rt.sessions.load(SESSION)
    assert done is not None
    assert done.status is SessionStatus.COMPLETED
    assert done.result is not None
    assert done.result.response == "二回目"


def test_a_turn_that_keeps_losing_is_handed_to_the_failure_path() -> None:
    rt = runtime(*[racing(text_reply("応答")) for _ in range(3)])
    state = started(rt, "こんにちは")
    with pytest.raises(workflow_tasks.WorkflowTaskError):
        workflow_tasks.run_turn(rt, SESSION, state.run_id)
    # The workflow's catch records it; the session does not stay busy.
    assert workflow_tasks.record_failure(rt, SESSION, state.run_id, {"Error": "WorkflowTaskError"})[
        "recorded"
    ]
    failed = rt.sessions.load(SESSION)
    assert failed is not None
    assert failed.status is SessionStatus.FAILED


def test_a_run_whose_failure_could_not_be_recorded_does_not_keep_the_session_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rt = runtime(text_reply("次の依頼への応答"))
    state = started(rt, "こんにちは")

    def unreadable(store: DynamoSessionStore, session_id: str) -> SessionState:
        raise ConnectionError("sessions table throttled")

    with monkeypatch.context() as broken:
        broken.setattr(DynamoSessionStore, "load", unreadable)
        with pytest.raises(ConnectionError):  # the workflow retries it; say every attempt fails
            workflow_tasks.record_failure(rt, SESSION, state.run_id, {"Error": "Sandbox.Timedout"})
    assert state.execution_arn is not None
    rt.recording_workflow.ended.add(state.execution_arn)  # the execution ended FAILED
    accepted = SessionService(rt).post_message(SESSION, "u1", SessionMessageRequest(message="次の依頼"))
    assert accepted.run_id != state.run_id
    archived = rt.recording_events.published[0]
    assert (archived[0], archived[1]["runId"]) == (RUN_FAILED, state.run_id)


def test_a_running_execution_keeps_its_session_busy() -> None:
    rt = runtime()
    started(rt, "こんにちは")
    with pytest.raises(ApiError) as busy:
        SessionService(rt).post_message(SESSION, "u1", SessionMessageRequest(message="次の依頼"))
    assert (busy.value.status, busy.value.code) == (409, "SESSION_BUSY")


def past_its_expiry(rt: RecordedRuntime) -> Callable[[str], None]:
    """on_resume hook: the clock passes the approval's expiry while the decision is on its way."""

    def expire_clock(token: str) -> None:
        current = rt.sessions.load(SESSION)
        assert current is not None
        assert current.pending_approval is not None
        current.pending_approval.expires_at = "2020-01-01T00:00:00Z"
        rt.sessions.save(current)

    return expire_clock


def test_a_closed_wait_leaves_any_expiry_to_the_workflow() -> None:
    rt, state, approval_id = holding_delete_45()
    rt.recording_workflow.on_resume = past_its_expiry(rt)
    rt.recording_workflow.resume_outcomes = [ResumeOutcome.TIMED_OUT]
    decided = SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    assert decided.status == "AwaitingApproval"  # recorded; the API changes nothing on a closed wait
    # Had the wait really timed out, the workflow's timeout path ends the run, once.
    workflow_tasks.expire_approval(rt, SESSION, state.run_id)
    ended = rt.sessions.load(SESSION)
    assert ended is not None
    assert ended.status is SessionStatus.FAILED
    assert ended.result is not None
    assert ended.result.error is not None
    assert ended.result.error.code is AgentErrorCode.APPROVAL_EXPIRED
    workflow_tasks.expire_approval(rt, SESSION, state.run_id)
    assert rt.recording_events.kinds().count(RUN_FAILED) == 1
    # The backend heard the decision, then what happened: the run never took it and it expired. Two
    # announcements, each with its own id (a consumer de-duplicating keeps both).
    closed = [detail for kind, detail in rt.recording_events.published if kind == APPROVAL_DECIDED]
    assert [d["approvalStatus"] for d in closed] == ["approved", "expired"]
    assert len({event_id(APPROVAL_DECIDED, d) for d in closed}) == 2
    assert rt.recording_wp.changes() == []
    with pytest.raises(ApiError) as late:  # and a resend then learns it expired
        SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    assert (late.value.status, late.value.code) == (409, "APPROVAL_EXPIRED")


def holding_delete_45_on_aws(
    monkeypatch: pytest.MonkeyPatch, closed_error: str
) -> tuple[RecordedRuntime, str, TaskTokensAsOnAws]:
    """holding_delete_45, its wait answered through the real adapter (RunWorkflow.resume) by a Step
    Functions that refuses a used token as AWS does (with `closed_error`)."""
    rt, _state, approval_id = holding_delete_45()
    aws = TaskTokensAsOnAws("token-1", closed_error=closed_error)
    monkeypatch.setattr(workflow_adapter, "client", lambda service: aws)
    monkeypatch.setattr(
        rt.recording_workflow, "resume", functools.partial(RunWorkflow.resume, rt.recording_workflow, pause=0)
    )
    return rt, approval_id, aws


@pytest.mark.parametrize("closed_error", ["TaskTimedOut", "InvalidToken"])
def test_a_double_click_that_reaches_the_wait_first_delivers_the_decision_once(
    monkeypatch: pytest.MonkeyPatch, closed_error: str
) -> None:
    rt, approval_id, aws = holding_delete_45_on_aws(monkeypatch, closed_error)
    twin: list[str] = []
    aws.before_it_lands = lambda: twin.append(
        SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE).status
    )
    first = SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    # Stored, not yet known to be handed over: the twin hands it over and the wait takes it. The
    # first click's own hand-over then finds the token used — for a new decision that can only mean
    # it was delivered (the wait closes after the deadline the decision was checked against).
    assert (first.status, twin) == ("AwaitingApproval", ["AwaitingApproval"])
    assert aws.accepted == [("token-1", {"approvalId": approval_id, "decision": "approve"})]
    assert {code for _, code in aws.refused} == {closed_error}
    assert approval_events(rt) == ["approval_requested", "approval_approved"]
    after = rt.sessions.load(SESSION)
    assert after is not None
    assert after.pending_approval is not None
    assert after.pending_approval.delivery is DecisionDelivery.HANDED_OVER


@pytest.mark.parametrize("closed_error", ["TaskTimedOut", "InvalidToken"])
def test_a_double_click_that_reaches_the_wait_second_is_told_it_was_already_decided(
    monkeypatch: pytest.MonkeyPatch, closed_error: str
) -> None:
    rt, approval_id, aws = holding_delete_45_on_aws(monkeypatch, closed_error)
    twin: list[tuple[int, str, str]] = []

    def twin_click() -> None:
        try:
            SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
        except ApiError as refused:
            twin.append((refused.status, refused.code, refused.message_ja))

    aws.after_it_landed = twin_click  # the first click's decision is in; its answer is on the way back
    first = SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    assert first.status == "AwaitingApproval"
    assert twin == [(409, "APPROVAL_ALREADY_DECIDED", "この承認リクエストは既に承認されています。")]
    assert aws.accepted == [("token-1", {"approvalId": approval_id, "decision": "approve"})]
    assert approval_events(rt) == ["approval_requested", "approval_approved"]
    after = rt.sessions.load(SESSION)
    assert after is not None
    assert after.status is SessionStatus.AWAITING_APPROVAL  # the run goes on with the decision
    assert after.pending_approval is not None
    assert (after.pending_approval.status, after.pending_approval.delivery) == (
        ApprovalStatus.APPROVED,
        DecisionDelivery.HANDED_OVER,
    )


def test_a_decision_on_a_cancelled_run_is_refused() -> None:
    rt = runtime(tool_reply("post delete 45"))
    state = awaiting_approval(rt)
    assert state.pending_approval is not None
    SessionService(rt).cancel(SESSION, "u1")
    with pytest.raises(ApiError) as refused:
        SessionService(rt).decide(SESSION, state.pending_approval.approval_id, "u1", APPROVE)
    assert (refused.value.status, refused.value.code) == (409, "RUN_ENDED")
    assert rt.recording_workflow.resumed == []
    # The backend learns both: the approval closed (cancelled, by nobody), and the run was cancelled
    # (not failed: a cancellation pages no one).
    kinds = rt.recording_events.kinds()
    assert RUN_CANCELLED in kinds
    assert RUN_FAILED not in kinds
    closed = [detail for kind, detail in rt.recording_events.published if kind == APPROVAL_DECIDED]
    assert [(d["approvalId"], d["approvalStatus"], d["runId"]) for d in closed] == [
        (state.pending_approval.approval_id, "cancelled", state.run_id)
    ]
    assert "decidedBy" not in closed[0]


def test_an_expired_approval_stays_expired_after_a_follow_up_run() -> None:
    rt = runtime(tool_reply("post delete 45"), text_reply("了解しました"))
    state = awaiting_approval(rt)
    assert state.pending_approval is not None
    approval_id = state.pending_approval.approval_id
    workflow_tasks.expire_approval(rt, SESSION, state.run_id)
    SessionService(rt).post_message(SESSION, "u1", SessionMessageRequest(message="別の依頼"))
    with pytest.raises(ApiError) as refused:
        SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    assert (refused.value.status, refused.value.code) == (409, "APPROVAL_EXPIRED")
    follow_up = rt.sessions.load(SESSION)
    assert follow_up is not None
    archived = follow_up.find_approval(approval_id)
    assert archived is not None
    assert archived.status is ApprovalStatus.EXPIRED


def test_a_decision_that_raced_another_save_is_audited_once(monkeypatch: pytest.MonkeyPatch) -> None:
    rt = runtime(tool_reply("post delete 45"))
    state = awaiting_approval(rt)
    assert state.pending_approval is not None
    a_rival_saves_first(monkeypatch)  # the first attempt goes stale; the decision is applied again
    decided = SessionService(rt).decide(SESSION, state.pending_approval.approval_id, "u1", APPROVE)
    assert decided.decision == "approve"
    assert approval_events(rt).count("approval_approved") == 1
    assert rt.recording_workflow.resumed == [
        {"approvalId": state.pending_approval.approval_id, "decision": "approve", "token": "token-1"}
    ]


def test_a_timed_out_wait_of_a_cancelled_run_reports_the_run_ended() -> None:
    rt = runtime(tool_reply("post delete 45"))
    state = awaiting_approval(rt)
    assert state.pending_approval is not None

    def cancelled_meanwhile(token: str) -> None:
        SessionService(rt).cancel(SESSION, "u1")

    rt.recording_workflow.on_resume = cancelled_meanwhile
    rt.recording_workflow.resume_outcomes = [ResumeOutcome.TIMED_OUT]
    with pytest.raises(ApiError) as refused:
        SessionService(rt).decide(SESSION, state.pending_approval.approval_id, "u1", APPROVE)
    assert (refused.value.status, refused.value.code) == (409, "RUN_ENDED")


def test_a_decision_made_while_the_wait_restarted_reaches_the_new_wait() -> None:
    rt, state, approval_id = holding_delete_45()
    # The wait task's attempt that stored token-1 failed: Step Functions closed token-1 and retries.
    rt.recording_workflow.resume("token-1", {"closed": "by the failed attempt"})
    decided = SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    assert decided.decision == "approve"  # stored; the wait that starts again answers itself
    workflow_tasks.wait_for_approval(rt, SESSION, state.run_id, approval_id, "token-2")
    assert rt.recording_workflow.resumed[-1] == {
        "approvalId": approval_id,
        "decision": "approve",
        "token": "token-2",
    }
    after = rt.sessions.load(SESSION)
    assert after is not None
    assert after.status is SessionStatus.AWAITING_APPROVAL


def test_a_decision_the_workflow_did_not_take_can_be_sent_again(monkeypatch: pytest.MonkeyPatch) -> None:
    rt, _state, approval_id = holding_delete_45()
    real_resume = rt.recording_workflow.resume

    def throttled(task_token: str, decision: dict[str, Any], **kwargs: Any) -> ResumeOutcome:
        raise ConnectionError("states endpoint throttled")

    monkeypatch.setattr(rt.recording_workflow, "resume", throttled)
    with pytest.raises(ApiError) as unavailable:
        SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    assert (unavailable.value.status, unavailable.value.code) == (503, "WORKFLOW_UNAVAILABLE")
    monkeypatch.setattr(rt.recording_workflow, "resume", real_resume)
    noted = rt.sessions.load(SESSION)
    assert noted is not None
    assert noted.pending_approval is not None
    assert noted.pending_approval.delivery is DecisionDelivery.HANDOVER_FAILED
    again = SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)  # the requester retries
    assert again.decision == "approve"
    assert [r["token"] for r in rt.recording_workflow.resumed] == ["token-1"]
    assert approval_events(rt).count("approval_approved") == 1  # recorded once, handed over on the resend
    with pytest.raises(ApiError) as changed_mind:
        SessionService(rt).decide(SESSION, approval_id, "u1", ApprovalDecisionRequest(decision="reject"))
    assert (changed_mind.value.status, changed_mind.value.code) == (409, "APPROVAL_ALREADY_DECIDED")


def test_a_repeated_decision_after_it_reached_the_wait_is_already_decided() -> None:
    rt, _state, approval_id = holding_delete_45()
    SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    # A double click: the run has not picked the decision up yet, and the wait is closed.
    with pytest.raises(ApiError) as repeated:
        SessionService(rt).decide(SESSION, approval_id, "u1", APPROVE)
    assert (repeated.value.status, repeated.value.code) == (409, "APPROVAL_ALREADY_DECIDED")
    assert len(rt.recording_workflow.resumed) == 1  # answered from the session alone
    after = rt.sessions.load(SESSION)
    assert after is not None
    assert after.status is SessionStatus.AWAITING_APPROVAL  # not expired: the run goes on
    assert after.pending_approval is not None
    assert after.pending_approval.status is ApprovalStatus.APPROVED
    assert approval_events(rt).count("approval_approved") == 1
    assert approval_events(rt).count("approval_expired") == 0
    assert RUN_FAILED not in rt.recording_events.kinds()


def test_a_command_that_ran_while_the_run_was_cancelled_is_audited() -> None:
    rt = runtime(tool_reply("post list --format=ids"))
    state = started(rt, "投稿を一覧して")

    def cancelled_while_running(argv: list[str]) -> CommandResult:
        if not is_fact_read(argv):  # the command, not the site's facts read before the model's call
            SessionService(rt).cancel(SESSION, "u1")
        return CommandResult("1 2 3\n", "", 0, 5)

    rt.recording_wp.handler = cancelled_while_running
    assert workflow_tasks.run_turn(rt, SESSION, state.run_id)["route"] == "COMPLETED"  # the cancel stands
    ended = rt.sessions.load(SESSION)
    assert ended is not None
    assert ended.status is SessionStatus.CANCELLED
    executed = [e for e in rt.audit.for_session(SESSION) if e["type"] == "command_executed"]
    assert [e["command"] for e in executed if e["reason"] != site_facts.READ_REASON] == [
        "post list --format=ids"
    ]


def test_a_cancel_while_the_site_facts_are_read_stands_and_the_reads_are_audited() -> None:
    rt = runtime(text_reply("（呼ばれないはずの答え）"))
    state = started(rt, "こんにちは")

    def cancelled_while_reading(argv: list[str]) -> CommandResult:
        if argv == list(site_facts.NAME):
            SessionService(rt).cancel(SESSION, "u1")
        return CommandResult("x\n", "", 0, 5)

    rt.recording_wp.handler = cancelled_while_reading
    assert workflow_tasks.run_turn(rt, SESSION, state.run_id)["route"] == "COMPLETED"  # the cancel stands
    ended = rt.sessions.load(SESSION)
    assert ended is not None
    assert ended.status is SessionStatus.CANCELLED
    assert rt.scripted_model.calls == []  # the model was never asked
    reads = [e for e in rt.audit.for_session(SESSION) if e.get("reason") == site_facts.READ_REASON]
    assert sorted(e["command"] for e in reads) == sorted(
        " ".join(r) for r in site_facts.FactsPlan(None, None).reads
    )


def test_a_cancel_stands_when_the_execution_cannot_be_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    rt = runtime()
    started(rt)

    def unavailable(execution_arn: str, *, cause: str) -> None:
        raise ConnectionError("states endpoint unavailable")

    monkeypatch.setattr(rt.recording_workflow, "stop", unavailable)
    view = SessionService(rt).cancel(SESSION, "u1")
    assert view.status == "Cancelled"
    cancelled = rt.sessions.load(SESSION)
    assert cancelled is not None
    # The run's next turn sees the cancel and ends without calling the model.
    assert workflow_tasks.run_turn(rt, SESSION, cancelled.run_id)["route"] == "COMPLETED"


def test_an_expiry_that_raced_another_save_is_still_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    rt = runtime(tool_reply("post delete 45"))
    state = awaiting_approval(rt)
    a_rival_saves_first(monkeypatch)
    assert workflow_tasks.expire_approval(rt, SESSION, state.run_id)["status"] == "Failed"
    assert approval_events(rt).count("approval_expired") == 1


def test_an_article_too_large_to_store_is_refused_before_anything_starts() -> None:
    rt = runtime()
    content = "<p>" + base64.b64encode(os.urandom(600_000)).decode() + "</p>"  # ~800 KB that barely packs
    request = ArticlePublishRequest(title="画像入り", content=content, status="draft", target_id="site-a")
    with pytest.raises(ApiError) as refused:
        ArticleService(rt).submit("u1", request)
    assert (refused.value.status, refused.value.code) == (413, "ARTICLE_TOO_LARGE")
    assert rt.recording_workflow.started == []


def test_an_attempt_that_outlived_its_job_announces_nothing() -> None:
    rt = runtime()
    articles = ArticleService(rt)
    request = ArticlePublishRequest(title="t", content="<p>本文</p>", status="draft", target_id="site-a")
    article_id = articles.submit("u1", request).article_id
    jobs = ArticleJobStore(aws_fakes.TABLES["sessions"])
    assert jobs.transition(article_id, from_status="Queued", to_status="Running")  # attempt 1 runs...
    articles.record_failure(article_id, {"Error": "States.Timeout"})  # ...the workflow gives up on it
    assert rt.recording_events.kinds() == [ARTICLE_FAILED]
    job = jobs.get(article_id)
    assert job is not None
    articles._finish(article_id, job, PublishArticleOutput(success=True))  # attempt 1 ends late
    assert rt.recording_events.kinds() == [ARTICLE_FAILED]
    found = jobs.get(article_id)
    assert found is not None
    assert found.view.status == "Failed"


def test_a_decision_resent_for_an_earlier_approval_while_a_new_one_waits_is_already_decided() -> None:
    rt = runtime(tool_reply("post delete 45"), tool_reply("post delete 46"))
    state = awaiting_approval(rt)
    assert state.pending_approval is not None
    first = state.pending_approval.approval_id
    SessionService(rt).decide(SESSION, first, "u1", APPROVE)
    while workflow_tasks.run_turn(rt, SESSION, state.run_id)["route"] == "CONTINUE":
        pass
    now = rt.sessions.load(SESSION)
    assert now is not None
    assert now.status is SessionStatus.AWAITING_APPROVAL
    assert now.pending_approval is not None
    assert now.pending_approval.approval_id != first  # "post delete 46" waits now
    with pytest.raises(ApiError) as resent:
        SessionService(rt).decide(SESSION, first, "u1", APPROVE)
    assert (resent.value.status, resent.value.code) == (409, "APPROVAL_ALREADY_DECIDED")
