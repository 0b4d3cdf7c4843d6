"""Every run ends with exactly one audit record that says how it ended (the run summary the CLI's
`history` and the API's run view read), on the serverless path too: completed, failed with its code
(an SSH failure, the iteration cap, a function error caught by the state machine's failure path),
cancelled, expired — written through the session's outbox, so a retried step never writes a second."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from tests.fakes.anthropic_server import reply_text, reply_tool_use
from tests.fakes.aws import TABLES
from tests.fakes.serverless import LambdaDiedError, ServerlessStack
from wp_agent.adapters.aws.registry import TargetRegistry
from wp_agent.service import notifications, workflow_tasks

pytestmark = pytest.mark.sshd
SESSION = "ses_run_end_01"


def start(stack: ServerlessStack, message: str, **extra: Any) -> str:
    status, body = stack.api(
        "POST", f"/v1/sessions/{SESSION}/messages", body={"message": message, "targetId": "site-a", **extra}
    )
    assert status == 202, body
    return str(body["runId"])


def summaries(stack: ServerlessStack, run_id: str) -> list[dict[str, Any]]:
    return [r for r in stack.audit(SESSION) if r["type"] == "run_summary" and r.get("run_id") == run_id]


def the_end(stack: ServerlessStack, run_id: str) -> dict[str, Any]:
    stack.settle()
    (summary,) = summaries(stack, run_id)
    status, run = stack.api("GET", f"/v1/sessions/{SESSION}/runs/{run_id}")
    assert status == 200, run
    assert run["status"] == summary["status"]
    assert run["endedAt"] == summary["timestamp"]
    return summary


def test_a_completed_run(serverless: ServerlessStack) -> None:
    stack = serverless
    stack.model.enqueue(
        reply_tool_use(
            [("wp_cli", {"command": "post list --post_status=draft --format=ids", "reason": "確認"})]
        ),
        reply_text("下書きは4件です。"),
    )
    run_id = start(stack, "下書きの投稿を一覧で見せて")
    stack.wait_for(SESSION, "Completed")
    summary = the_end(stack, run_id)
    assert (summary["status"], summary.get("error")) == ("completed", None)
    assert summary["instruction"] == "下書きの投稿を一覧で見せて"
    assert summary["answer"].startswith("下書きは4件です。")
    _, page = stack.api("GET", "/v1/sessions")
    assert [(s["sessionId"], s["status"]) for s in page["sessions"]] == [(SESSION, "Completed")]


@pytest.mark.slow
def test_an_ssh_failure(serverless: ServerlessStack) -> None:
    stack = serverless
    registry = TargetRegistry(TABLES["registry"])
    target = registry.get("site-a")
    assert target is not None
    with socket.socket() as probe:  # a port nothing listens on: connections are refused at once
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    registry.put(target.model_copy(update={"port": closed}), replace=True)
    stack.model.enqueue(reply_tool_use([("wp_cli", {"command": "post list --format=ids", "reason": "確認"})]))
    run_id = start(stack, "投稿を一覧にして")
    stack.wait_for(SESSION, "Failed", timeout=90)
    summary = the_end(stack, run_id)
    assert (summary["status"], summary["error"]) == ("failed", "SSH_CONNECTION_FAILED")


def test_the_iteration_cap(serverless: ServerlessStack) -> None:
    stack = serverless
    stack.model.enqueue(
        reply_tool_use([("wp_cli", {"command": "post list --format=ids", "reason": "確認"})]),
    )
    run_id = start(stack, "投稿を一覧にして", maxIterations=1)
    stack.wait_for(SESSION, "Failed")
    summary = the_end(stack, run_id)
    assert (summary["status"], summary["error"]) == ("failed", "MAX_ITERATIONS_EXCEEDED")


def test_a_function_error_caught_by_the_failure_path(
    serverless: ServerlessStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = serverless

    def broken(*_: Any) -> Any:
        raise RuntimeError("the turn function failed")

    monkeypatch.setattr(workflow_tasks, "run_turn", broken)
    run_id = start(stack, "投稿を一覧にして")
    stack.wait_for(SESSION, "Failed", timeout=90)
    summary = the_end(stack, run_id)
    assert (summary["status"], summary["error"]) == ("failed", "UNKNOWN_ERROR")
    assert "RuntimeError" not in summary["answer"]  # the error's name stays in the logs


def test_a_cancelled_run(serverless: ServerlessStack) -> None:
    stack = serverless
    stack.model.enqueue(reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "削除"})]))
    run_id = start(stack, "ID 45 を削除して")
    stack.wait_for(SESSION, "AwaitingApproval")
    assert stack.api("POST", f"/v1/sessions/{SESSION}/cancel")[0] == 200
    stack.wait_for(SESSION, "Cancelled")
    summary = the_end(stack, run_id)
    assert (summary["status"], summary["error"]) == ("cancelled", "CANCELLED")


def test_an_expired_approval(serverless: ServerlessStack, monkeypatch: pytest.MonkeyPatch) -> None:
    stack = serverless
    monkeypatch.setenv("WP_AGENT_STATE_MACHINE_ARN", stack.short_wait_machine_arn)
    stack.model.enqueue(reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "削除"})]))
    run_id = start(stack, "ID 45 を削除して")
    stack.wait_for(SESSION, "Failed", timeout=60)
    summary = the_end(stack, run_id)
    assert (summary["status"], summary["error"]) == ("expired", "APPROVAL_EXPIRED")


def test_a_turn_retried_after_the_run_ended_writes_no_second_record(
    serverless: ServerlessStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = serverless
    real = notifications.run_finished
    died: list[bool] = []

    def die_once(*args: Any) -> None:
        if not died:
            died.append(True)
            raise LambdaDiedError  # after the end was saved and delivered, before the turn answered
        real(*args)

    monkeypatch.setattr(notifications, "run_finished", die_once)
    stack.model.enqueue(reply_text("何もする必要はありません。"))
    run_id = start(stack, "こんにちは")
    stack.wait_for(SESSION, "Completed")
    stack.wait_for_execution(stack.execution(run_id)["executionArn"], timeout=90)  # its retry included
    stack.settle()
    assert died
    assert [name for name, _ in stack.dispatcher.calls].count("turn") >= 2
    assert len(summaries(stack, run_id)) == 1
