"""A run through the serverless stack: API events → synthesized state machine (moto, real execution)
→ real handlers → real sshd + real WP-CLI on a real WordPress. Issue 5's end-to-end checks."""

from __future__ import annotations

import io
import json
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from aws_lambda_powertools import Logger

from tests.fakes.anthropic_server import (
    RecordedRequest,
    delay,
    reply_text,
    reply_tool_use,
    tool_results,
    tool_results_text,
)
from tests.fakes.media_server import MediaServer
from tests.fakes.serverless import ANTHROPIC_TEST_KEY, OWNER, TARGET_ID, LambdaDiedError, ServerlessStack
from tests.fakes.wordpress import SAMPLE_IMAGE_URL
from wp_agent.agent import site_facts
from wp_agent.agent.model_client import AnthropicModelClient
from wp_agent.executors.ssh import SshWpCli
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.service.lambda_setup import secure_root_handlers

pytestmark = pytest.mark.sshd
SESSION = "ses_flow_0001"


def start(stack: ServerlessStack, message: str, session: str = SESSION) -> dict[str, Any]:
    status, body = stack.api(
        "POST", f"/v1/sessions/{session}/messages", body={"message": message, "targetId": TARGET_ID}
    )
    assert status == 202, body
    return dict(body)


def delete_45_script(stack: ServerlessStack, final: str = "削除しました。") -> None:
    stack.model.enqueue(
        reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "指示された投稿を削除"})]),
        reply_text(final),
    )


def test_approve_path_runs_the_held_command_once(serverless: ServerlessStack) -> None:
    stack = serverless
    delete_45_script(stack)
    run = start(stack, "ID 45 の投稿を削除して")
    view = stack.wait_for(SESSION, "AwaitingApproval")
    pending = view["pendingApproval"]
    assert pending["commands"] == [
        {
            "command": "post delete 45",
            "summary": "投稿（ID: 45）をゴミ箱へ移動します",
            "impact": "ゴミ箱から復元できますが、サイトからは見えなくなります。",
        }
    ]
    assert stack.site.status_of(45) == "draft"

    approval = pending["approvalId"]
    path = f"/v1/sessions/{SESSION}/approvals/{approval}"
    status, body = stack.api("POST", path, body={"decision": "approve"}, user="user-2")
    assert (status, body["error"]["code"]) == (404, "SESSION_NOT_FOUND")  # as their GET answers
    # Two clicks at the same moment: the second finds the first's decision stored and not yet known
    # to have reached the run, so it is a resend of the same decision (200) or already decided (409).
    answers = double_click(stack, path, {"decision": "approve", "comment": "OK"})
    assert 200 in [status for status, _ in answers], answers
    for status, body in answers:
        assert status == 200 or (status, body["error"]["code"]) == (409, "APPROVAL_ALREADY_DECIDED"), body

    view = stack.wait_for(SESSION, "Completed")
    assert view["result"]["success"] is True
    assert view["result"]["response"] == "削除しました。"
    assert stack.site.status_of(45) == "trash"
    assert [c["command"] for c in view["executedCommands"]] == ["post delete 45"]
    execution = stack.execution(run["runId"])
    assert stack.wait_for_execution(execution["executionArn"]) == "SUCCEEDED"

    status, body = stack.api("POST", path, body={"decision": "approve"})
    assert (status, body["error"]["code"]) == (409, "APPROVAL_ALREADY_DECIDED")

    kinds = [r["type"] for r in stack.audit(SESSION)]
    assert changes_audited(stack) == ["post delete 45"]  # plus the read that described the approval
    assert {"approval_requested", "approval_approved", "command_executed"} <= set(kinds)
    approved = [r for r in stack.audit(SESSION) if r["type"] == "approval_approved"]
    assert [r["approver"] for r in approved] == [OWNER]  # one record for the one decision
    # In no particular order (the request is announced as its wait begins, the decision as it is stored).
    announced = {e["detail-type"]: e["detail"] for e in stack.events(3)}
    assert set(announced) == {"Approval Requested", "Approval Decided", "Run Completed"}
    assert announced["Approval Requested"]["runStatus"] == "awaitingApproval"
    assert announced["Run Completed"]["runStatus"] == "completed"
    decided = announced["Approval Decided"]
    assert (decided["approvalStatus"], decided["decidedBy"]) == ("approved", OWNER)
    assert decided["approvalId"] == announced["Approval Requested"]["approvalId"]

    # Step Functions carries ids only: no message, command or output in any state's input/output.
    for event in stack.history(execution["executionArn"]):
        for details in event.values():
            if isinstance(details, dict) and ("input" in details or "output" in details):
                text = json.dumps(details)
                assert "post delete" not in text
                assert "投稿" not in text


def double_click(stack: ServerlessStack, path: str, body: dict[str, Any]) -> list[tuple[int, Any]]:
    """The same POST twice at the same moment: two invocations, so two API containers."""
    clicked = threading.Barrier(2)

    def click() -> tuple[int, Any]:
        clicked.wait(timeout=10)
        return stack.api("POST", path, body=body)

    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = [answer.result(timeout=60) for answer in [pool.submit(click), pool.submit(click)]]
    assert len(stack.dispatcher.functions["api"].started) >= 2
    return answers


def test_reject_path_tells_the_model_and_changes_nothing(serverless: ServerlessStack) -> None:
    stack = serverless

    def after_rejection(request: RecordedRequest) -> Any:
        result = tool_results(request)[0]
        assert result["is_error"] is True
        return reply_text("削除は取りやめました。")

    stack.model.enqueue(
        reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "削除"})]), after_rejection
    )
    start(stack, "ID 45 を削除して")
    approval = stack.wait_for(SESSION, "AwaitingApproval")["pendingApproval"]["approvalId"]
    status, body = stack.api(
        "POST",
        f"/v1/sessions/{SESSION}/approvals/{approval}",
        body={"decision": "reject", "comment": "やめます"},
    )
    assert status == 200, body
    view = stack.wait_for(SESSION, "Completed")
    assert view["result"]["response"] == "削除は取りやめました。"
    # Ended, but not as asked: the one run-status vocabulary says declined everywhere.
    assert (view["runStatus"], view["result"]["runStatus"]) == ("declined", "declined")
    announced = {e["detail-type"]: e["detail"] for e in stack.events(3)}
    assert announced["Run Completed"]["runStatus"] == "declined"
    assert announced["Approval Decided"]["approvalStatus"] == "rejected"
    status, run_view = stack.api("GET", f"/v1/sessions/{SESSION}/runs/{view['runId']}")
    assert (status, run_view["runStatus"]) == (200, "declined")
    assert stack.site.status_of(45) == "draft"
    assert "approval_rejected" in [r["type"] for r in stack.audit(SESSION)]
    assert changes_audited(stack) == []


def changes_audited(stack: ServerlessStack) -> list[str]:
    """Executed commands that could change the site (the approval summary's reads left out)."""
    audit = stack.audit(SESSION)
    return [r["command"] for r in audit if r["type"] == "command_executed" and r.get("category") != "read"]


def test_approval_timeout_ends_the_run_cleanly(
    serverless: ServerlessStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = serverless
    monkeypatch.setenv("WP_AGENT_STATE_MACHINE_ARN", stack.short_wait_machine_arn)
    stack.model.enqueue(reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "削除"})]))
    start(stack, "ID 45 を削除して")
    view = stack.wait_for(SESSION, "Failed", timeout=60)
    assert view["result"]["error"]["code"] == "APPROVAL_EXPIRED"
    assert view["runStatus"] == "expired"
    assert "期限" in view["result"]["error"]["message"]
    assert stack.site.status_of(45) == "draft"
    assert "approval_expired" in [r["type"] for r in stack.audit(SESSION)]
    assert_announced_as_expired(stack)


def assert_announced_as_expired(stack: ServerlessStack) -> None:
    """The backend heard: approval requested, then closed as expired (by nobody), and the run failed as expired."""
    sent = stack.events(3)
    assert [e["detail-type"] for e in sent] == ["Approval Requested", "Approval Decided", "Run Failed"]
    closed = sent[1]["detail"]
    assert (closed["approvalId"], closed["approvalStatus"]) == (sent[0]["detail"]["approvalId"], "expired")
    assert "decidedBy" not in closed
    assert sent[2]["detail"]["runStatus"] == "expired"


def test_cancel_stops_the_run(serverless: ServerlessStack) -> None:
    stack = serverless
    stack.model.enqueue(
        delay(3.0, then=reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "削除"})]))
    )
    run = start(stack, "ID 45 を削除して")
    stack.wait_for(SESSION, "Planning")
    status, view = stack.api("POST", f"/v1/sessions/{SESSION}/cancel")
    assert status == 200
    assert view["status"] == "Cancelled"
    execution = stack.execution(run["runId"])
    # Stopped by the API, or ended by its next turn seeing the cancel: never a failed execution.
    ended = stack.wait_for_execution(execution["executionArn"])
    if ended == "FAILED":
        # moto only: a StopExecution landing while the Lambda task's thread is in flight can make
        # moto's own evaluator pop an empty stack; Step Functions reports ABORTED.
        causes = json.dumps(stack.history(execution["executionArn"]), default=str)
        assert "pop from empty list" in causes, causes
    else:
        assert ended in {"ABORTED", "SUCCEEDED"}
    cancelled = stack.wait_for(SESSION, "Cancelled")
    assert (cancelled["runStatus"], cancelled["result"]["error"]["code"]) == ("cancelled", "CANCELLED")
    assert stack.site.status_of(45) == "draft"
    # A cancellation is not a failure: a backend that alerts on Run Failed is not paged by it.
    kinds = {e["detail-type"] for e in stack.events(1)}
    assert "Run Cancelled" in kinds
    assert "Run Failed" not in kinds


def test_a_retried_turn_does_not_run_a_command_twice(
    serverless: ServerlessStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = serverless
    title = "重複しないはずの記事"
    command = f"post create --post_title='{title}' --post_status=draft --porcelain"

    def after_retry(request: RecordedRequest) -> Any:
        assert "結果は不明" in tool_results_text(request)
        return reply_tool_use(
            [("wp_cli", {"command": f"post list --s='{title}' --format=count", "reason": "作成されたか確認"})]
        )

    stack.model.enqueue(
        reply_tool_use([("wp_cli", {"command": command, "reason": "記事を作成"})]),
        after_retry,
        lambda request: reply_text("記事は1件作成されています。"),
    )
    real_run = SshWpCli.run

    def run_then_die(self: SshWpCli, argv: Any) -> Any:
        if CommandPolicy().classify_argv(list(argv)).category is PolicyCategory.READ:
            return real_run(self, argv)  # the reads of its before-image
        real_run(self, argv)
        monkeypatch.setattr(SshWpCli, "run", real_run)
        raise LambdaDiedError  # the Lambda dies after the command ran, before recording its result

    stack.dispatcher.before["turn"] = lambda event: monkeypatch.setattr(SshWpCli, "run", run_then_die)
    start(stack, f"「{title}」という下書きを作って")
    view = stack.wait_for(SESSION, "Completed", timeout=90)
    drafts = [
        p for p in stack.site.posts().values() if p["post_status"] == "draft" and p["post_title"] == title
    ]
    assert len(drafts) == 1
    assert [name for name, _ in stack.dispatcher.calls].count("turn") >= 3  # the first attempt was retried
    kinds = [r["type"] for r in stack.audit(SESSION)]
    assert kinds.count("command_outcome_unknown") == 1
    assert view["result"]["response"] == "記事は1件作成されています。"


def test_a_retried_first_turn_sends_the_site_facts_it_saved(
    serverless: ServerlessStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = serverless
    stack.model.enqueue(reply_text("（届かなかった答え）"), reply_text("今日は木曜日です。"))
    real_create = AnthropicModelClient.create

    def answer_then_die(self: AnthropicModelClient, **kwargs: Any) -> Any:
        real_create(self, **kwargs)  # the model answered; the Lambda dies before saving the reply
        monkeypatch.setattr(AnthropicModelClient, "create", real_create)
        for container in stack.dispatcher.functions["turn"].started:
            container.module.runtime.reset()  # the retry finds no facts kept in memory (a cold start)
        raise LambdaDiedError

    stack.dispatcher.before["turn"] = lambda event: monkeypatch.setattr(
        AnthropicModelClient, "create", answer_then_die
    )
    start(stack, "今日は何曜日？")
    view = stack.wait_for(SESSION, "Completed", timeout=90)
    assert view["result"]["response"] == "今日は木曜日です。"
    first, retried = stack.model.message_requests
    facts = first.messages[-1]["content"][0]["text"]
    assert "サイトのタイムゾーン Asia/Tokyo、UTC+09:00" in facts
    assert retried.messages == first.messages  # the same facts, saved before the first model call
    assert first.json["system"] == retried.json["system"]  # the cached prefix carries no facts
    reads = [r for r in stack.audit(SESSION) if r.get("reason") == site_facts.READ_REASON]
    assert len(reads) == len(site_facts.FactsPlan(None, None).reads)  # read once, over SSH


def test_blocked_command_in_the_cloud_run(serverless: ServerlessStack) -> None:
    stack = serverless
    stack.model.enqueue(
        reply_tool_use([("wp_cli", {"command": "db drop --yes", "reason": "指示どおり"})]),
        reply_text("実行できません。"),
    )
    start(stack, "db dropして")
    view = stack.wait_for(SESSION, "Failed")  # its only command was refused: nothing asked was done
    assert view["result"]["error"]["code"] == "COMMAND_BLOCKED"
    records = stack.audit(SESSION)
    facts = [r for r in records if r.get("reason") == site_facts.READ_REASON]  # before the first call
    assert facts
    assert {(r["type"], r["category"]) for r in facts} == {("command_executed", "read")}
    assert records[0]["type"] == "run_started"  # the instruction (masked), first
    assert records[1 : 1 + len(facts)] == facts  # read before the model saw the request
    # the refusal and the run's one end record (written together: to the millisecond, in either order)
    rest = [r for r in records[1:] if r not in facts]
    assert sorted(r["type"] for r in rest) == ["command_blocked", "run_summary"]
    (summary,) = [r for r in rest if r["type"] == "run_summary"]
    assert (summary["status"], summary["error"]) == ("failed", "COMMAND_BLOCKED")
    assert [e["detail-type"] for e in stack.events(1)] == ["Run Failed"]


def test_no_secret_reaches_a_log_line(
    serverless: ServerlessStack, capsys: pytest.CaptureFixture[str]
) -> None:
    """Everything written to stdout/stderr (Powertools JSON lines, EMF) and through the root logger
    (where the Lambda runtime's handler sits), with every library at DEBUG."""
    stack = serverless
    root = logging.getLogger()
    runtime_output = io.StringIO()
    runtime_handler = logging.StreamHandler(runtime_output)  # plays the Lambda runtime's root handler
    root.addHandler(runtime_handler)
    previous_level = root.level
    root.setLevel(logging.DEBUG)
    package = logging.getLogger("wp_agent")  # another test may have left the CLI's level on it
    previous_package_level = package.level
    package.setLevel(logging.DEBUG)
    secure_root_handlers()
    powertools_output = io.StringIO()  # where the handlers' Powertools Logger writes (stdout in Lambda)
    # The service's logger, as every container's handler module configures it (POWERTOOLS_SERVICE_NAME).
    powertools_handler = Logger().registered_handler
    assert isinstance(powertools_handler, logging.StreamHandler)
    original_stream = powertools_handler.setStream(powertools_output)
    password = "Secr3tPassw0rd!"
    stack.model.enqueue(
        reply_tool_use(
            [
                (
                    "wp_cli",
                    {
                        "command": f"user create hanako2 hanako2@example.com --role=contributor --user_pass={password}",
                        "reason": "作成",
                    },
                )
            ]
        ),
        reply_text("ユーザーを作成しました。"),
    )
    try:
        status, _ = stack.api(
            "POST",
            f"/v1/sessions/{SESSION}/messages",
            body={
                "message": f"hanako2 というユーザーを作って。パスワードは {password} で",
                "targetId": TARGET_ID,
            },
        )
        assert status == 202
        # A new login waits for the requester's approval (issue 24); the password stays masked there too.
        pending = stack.wait_for(SESSION, "AwaitingApproval")["pendingApproval"]
        assert password not in json.dumps(pending, ensure_ascii=False)
        path = f"/v1/sessions/{SESSION}/approvals/{pending['approvalId']}"
        status, body = stack.api("POST", path, body={"decision": "approve"})
        assert status == 200, body
        view = stack.wait_for(SESSION, "Completed")
    finally:
        root.removeHandler(runtime_handler)
        root.setLevel(previous_level)
        package.setLevel(previous_package_level)
        powertools_handler.setStream(original_stream)
    assert view["result"]["success"] is True
    sent = stack.model.requests[0].headers
    assert ANTHROPIC_TEST_KEY in sent.get("authorization", "") + sent.get("x-api-key", "")  # the key was used
    captured = capsys.readouterr()
    everything = captured.out + captured.err + runtime_output.getvalue() + powertools_output.getvalue()
    assert "command executed" in everything  # the run was logged
    assert "Request options" in everything  # library debug lines were logged too
    private_key = Path(stack.rig.client_key_path).read_text(encoding="utf-8")
    key_body = [line for line in private_key.splitlines() if line and not line.startswith("-----")]
    for secret in (password, ANTHROPIC_TEST_KEY, *key_body):
        assert secret not in everything
    audit = json.dumps(stack.audit(SESSION), default=str)
    assert password not in audit
    assert "--user_pass=***" in audit


def test_scheduled_run_waits_for_approval_and_expires_cleanly(serverless: ServerlessStack) -> None:
    """EventBridge Scheduler starts the workflow with ScheduledRunInput (no session yet)."""
    stack = serverless
    stack.model.enqueue(reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "定期削除"})]))
    schedule_input = {
        "scheduleId": "sch_0123456789abcdef0123",
        "ownerId": OWNER,
        "targetId": TARGET_ID,
        "agentInput": {"message": "古い下書きを削除して"},
        "scheduledTime": "2026-11-23T00:00:00Z",
    }
    execution = stack.sfn.start_execution(
        stateMachineArn=stack.short_wait_machine_arn, input=json.dumps(schedule_input)
    )["executionArn"]
    assert stack.wait_for_execution(execution) == "FAILED"  # the run ended in RunFailed after ExpireApproval
    session = "sch_0123456789abcdef0123-20261123000000"
    view = stack.wait_for(session, "Failed")
    assert view["result"]["error"]["code"] == "APPROVAL_EXPIRED"
    assert stack.site.status_of(45) == "draft"
    states = [
        e["stateEnteredEventDetails"]["name"]
        for e in stack.history(execution)
        if "stateEnteredEventDetails" in e
    ]
    assert states[:3] == ["HasSession", "PrepareScheduledRun", "AgentTurn"]
    assert "WaitForApproval" in states
    assert "ExpireApproval" in states
    assert_announced_as_expired(stack)


def test_scheduled_run_of_an_owner_who_lost_the_target_is_recorded(serverless: ServerlessStack) -> None:
    stack = serverless
    schedule_input = {
        "scheduleId": "sch_ffffffffffffffffffff",
        "ownerId": "someone-else",
        "targetId": TARGET_ID,
        "agentInput": {"message": "投稿一覧"},
        "scheduledTime": "2026-11-23T00:00:00Z",
    }
    execution = stack.sfn.start_execution(
        stateMachineArn=stack.machine_arn, input=json.dumps(schedule_input)
    )["executionArn"]
    assert stack.wait_for_execution(execution) == "FAILED"
    states = [
        e["stateEnteredEventDetails"]["name"]
        for e in stack.history(execution)
        if "stateEnteredEventDetails" in e
    ]
    assert states == ["HasSession", "PrepareScheduledRun", "RecordScheduledRunFailure", "RunFailed"]
    assert stack.model.request_count == 0  # nothing ran for a schedule whose owner may not use the target


ARTICLE = {
    "title": "AI活用の始め方",
    "content": '<h2>はじめに</h2><p>"引用" & $100 <code>track()</code></p>',
    "categories": ["ai-katsuyou", "news"],
    "tags": ["AI", "入門"],
    "status": "future",
    "publishDate": "2030-01-15T09:00:00+09:00",
    "featuredImageUrl": SAMPLE_IMAGE_URL,
    "meta": {"description": "AI活用の入門記事"},
    "targetId": TARGET_ID,
}


def wait_for_article(stack: ServerlessStack, article_id: str, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, job = stack.api("GET", f"/v1/articles/{article_id}")
        if status == 200 and job["status"] in {"Completed", "Failed"}:
            return dict(job)
        time.sleep(0.1)
    raise AssertionError(f"article job {article_id} did not finish")


def test_publish_article_through_the_workflow(
    serverless: ServerlessStack, media_server: MediaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = serverless
    # The agent downloads the image itself; only this explicit test setting lets it use a local server.
    monkeypatch.setenv("WP_AGENT_MEDIA_TEST_HOSTS", media_server.host_entry)
    article = {**ARTICLE, "featuredImageUrl": media_server.url("/img/ai.jpg")}
    status, accepted = stack.api("POST", "/v1/articles", body=article)
    assert status == 202, accepted
    job = wait_for_article(stack, accepted["articleId"])
    assert job["status"] == "Completed", job
    data = job["result"]["data"]
    post = stack.site.post(data["postId"])
    assert post is not None
    assert post["post_status"] == "future"
    assert post["post_title"] == "AI活用の始め方"
    assert post["post_content"] == ARTICLE["content"]
    assert data["editUrl"].endswith(f"/wp-admin/post.php?post={data['postId']}&action=edit")
    assert stack.model.request_count == 0  # deterministic: no model
    assert [e["detail-type"] for e in stack.events(1)] == ["Article Published"]
    assert stack.audit(f"article-{accepted['articleId']}")  # every command audited
    assert media_server.requests == ["/img/ai.jpg"]  # fetched by the agent, imported from a staged file
    assert send_other_user_is_hidden(stack, accepted["articleId"])


def send_other_user_is_hidden(stack: ServerlessStack, article_id: str) -> bool:
    status, body = stack.api("GET", f"/v1/articles/{article_id}", user="user-2")
    return status == 404 and body["error"]["code"] == "ARTICLE_NOT_FOUND"


def test_failed_publish_leaves_no_half_made_post(serverless: ServerlessStack) -> None:
    stack = serverless
    before = stack.site.posts(post_type=None)
    stack.rig.set_fault("post term", error="Database error", times=1)
    status, accepted = stack.api("POST", "/v1/articles", body=ARTICLE)
    assert status == 202
    job = wait_for_article(stack, accepted["articleId"])
    assert job["status"] == "Failed"
    assert job["result"]["success"] is False
    assert "削除しました" in job["result"]["error"]["message"]
    assert stack.site.posts(post_type=None) == before
    assert [e["detail-type"] for e in stack.events(1)] == ["Article Failed"]


def test_invalid_article_is_refused_with_field_errors(serverless: ServerlessStack) -> None:
    stack = serverless
    status, body = stack.api(
        "POST", "/v1/articles", body=ARTICLE | {"status": "future", "publishDate": None, "title": ""}
    )
    assert status == 400
    assert body["error"]["code"] == "VALIDATION_ERROR"
    assert {"publishDate", "title"} <= set(body["error"]["fields"])
    assert stack.sfn.list_executions(stateMachineArn=stack.machine_arn)["executions"] == []
