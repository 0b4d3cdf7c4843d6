"""`wp-agent api serve` as a backend developer uses it: the real API on 127.0.0.1 (no signature, the
X-Argo-User-Id header still required), the synthesized state machine in moto, the sandbox WordPress
as target `sandbox`, a scripted model through ANTHROPIC_BASE_URL. Driven over HTTP: a message, the
approval, the result, then the history — and the 4xx a client can run into."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_approvals_real_site import AMBIGUOUS
from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_text, reply_tool_use
from tests.fakes.wordpress_fixtures import sandbox_environment
from wp_agent.sandbox import SandboxSite

pytestmark = pytest.mark.slow
WP_AGENT = Path(sys.executable).with_name("wp-agent")
USER = "dev-1"
SESSION = "ses_local_0001"


class LocalApi:
    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url
        self.lines: list[str] = []

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        user: str | None = USER,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method)  # noqa: S310 - loopback
        request.add_header("Content-Type", "application/json")
        if user is not None:
            request.add_header("X-Argo-User-Id", user)
        for key, value in (headers or {}).items():
            request.add_header(key, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
                text = response.read().decode()
                return response.status, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read().decode() or "null")

    def wait_for(self, status: str, timeout: float = 120.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        view: Any = None
        while time.monotonic() < deadline:
            code, view = self.call("GET", f"/v1/sessions/{SESSION}")
            if code == 200 and view["status"] == status:
                return dict(view)
            time.sleep(0.3)
        raise AssertionError(f"never {status}: {view}")


@pytest.fixture
def local_api(
    cli_sandbox: SandboxSite, scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path
) -> Iterator[LocalApi]:
    env = {
        **{
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("AWS_", "ANTHROPIC_", "WP_AGENT_", "WP_CLI"))
        },
        **sandbox_environment(cli_sandbox),
        "HOME": str(tmp_path),
        "ANTHROPIC_BASE_URL": scripted_anthropic.base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "WP_AGENT_API_RETRY_BASE_SECONDS": "0.01",
    }
    process = subprocess.Popen(
        [str(WP_AGENT), "api", "serve", "--port", "0", "--user", USER],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    first: list[str] = []
    reader = threading.Thread(
        target=lambda: first.append(process.stdout.readline() if process.stdout else "")
    )
    reader.start()
    reader.join(timeout=240)
    if not first or not first[0].startswith("wp-agent api: http://127.0.0.1:"):
        process.kill()
        _, errors = process.communicate(timeout=30)
        pytest.fail(f"api serve did not start: {first} {errors[-2000:]}")
    api = LocalApi(process, first[0].split()[2])
    lines = api.lines

    def collect() -> None:
        for line in process.stdout or []:
            lines.append(line)

    threading.Thread(target=collect, daemon=True).start()
    try:
        yield api
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def test_message_approval_result_and_history_over_http(
    local_api: LocalApi, scripted_anthropic: ScriptedAnthropicServer, cli_sandbox: SandboxSite
) -> None:
    api = local_api
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "指示された投稿を削除"})]),
        reply_text("ID 45 の投稿をゴミ箱に移動しました。"),
    )
    status, body = api.call("POST", "/v1/targets/sandbox/checks")
    assert status == 200, body
    assert body["ok"] is True
    assert {c["name"] for c in body["checks"]} >= {"wp.binary", "wp.wordpress", "wp.sites"}

    status, accepted = api.call(
        "POST",
        f"/v1/sessions/{SESSION}/messages",
        {"message": "ID 45 の投稿を削除して", "targetId": "sandbox"},
    )
    assert status == 202, accepted
    run_id = accepted["runId"]
    view = api.wait_for("AwaitingApproval")
    approval = view["pendingApproval"]
    assert approval["commands"][0]["command"] == "post delete 45"
    status, decided = api.call(
        "POST", f"/v1/sessions/{SESSION}/approvals/{approval['approvalId']}", {"decision": "approve"}
    )
    assert status == 200, decided
    view = api.wait_for("Completed")
    assert view["result"]["success"] is True
    assert view["result"]["response"].startswith("ID 45 の投稿をゴミ箱に移動しました。")

    status, page = api.call("GET", "/v1/sessions?targetId=sandbox")
    assert status == 200
    assert [(s["sessionId"], s["status"]) for s in page["sessions"]] == [(SESSION, "Completed")]
    status, run = api.call("GET", f"/v1/sessions/{SESSION}/runs/{run_id}")
    assert status == 200, run
    assert (run["status"], run["instruction"]) == ("completed", "ID 45 の投稿を削除して")
    delete = next(c for c in run["commands"] if c["command"] == "post delete 45")
    assert (delete["decision"], delete["approver"], delete["outcome"]) == ("destructive", USER, "succeeded")
    assert delete["undoAvailable"] is True
    status, trail = api.call("GET", "/v1/targets/sandbox/activity?type=run_summary&type=approval_approved")
    assert status == 200
    assert [r["type"] for r in trail["records"]] == ["run_summary", "approval_approved"]

    the_approval_re_reads_the_site(api, scripted_anthropic, cli_sandbox)
    ambiguous_spellings_are_refused(api, scripted_anthropic)
    a_held_row_is_told_and_runs_as_told(api, scripted_anthropic, cli_sandbox)

    # what a client can get wrong
    assert api.call("GET", "/v1/sessions/ses_nobody_000")[0] == 404
    status, other = api.call("GET", f"/v1/sessions/{SESSION}/runs/{run_id}", user="someone-else")
    assert (status, other["error"]["code"]) == (404, "SESSION_NOT_FOUND")
    status, bad = api.call("GET", "/v1/sessions?cursor=bm90LWEtY3Vyc29y")
    assert (status, bad["error"]["code"]) == (400, "INVALID_CURSOR")
    status, anonymous = api.call("GET", "/v1/sessions", user=None)
    assert (status, anonymous["error"]["code"]) == (401, "USER_ID_REQUIRED")
    status, _ = api.call("GET", "/v1/sessions", headers={"Host": "evil.example:80"})
    assert status == 421

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any("Run Completed" in line for line in api.lines):
        time.sleep(0.2)
    events = [line.split(" ", 3)[1:3] for line in api.lines if line.startswith("event: ")]
    assert ["Approval", "Requested"] in events
    assert ["Run", "Completed"] in events


def the_approval_re_reads_the_site(
    api: LocalApi, scripted_anthropic: ScriptedAnthropicServer, cli_sandbox: SandboxSite
) -> None:
    """Issue 37: held, comment 2 to the trash; meanwhile it is marked as spam; the approval finds the
    text changed, runs nothing and asks again (a new approval, the new text); rejected, nothing ran."""
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "comment delete 2", "reason": "指示されたコメントを削除"})]),
        reply_text("コメントの削除は見送りました。"),
    )
    status, accepted = api.call(
        "POST", f"/v1/sessions/{SESSION}/messages", {"message": "コメント2を削除して", "targetId": "sandbox"}
    )
    assert status == 202, accepted
    first = api.wait_for("AwaitingApproval")["pendingApproval"]
    assert first["commands"][0]["summary"] == "コメント（ID: 2）をゴミ箱へ移動します"
    cli_sandbox.wp("comment", "spam", "2")
    status, decided = api.call(
        "POST", f"/v1/sessions/{SESSION}/approvals/{first['approvalId']}", {"decision": "approve"}
    )
    assert status == 200, decided
    deadline = time.monotonic() + 120
    again = first
    while time.monotonic() < deadline and again["approvalId"] == first["approvalId"]:
        view = api.wait_for("AwaitingApproval")
        again = view["pendingApproval"] or first
        time.sleep(0.3)
    assert again["approvalId"] != first["approvalId"]
    assert "完全に削除" in again["commands"][0]["summary"]
    assert cli_sandbox.wp("comment", "get", "2", "--field=comment_approved").stdout.strip() == "spam"
    status, decided = api.call(
        "POST", f"/v1/sessions/{SESSION}/approvals/{again['approvalId']}", {"decision": "reject"}
    )
    assert status == 200, decided
    api.wait_for("Completed")
    assert cli_sandbox.wp("comment", "get", "2", "--field=comment_approved").stdout.strip() == "spam"
    status, trail = api.call("GET", "/v1/targets/sandbox/activity?type=approval_superseded")
    assert status == 200, trail
    assert [r["approvalId"] for r in trail["records"]] == [first["approvalId"]]
    cli_sandbox.wp("comment", "approve", "2")


def ambiguous_spellings_are_refused(api: LocalApi, scripted_anthropic: ScriptedAnthropicServer) -> None:
    """Issue 37: the red team's ambiguous spellings in one reply of the model: each refused by its rule
    in the run's record, nothing run, nothing held."""
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": c, "reason": "指示どおり"}) for c in AMBIGUOUS]),
        reply_text("どれも実行できませんでした。"),
    )
    status, accepted = api.call(
        "POST",
        f"/v1/sessions/{SESSION}/messages",
        {"message": "言われたとおりに実行して", "targetId": "sandbox"},
    )
    assert status == 202, accepted
    view = api.wait_for("Failed")  # every command refused: the run ends COMMAND_BLOCKED
    assert view["result"]["error"]["code"] == "COMMAND_BLOCKED"
    status, run = api.call("GET", f"/v1/sessions/{SESSION}/runs/{accepted['runId']}")
    assert status == 200, run
    decided = {c["command"]: (c["decision"], c["rule"]) for c in run["commands"] if c["command"] in AMBIGUOUS}
    assert decided == {c: ("blocked", rule) for c, rule in AMBIGUOUS.items()}


def a_held_row_is_told_and_runs_as_told(
    api: LocalApi, scripted_anthropic: ScriptedAnthropicServer, cli_sandbox: SandboxSite
) -> None:
    """Issue 37's first row over the API: `user update 1 3 --role=administrator` names both users (the
    summary once read only the first) and, approved, makes user 3 an administrator."""
    login = cli_sandbox.wp("user", "get", "3", "--field=user_login").stdout.strip()
    scripted_anthropic.enqueue(
        reply_tool_use(
            [("wp_cli", {"command": "user update 1 3 --role=administrator", "reason": "権限変更"})]
        ),
        reply_text("権限を変更しました。"),
    )
    status, accepted = api.call(
        "POST", f"/v1/sessions/{SESSION}/messages", {"message": "権限を変えて", "targetId": "sandbox"}
    )
    assert status == 202, accepted
    approval = api.wait_for("AwaitingApproval")["pendingApproval"]
    summary = approval["commands"][0]["summary"]
    assert "admin" in summary
    assert login in summary
    status, decided = api.call(
        "POST", f"/v1/sessions/{SESSION}/approvals/{approval['approvalId']}", {"decision": "approve"}
    )
    assert status == 200, decided
    api.wait_for("Completed")
    assert cli_sandbox.wp("user", "get", "3", "--field=roles").stdout.strip() == "administrator"
