"""Refusals on the serverless stack (API → state machine in moto → real handlers → real sshd + WP-CLI):
each is one `command_blocked` audit record with its rule and Japanese reason, a run whose every command
was refused is not a success, and a command approved while its user is at the rate limit still runs
once (it was counted when it was held)."""

from __future__ import annotations

import time
from typing import Any

import boto3
import pytest

from tests.fakes import aws as aws_fakes
from tests.fakes.anthropic_server import reply_text, reply_tool_use
from tests.fakes.serverless import OWNER, TARGET_ID, ServerlessStack
from tests.integration.test_serverless_flow import double_click
from wp_agent.adapters.aws.rate_limiter import WINDOW_SECONDS

pytestmark = pytest.mark.sshd
SESSION = "ses_refusal_0001"


def start(stack: ServerlessStack, message: str) -> None:
    status, body = stack.api(
        "POST", f"/v1/sessions/{SESSION}/messages", body={"message": message, "targetId": TARGET_ID}
    )
    assert status == 202, body


def fill_the_users_quota(limit: int = 10) -> None:
    """The user's other sessions used every command of this minute and of the next few (so the
    minute turning during the test changes nothing)."""
    table = boto3.resource("dynamodb", region_name=aws_fakes.REGION).Table(aws_fakes.TABLES["rate_limits"])
    window = int(time.time() // WINDOW_SECONDS)
    for w in range(window, window + 5):
        table.put_item(Item={"pk": f"LIMIT#user#{OWNER}", "sk": f"W#{w}", "count": limit})


def blocked(stack: ServerlessStack) -> list[dict[str, Any]]:
    return [r for r in stack.audit(SESSION) if r["type"] == "command_blocked"]


@pytest.mark.now_relative("fills the rate limiter's windows from this minute on")
def test_a_command_over_the_rate_limit_is_refused_on_record_before_anyone_is_asked(
    serverless: ServerlessStack,
) -> None:
    stack = serverless
    fill_the_users_quota()
    stack.model.enqueue(
        reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "指示された投稿を削除"})]),
        reply_text("上限のため削除できませんでした。"),
    )
    start(stack, "ID 45 の投稿を削除して")
    view = stack.wait_for(SESSION, "Failed", "Completed")
    assert view["status"] == "Failed"  # its only command was refused: not a success
    assert view["result"]["success"] is False
    assert view["result"]["error"]["code"] == "COMMAND_BLOCKED"
    assert "上限" in view["result"]["error"]["message"]
    assert stack.site.status_of(45) == "draft"
    records = blocked(stack)
    assert [(r["command"], r["rule"]) for r in records] == [
        ("post delete 45", "rate_limit.commands_per_user")
    ]
    assert "1分あたり10回" in records[0]["policy_reason"]
    assert "approval_requested" not in [r["type"] for r in stack.audit(SESSION)]


def test_the_loop_guard_refusal_is_on_record(serverless: ServerlessStack) -> None:
    stack = serverless
    same = reply_tool_use([("wp_cli", {"command": "post list --format=ids", "reason": "確認"})])
    stack.model.enqueue(same, same, same)
    start(stack, "投稿を確認して")
    view = stack.wait_for(SESSION, "Failed")
    assert view["result"]["error"]["code"] == "MAX_ITERATIONS_EXCEEDED"
    records = blocked(stack)
    assert [(r["command"], r["rule"]) for r in records] == [
        ("post list --format=ids", "loop_guard.repeated_command")
    ]
    assert "繰り返し" in records[0]["policy_reason"]


@pytest.mark.now_relative("fills the rate limiter's windows from this minute on")
def test_an_approved_command_runs_once_when_its_user_has_reached_the_limit_since(
    serverless: ServerlessStack,
) -> None:
    stack = serverless
    stack.model.enqueue(
        reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "指示された投稿を削除"})]),
        reply_text("削除しました。"),
    )
    start(stack, "ID 45 の投稿を削除して")
    view = stack.wait_for(SESSION, "AwaitingApproval")
    fill_the_users_quota()  # while the person thinks, their other sessions use up the minute
    path = f"/v1/sessions/{SESSION}/approvals/{view['pendingApproval']['approvalId']}"
    answers = double_click(stack, path, {"decision": "approve"})
    assert 200 in [status for status, _ in answers], answers
    view = stack.wait_for(SESSION, "Completed", "Failed")
    assert (view["status"], view["result"]["success"]) == ("Completed", True), view["result"]
    assert stack.site.status_of(45) == "trash"
    audit = stack.audit(SESSION)
    assert [r["command"] for r in audit if r["type"] == "command_executed" and r["category"] != "read"] == [
        "post delete 45"
    ]
    assert [r["type"] for r in audit].count("approval_approved") == 1
    assert blocked(stack) == []


@pytest.mark.now_relative("fills the rate limiter's windows from this minute on")
def test_an_undo_whose_every_revert_is_refused_is_not_a_success(serverless: ServerlessStack) -> None:
    stack = serverless
    before = stack.site.post(45)
    assert before is not None
    stack.model.enqueue(
        reply_tool_use(
            [("wp_cli", {"command": "post update 45 --post_title=新しい題名", "reason": "題名変更"})]
        ),
        reply_text("変更しました。"),
    )
    start(stack, "ID 45 の題名を変えて")
    run = stack.wait_for(SESSION, "Completed", timeout=120)
    fill_the_users_quota()  # the user's other sessions used up the minute before the undo
    stack.model.enqueue(reply_text("元に戻せませんでした。"))
    status, undo_run = stack.api("POST", f"/v1/sessions/{SESSION}/runs/{run['runId']}/undo", body={})
    assert status == 202, undo_run
    view = stack.wait_for(SESSION, "Completed", "Failed", timeout=120)
    assert view["runId"] == undo_run["runId"]
    assert (view["status"], view["result"]["success"]) == ("Failed", False), view["result"]
    assert view["result"]["error"]["code"] == "COMMAND_BLOCKED"
    after = stack.site.post(45)
    assert after is not None
    assert after["post_title"] == "新しい題名"  # nothing was reverted
    undo_audit = [r for r in stack.audit(SESSION) if r.get("run_id") == undo_run["runId"]]
    refusals = [r for r in undo_audit if r["type"] == "command_blocked"]
    assert refusals, undo_audit
    assert {r["rule"] for r in refusals} == {"rate_limit.commands_per_user"}
    assert len({r["command"] for r in refusals}) == len(refusals)  # each refusal on record once
    changes = [r for r in undo_audit if r["type"] == "command_executed" and r["category"] != "read"]
    assert changes == []  # only the read that checks the post's type ran
