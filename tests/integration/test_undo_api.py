"""POST /v1/sessions/{id}/runs/{runId}/undo through the serverless stack (API → state machine →
turn Lambda → real sshd + WP-CLI on a real WordPress): the undo is a run of its own, planned from
the before-images, with the same policy, approval and audit; what changed since is left alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.anthropic_server import reply_text, reply_tool_use
from tests.fakes.serverless import OWNER, TARGET_ID, ServerlessStack

pytestmark = pytest.mark.sshd
SESSION = "ses_undo_0001"


@pytest.mark.slow
def test_a_run_is_undone_through_the_api(
    serverless: ServerlessStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = serverless
    # About undo, not the per-user command limit: the run, the undo's restore steps and their
    # before-image reads come close to the default 10 a minute.
    monkeypatch.setenv("WP_AGENT_COMMANDS_PER_USER_PER_MINUTE", "100")
    site = stack.site
    before = site.post(45)
    assert before is not None
    title = before["post_title"]
    stack.model.enqueue(
        reply_tool_use(
            [
                (
                    "wp_cli",
                    {"command": "post update 45 --post_title=エージェントの題名", "reason": "題名変更"},
                ),
                (
                    "wp_cli",
                    {"command": "option update blogdescription エージェントの説明", "reason": "説明変更"},
                ),
                ("wp_cli", {"command": "post delete 46", "reason": "削除"}),
            ]
        ),
        reply_text("変更しました。"),
    )
    status, run = stack.api(
        "POST",
        f"/v1/sessions/{SESSION}/messages",
        body={"message": "題名と説明を変えて46を削除", "targetId": TARGET_ID},
    )
    assert status == 202, run
    view = stack.wait_for(SESSION, "AwaitingApproval")
    approval = view["pendingApproval"]["approvalId"]
    status, _ = stack.api(
        "POST", f"/v1/sessions/{SESSION}/approvals/{approval}", body={"decision": "approve"}
    )
    assert status == 200
    view = stack.wait_for(SESSION, "Completed")
    assert {c["command"]: c["undoAvailable"] for c in view["executedCommands"]} == {
        "post update 45 --post_title=エージェントの題名": True,
        "option update blogdescription エージェントの説明": True,
        "post delete 46": True,
    }
    undo_path = f"/v1/sessions/{SESSION}/runs/{run['runId']}/undo"

    status, body = stack.api("POST", undo_path, body={"dryRun": True}, user="user-2")
    assert (status, body["error"]["code"]) == (404, "SESSION_NOT_FOUND")  # requester only
    status, body = stack.api("POST", undo_path, body={"dryRun": True})
    assert status == 200, body
    assert body["undoAvailable"] is True
    assert [c["undoAvailable"] for c in body["commands"]] == [True, True, True]
    status, body = stack.api("POST", f"/v1/sessions/{SESSION}/runs/run_00000000000000000000/undo", body={})
    assert (status, body["error"]["code"]) == (404, "RUN_NOT_FOUND")

    # An editor changes the description after the run: the undo must leave it.
    assert site.wp("option", "update", "blogdescription", "編集者の説明").returncode == 0
    model_calls = stack.model.request_count
    status, undo_run = stack.api("POST", undo_path, body={})
    assert status == 202, undo_run
    assert undo_run["runId"] != run["runId"]
    assert undo_run["revertsRunId"] == run["runId"]  # the 202 says what it puts back
    # Putting back a title and a trashed post asks nobody: WordPress's trash records are deleted by the
    # values the run added, which the plan approves itself (and says so in the audit).
    view = stack.wait_for(SESSION, "Completed", "Failed", "AwaitingApproval")
    assert view["status"] == "Completed", view
    # The answer is written from the records, as `wp-agent undo` says it: no model call.
    assert stack.model.request_count == model_calls
    answer = view["result"]["response"]
    assert answer.startswith(f"{run['runId']} で変更した内容を元に戻しました"), answer
    assert "blogdescription" in answer  # left alone, and said so
    assert_undone_as_the_backend_sees_it(stack, run["runId"], undo_run["runId"])
    after = site.post(45)
    assert after is not None
    assert after["post_title"] == title
    assert site.status_of(46) == "draft"
    assert site.wp("option", "get", "blogdescription").stdout.strip() == "編集者の説明"

    audit = stack.audit(SESSION)
    started = [r for r in audit if r["type"] == "run_revert_started"]
    assert [(r["reverts_run_id"], r["run_id"], r["user_id"]) for r in started] == [
        (run["runId"], undo_run["runId"], OWNER)
    ]
    undo_commands = [
        r["command"]
        for r in audit
        if r.get("run_id") == undo_run["runId"]
        and r["type"] == "command_executed"
        and r.get("category") != "read"
    ]
    assert any(c.startswith("post update 45") for c in undo_commands)
    assert not any("blogdescription" in c for c in undo_commands)
    assert_approved_by_the_plan_alone(audit, undo_run["runId"])
    assert_a_second_undo_starts_nothing(stack, undo_path, undo_run["runId"])


def assert_approved_by_the_plan_alone(audit: list[dict[str, Any]], undo_run_id: str) -> None:
    """Nobody was asked: the only approvals are the plan's own, of WordPress's trash records."""
    approvals = [r for r in audit if r.get("run_id") == undo_run_id and "approval" in r["type"]]
    assert {(r["type"], r.get("approver")) for r in approvals} == {("approval_approved", "system:undoPlan")}
    assert sorted(r["command"].split()[4] for r in approvals) == [
        "_wp_desired_post_slug", "_wp_trash_meta_status", "_wp_trash_meta_time",
    ]  # fmt: skip


def assert_undone_as_the_backend_sees_it(stack: ServerlessStack, run_id: str, undo_run_id: str) -> None:
    """The run's view says undone, and the backend got Run Undone, once, naming the run and the undo
    run that put it back."""
    status, original = stack.api("GET", f"/v1/sessions/{SESSION}/runs/{run_id}")
    assert (status, original["runStatus"]) == (200, "undone")
    undone = [e["detail"] for e in stack.events_until("Run Undone") if e["detail-type"] == "Run Undone"]
    assert [(d["runId"], d["undoRunId"], d["runStatus"]) for d in undone] == [(run_id, undo_run_id, "undone")]


def assert_a_second_undo_starts_nothing(stack: ServerlessStack, undo_path: str, undo_run_id: str) -> None:
    """Undone once: a second undo is refused, says which run undid it, and starts no run."""
    status, body = stack.api("POST", undo_path, body={})
    assert (status, body["error"]["code"]) == (409, "NOTHING_TO_UNDO"), body
    assert undo_run_id in body["error"]["message"]
    assert stack.wait_for(SESSION, "Completed")["runId"] == undo_run_id


@pytest.mark.slow
def test_an_undo_the_person_declines_changes_nothing(
    serverless: ServerlessStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Part of an undo waits for the person (deleting an option the run added): every write of it waits
    with it, so a refusal leaves the site as the run left it, not half put back."""
    stack = serverless
    monkeypatch.setenv("WP_AGENT_COMMANDS_PER_USER_PER_MINUTE", "100")
    session = "ses_undo_0002"
    stack.model.enqueue(
        reply_tool_use(
            [
                ("wp_cli", {"command": "option add wp_agent_note メモ", "reason": "追加"}),
                ("wp_cli", {"command": "post delete 46", "reason": "削除"}),
            ]
        ),
        reply_text("しました。"),
    )
    status, run = stack.api(
        "POST",
        f"/v1/sessions/{session}/messages",
        body={"message": "メモを足して46を削除", "targetId": TARGET_ID},
    )
    assert status == 202, run
    view = stack.wait_for(session, "AwaitingApproval", "Completed")
    if view["status"] == "AwaitingApproval":
        approval = view["pendingApproval"]["approvalId"]
        stack.api("POST", f"/v1/sessions/{session}/approvals/{approval}", body={"decision": "approve"})
        view = stack.wait_for(session, "Completed")
    assert stack.site.status_of(46) == "trash"
    meta = stack.site.wp("post", "meta", "list", "46", "--format=json").stdout

    status, undo_run = stack.api("POST", f"/v1/sessions/{session}/runs/{run['runId']}/undo", body={})
    assert status == 202, undo_run
    view = stack.wait_for(session, "AwaitingApproval", timeout=120)
    asked = [item["command"] for item in view["pendingApproval"]["commands"]]
    assert any(c.startswith("option delete wp_agent_note") for c in asked), asked
    assert any(c.startswith("post update 46") for c in asked), asked  # waits with it
    approval = view["pendingApproval"]["approvalId"]
    status, _ = stack.api("POST", f"/v1/sessions/{session}/approvals/{approval}", body={"decision": "reject"})
    assert status == 200
    stack.wait_for(session, "Completed", "Failed")
    assert stack.site.status_of(46) == "trash"  # nothing of the undo ran
    assert stack.site.wp("post", "meta", "list", "46", "--format=json").stdout == meta
    assert stack.site.wp("option", "get", "wp_agent_note").stdout.strip() == "メモ"
