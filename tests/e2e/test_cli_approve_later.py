"""Approve later, on the real sandbox with the scripted model: a run held without a terminal is kept
under $HOME/.wp-agent/pending/, and `wp-agent approve <id> [--only N]` / `wp-agent reject <id>` resume
exactly that run (no new planning call), each command decided on its own and audited as such."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_server import RecordedRequest, ScriptedAnthropicServer, reply_text, reply_tool_use
from tests.fakes.cli import run_cli, sandbox_run_env
from wp_agent.sandbox import SandboxSite

DELETE_BOTH = reply_tool_use(
    [
        ("wp_cli", {"command": "post delete 45", "reason": "指示された下書きを削除"}),
        ("wp_cli", {"command": "post delete 46", "reason": "指示された下書きを削除"}),
    ]
)


def status_of(sandbox: SandboxSite, post_id: int) -> str:
    return sandbox.wp("post", "get", str(post_id), "--field=post_status").stdout.strip()


def audit(home: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (home / "audit.jsonl").read_text(encoding="utf-8").splitlines()]


def hold(server: ScriptedAnthropicServer, home: Path, sandbox: SandboxSite) -> str:
    done = run_cli(home, "ask", "ID 45 と 46 の下書きを削除して", **sandbox_run_env(server, home, sandbox))
    assert done.returncode == 3, done.stderr
    match = re.search(r"承認ID: (apr_[0-9a-f]{20})", done.stdout)
    assert match, done.stdout
    approval_id = match.group(1)
    assert "1. 投稿（ID: 45）をゴミ箱へ移動します" in done.stdout
    assert "2. 投稿（ID: 46）をゴミ箱へ移動します" in done.stdout
    assert "よろしいですか" not in done.stdout + done.stderr  # nobody here can answer
    assert f"wp-agent approve {approval_id}" in done.stderr
    assert f"wp-agent reject {approval_id}" in done.stderr
    assert (home / ".wp-agent" / "pending" / f"{approval_id}.json").exists()
    assert status_of(sandbox, 45) == status_of(sandbox, 46) == "draft"
    return approval_id


def results_sent(request: RecordedRequest) -> list[str]:
    blocks = request.json["messages"][-1]["content"]
    return [json.dumps(b["content"], ensure_ascii=False) for b in blocks if b.get("type") == "tool_result"]


def test_approve_only_one_of_two_resumes_the_run_without_replanning(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    scripted_anthropic.enqueue(DELETE_BOTH, reply_text("45 を削除し、46 は見送りました。"))
    approval_id = hold(scripted_anthropic, tmp_path, cli_sandbox)
    assert scripted_anthropic.request_count == 1

    done = run_cli(
        tmp_path,
        "approve",
        approval_id,
        "--only",
        "1",
        **sandbox_run_env(scripted_anthropic, tmp_path, cli_sandbox),
    )
    assert done.returncode == 7, done.stderr  # the run ended; one command was declined
    assert status_of(cli_sandbox, 45) == "trash"
    assert status_of(cli_sandbox, 46) == "draft"
    assert "✓ wp post delete 45" in done.stdout
    assert "－ wp post delete 46（見送り" in done.stdout
    assert "45 を削除し、46 は見送りました。" in done.stdout
    # one more model call: the continuation with both results, not a new plan
    assert scripted_anthropic.request_count == 2
    first, second = results_sent(scripted_anthropic.message_requests[1])
    assert "Success: Trashed post 45" in first
    assert "承認が得られなかった" in second
    scripted_anthropic.assert_script_consumed()
    assert not (tmp_path / ".wp-agent" / "pending" / f"{approval_id}.json").exists()
    decisions = [
        (e["type"], e["command"], e.get("approver"))
        for e in audit(tmp_path)
        if e["type"].startswith("approval_")
    ]
    assert ("approval_approved", "post delete 45", "cli:local-user") in decisions
    assert ("approval_rejected", "post delete 46", "cli:local-user") in decisions

    # the run as history tells it: one run, its instruction and answer, each command's decision
    listed = run_cli(
        tmp_path, "history", "--json", **sandbox_run_env(scripted_anthropic, tmp_path, cli_sandbox)
    )
    [run] = json.loads(listed.stdout)
    assert run["instruction"] == "ID 45 と 46 の下書きを削除して"
    assert run["answer"].startswith("45 を削除し、46 は見送りました。")
    assert run["status"] == "declined"  # one of its commands was declined: 見送りあり
    commands = {c["command"]: c for c in run["commands"]}
    assert commands["post delete 45"]["decision"] == "destructive"
    assert commands["post delete 45"]["approver"] == "cli:local-user"
    assert commands["post delete 45"]["outcome"] == "succeeded"
    assert (commands["post delete 46"]["outcome"], commands["post delete 46"]["outcomeJa"]) == (
        "rejected",
        "見送り（拒否）",
    )
    shown = run_cli(
        tmp_path, "show", run["runId"], **sandbox_run_env(scripted_anthropic, tmp_path, cli_sandbox)
    )
    assert shown.returncode == 0
    assert "指示: ID 45 と 46 の下書きを削除して" in shown.stdout
    assert "wp post delete 46\t要承認\tcli:local-user\t見送り（拒否）" in shown.stdout

    again = run_cli(
        tmp_path, "approve", approval_id, **sandbox_run_env(scripted_anthropic, tmp_path, cli_sandbox)
    )
    assert again.returncode == 2
    assert "APPROVAL_ALREADY_DECIDED" in again.stderr
    assert f"承認ID {approval_id} はすでに決定済みです（承認済み・拒否済み:" in again.stderr
    assert f"show {run['runId']}" in again.stderr
    assert scripted_anthropic.request_count == 2  # nothing ran again


def test_reject_runs_nothing_and_tells_the_model(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    scripted_anthropic.enqueue(DELETE_BOTH, reply_text("削除は取りやめました。"))
    approval_id = hold(scripted_anthropic, tmp_path, cli_sandbox)
    env = sandbox_run_env(scripted_anthropic, tmp_path, cli_sandbox)
    done = run_cli(tmp_path, "reject", approval_id, "--json", "--comment", "やはり残す", **env)
    assert done.returncode == 7, done.stderr
    output = json.loads(done.stdout)
    assert output["success"] is True  # the spec's field, kept
    assert output["runStatus"] == "declined"  # the run-status vocabulary the API and events use too
    assert output["response"].startswith("削除は取りやめました。")
    assert status_of(cli_sandbox, 45) == status_of(cli_sandbox, 46) == "draft"
    assert all("拒否しました" in r for r in results_sent(scripted_anthropic.message_requests[1]))
    assert "やはり残す" in results_sent(scripted_anthropic.message_requests[1])[0]


def test_a_hold_after_a_change_of_the_same_reply_says_what_already_changed(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    """The reply's write ran before its delete was held: the hint must not say nothing changed."""
    title = cli_sandbox.wp("post", "get", "1", "--field=post_title").stdout.strip()
    scripted_anthropic.enqueue(
        reply_tool_use(
            [
                ("wp_cli", {"command": "post update 1 --post_title=先に変えた題名", "reason": "題名の変更"}),
                ("wp_cli", {"command": "post delete 45", "reason": "下書きの削除"}),
            ]
        )
    )
    env = sandbox_run_env(scripted_anthropic, tmp_path, cli_sandbox)
    try:
        done = run_cli(tmp_path, "ask", "ID 1 の題名を変えて ID 45 を削除して", **env)
        assert done.returncode == 3, done.stderr
        assert cli_sandbox.wp("post", "get", "1", "--field=post_title").stdout.strip() == "先に変えた題名"
        assert "何も変更していません" not in done.stdout + done.stderr
        assert "承認待ちの操作はまだ実行していません" in done.stderr
        assert "この実行ですでに実行した変更: wp post update 1 --post_title=先に変えた題名" in done.stderr
        assert status_of(cli_sandbox, 45) == "draft"
    finally:
        cli_sandbox.wp("post", "update", "1", f"--post_title={title}")


def test_a_hold_before_any_change_says_nothing_changed(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    scripted_anthropic.enqueue(DELETE_BOTH)
    done = run_cli(
        tmp_path,
        "ask",
        "ID 45 と 46 の下書きを削除して",
        **sandbox_run_env(scripted_anthropic, tmp_path, cli_sandbox),
    )
    assert done.returncode == 3, done.stderr
    assert "承認するまで何も変更していません" in done.stderr


def test_approve_refuses_bad_selections_and_other_targets(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    scripted_anthropic.enqueue(DELETE_BOTH)
    approval_id = hold(scripted_anthropic, tmp_path, cli_sandbox)
    env = sandbox_run_env(scripted_anthropic, tmp_path, cli_sandbox)
    bad = run_cli(tmp_path, "approve", approval_id, "--only", "3", **env)
    assert bad.returncode == 2
    assert "--only には 1〜2 の番号" in bad.stderr
    other = run_cli(
        tmp_path, "approve", approval_id, **{**env, "WP_AGENT_SANDBOX_SITE": str(tmp_path / "other")}
    )
    assert other.returncode == 5
    assert "再開できません" in other.stderr
    stranger = run_cli(tmp_path, "approve", approval_id, "--user", "someone-else", **env)
    assert stranger.returncode == 2
    assert "依頼者（local-user）だけ" in stranger.stderr
    assert (
        "../" not in run_cli(tmp_path, "approve", "../../etc/passwd", **env).stderr.split("保留中:")[0][-5:]
    )
    assert status_of(cli_sandbox, 45) == "draft"
    assert scripted_anthropic.request_count == 1


def test_the_held_argv_is_checked_by_the_policy_again_when_approved(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    scripted_anthropic.enqueue(DELETE_BOTH, reply_text("削除できませんでした。"))
    approval_id = hold(scripted_anthropic, tmp_path, cli_sandbox)
    # The operator forbids deleting posts after the run was held: the approval cannot override that.
    rules = json.dumps(
        {"deny": [{"command": "post delete", "reason": "投稿の削除は禁止されました"}]}, ensure_ascii=False
    )
    env = {**sandbox_run_env(scripted_anthropic, tmp_path, cli_sandbox), "WP_AGENT_POLICY_RULES": rules}
    done = run_cli(tmp_path, "approve", approval_id, "--json", **env)
    assert status_of(cli_sandbox, 45) == status_of(cli_sandbox, 46) == "draft"
    assert all(
        "投稿の削除は禁止されました" in r for r in results_sent(scripted_anthropic.message_requests[1])
    ), done.stdout
    assert done.returncode in (0, 1), done.stderr


def _expire(pending_file: Path) -> None:
    """The held run's approval deadline moved into the past (as if nobody answered in time)."""

    def past(node: Any) -> int:
        changed = 0
        if isinstance(node, dict):
            for key in node:
                if key in ("expires_at", "expiresAt") and isinstance(node[key], str):
                    node[key] = "2020-01-01T00:00:00Z"
                    changed += 1
                else:
                    changed += past(node[key])
        elif isinstance(node, list):
            changed += sum(past(item) for item in node)
        return changed

    document = json.loads(pending_file.read_text(encoding="utf-8"))
    assert past(document)
    pending_file.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")


def test_an_expired_approval_says_so_and_is_not_waiting_for_you(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    scripted_anthropic.enqueue(DELETE_BOTH)
    approval_id = hold(scripted_anthropic, tmp_path, cli_sandbox)
    _expire(tmp_path / ".wp-agent" / "pending" / f"{approval_id}.json")

    done = run_cli(
        tmp_path,
        "approve",
        approval_id,
        "--json",
        **sandbox_run_env(scripted_anthropic, tmp_path, cli_sandbox),
    )
    # Not exit 3 (CONFIRMATION_REQUIRED, "waiting for you"): the run ended, expired, nothing ran.
    assert done.returncode == 1, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    assert (answer["error"]["code"], answer["runStatus"]) == ("APPROVAL_EXPIRED", "expired")
    assert "期限が切れた" in answer["error"]["message"]
    assert status_of(cli_sandbox, 45) == status_of(cli_sandbox, 46) == "draft"
    assert scripted_anthropic.request_count == 1  # no model call for an expired run
    assert [r["status"] for r in audit(tmp_path) if r["type"] == "run_summary"][-1] == "expired"
