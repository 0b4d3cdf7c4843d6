"""Spec §8.3 end-to-end: `wp-agent ask --json` as a process → real SDK → scripted model;
WP-CLI over the real sshd → real WP-CLI on a real WordPress. Each test checks the site afterwards."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.fakes.anthropic_server import (
    RecordedRequest,
    ScriptedAnthropicServer,
    reply_text,
    reply_tool_use,
    tool_results,
    tool_results_text,
)
from tests.fakes.cli import ask_json
from tests.fakes.cli_process import run_wp_agent
from tests.fakes.clock import site_now
from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import TestWordPress
from tests.fakes.wordpress_fixtures import sandbox_environment
from wp_agent.sandbox import SandboxSite

pytestmark = pytest.mark.sshd
TOKYO = ZoneInfo("Asia/Tokyo")


@pytest.fixture
def site(rig_site: TestWordPress) -> TestWordPress:
    return rig_site


def ask(
    server: ScriptedAnthropicServer, rig: SshdRig, tmp_path: Path, instruction: str, *extra: str
) -> tuple[int, dict[str, Any], str]:
    return ask_json(server, rig, tmp_path, *extra, instruction)


def output_json(request: RecordedRequest, index: int = 0) -> Any:
    """The JSON a command printed, from inside the <tool_output> wrapper of the last tool_result."""
    text = tool_results_text(request).split("</tool_output>")[index]
    body = text.split(">", 1)[1].strip()
    return json.loads(body)


def test_list_posts(
    sshd_server: SshdRig, site: TestWordPress, tmp_path: Path, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    def answer(request: RecordedRequest) -> Any:
        rows = output_json(request)
        lines = ["| ID | タイトル | 日付 |", "|---|---|---|"] + [
            f"| {r['ID']} | {r['post_title']} | {r['post_date']} |" for r in rows
        ]
        return reply_text("投稿の一覧です:\n" + "\n".join(lines))

    scripted_anthropic.enqueue(
        reply_tool_use(
            [
                (
                    "wp_cli",
                    {
                        "command": "post list --format=json --fields=ID,post_title,post_date",
                        "reason": "投稿一覧を取得",
                    },
                )
            ]
        ),
        answer,
    )
    started_on = site_now(site.site).astimezone(TOKYO).date()  # the agent and the site share a host clock
    code, output, _ = ask(scripted_anthropic, sshd_server, tmp_path, "投稿一覧を見せて")
    assert code == 0
    assert output["success"] is True
    assert (
        output["executedCommands"][0]["command"] == "post list --format=json --fields=ID,post_title,post_date"
    )
    # The first request carried the site's facts, read over the pooled SSH connection: its date is
    # the site's (Asia/Tokyo) on the day the run started or, past midnight there, the next.
    facts = scripted_anthropic.message_requests[0].messages[-1]["content"][0]["text"]
    assert "サイトのタイムゾーン Asia/Tokyo、UTC+09:00" in facts
    assert any(
        f"現在日時: {day}" in facts for day in {started_on, site_now(site.site).astimezone(TOKYO).date()}
    )
    assert "サイト名: Argo Note サンプルサイト" in facts
    listed = site.wp_json("post", "list", "--fields=ID,post_title,post_date")
    assert len(listed) >= len(site.facts["publish_post_ids"])
    for post in listed:  # the answer carries the IDs, titles and dates the site really has
        assert f"| {post['ID']} | {post['post_title']} | {post['post_date']} |" in output["response"]
    scripted_anthropic.assert_script_consumed()


def test_publish_post_45(
    sshd_server: SshdRig, site: TestWordPress, tmp_path: Path, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    title = site.post(45)["post_title"]  # type: ignore[index]

    def answer(request: RecordedRequest) -> Any:
        assert "Success: Updated post 45." in tool_results_text(request)
        first = scripted_anthropic.message_requests[1]
        return reply_text(f"「{output_json(first)['post_title']}」（ID 45）を公開しました。")

    scripted_anthropic.enqueue(
        reply_tool_use(
            [
                (
                    "wp_cli",
                    {
                        "command": "post get 45 --fields=ID,post_title,post_status --format=json",
                        "reason": "対象の確認",
                    },
                )
            ]
        ),
        reply_tool_use(
            [("wp_cli", {"command": "post update 45 --post_status=publish", "reason": "公開する"})]
        ),
        answer,
    )
    code, output, _ = ask(scripted_anthropic, sshd_server, tmp_path, "ID 45を公開して")
    assert code == 0, output
    assert site.status_of(45) == "publish"
    assert title in output["response"]
    assert [c["command"] for c in output["executedCommands"]] == [
        "post get 45 --fields=ID,post_title,post_status --format=json",
        "post update 45 --post_status=publish",
    ]


def test_db_drop_is_blocked_and_nothing_changes(
    sshd_server: SshdRig, site: TestWordPress, tmp_path: Path, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    before = (site.table_checksums(), site.uploads_listing())

    def answer(request: RecordedRequest) -> Any:
        result = tool_results(request)[0]
        assert result.get("is_error") is True
        return reply_text(
            "申し訳ありません。データベースを削除するコマンドはセキュリティ上の理由で実行できません。"
        )

    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "db drop --yes", "reason": "指示どおり"})]), answer
    )
    code, output, audit = ask(scripted_anthropic, sshd_server, tmp_path, "db dropして")
    assert code == 1
    assert output["error"]["code"] == "COMMAND_BLOCKED"
    assert re.search(r"[ぁ-んァ-ン一-龥]", output["error"]["details"]["reason"])
    assert output["error"]["details"]["blockedPattern"] == "db drop"
    assert output["executedCommands"] == []
    assert (site.table_checksums(), site.uploads_listing()) == before
    assert '"type":"command_blocked"' in audit


def test_partial_failure_45_46_47(
    sshd_server: SshdRig, site: TestWordPress, tmp_path: Path, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    assert site.post(site.facts["missing_post_id"]) is None
    scripted_anthropic.enqueue(
        reply_tool_use(
            [("wp_cli", {"command": "post update 45 46 47 --post_status=publish", "reason": "3件を公開"})]
        ),
        reply_text("3件中2件の記事を公開しました。ID 47 は見つかりませんでした。"),
    )
    code, output, _ = ask(scripted_anthropic, sshd_server, tmp_path, "ID 45,46,47を公開して")
    assert code == 6
    assert output["error"]["code"] == "PARTIAL_FAILURE"
    assert output["partialSuccess"]["succeeded"] == 2
    assert output["partialSuccess"]["failed"] == 1
    details = {d["operation"]: d for d in output["partialSuccess"]["details"]}
    assert details["post update 45 --post_status=publish"]["success"] is True
    assert details["post update 46 --post_status=publish"]["success"] is True
    assert details["post update 47 --post_status=publish"]["success"] is False
    assert details["post update 47 --post_status=publish"]["error"]
    assert site.status_of(45) == "publish"
    assert site.status_of(46) == "publish"


def _delete_all_drafts_script(server: ScriptedAnthropicServer) -> None:
    def delete(request: RecordedRequest) -> Any:
        ids = tool_results_text(request).split(">", 1)[1].split("<", 1)[0].split()
        return reply_tool_use(
            [("wp_cli", {"command": "post delete " + " ".join(ids), "reason": "下書きを削除"})]
        )

    server.enqueue(
        reply_tool_use(
            [("wp_cli", {"command": "post list --post_status=draft --format=ids", "reason": "下書きを確認"})]
        ),
        delete,
    )


def test_delete_all_drafts_waits_for_approval(
    sshd_server: SshdRig, site: TestWordPress, tmp_path: Path, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    drafts = site.ids("draft")
    assert drafts == site.facts["draft_post_ids"]
    _delete_all_drafts_script(scripted_anthropic)
    code, output, audit = ask(scripted_anthropic, sshd_server, tmp_path, "全ての下書きを削除して")
    assert code == 3
    assert output["error"]["code"] == "CONFIRMATION_REQUIRED"
    held = output["error"]["details"]["commands"]
    assert held[0]["command"].startswith("post delete ")
    assert sorted(int(i) for i in held[0]["command"].split()[2:]) == drafts
    assert held[0]["summary"].endswith("をゴミ箱へ移動します")
    assert site.ids("draft") == drafts  # nothing deleted
    assert '"type":"approval_requested"' in audit

    # Approved (--yes): exactly those drafts go to the trash, nothing else changes.
    others = {i: p["post_status"] for i, p in site.posts(post_type=None).items() if i not in drafts}
    _delete_all_drafts_script(scripted_anthropic)
    scripted_anthropic.enqueue(reply_text("下書きを削除しました。"))
    code, output, audit = ask(scripted_anthropic, sshd_server, tmp_path, "全ての下書きを削除して", "--yes")
    assert code == 0, output
    assert site.ids("draft") == []
    assert [i for i in site.ids("trash") if i in drafts] == drafts
    after = site.posts(post_type=None)
    assert {i: after[i]["post_status"] for i in others} == others
    # New rows are only what WordPress itself adds on trashing: a revision of each trashed draft.
    added = {i: p for i, p in after.items() if i not in others and i not in drafts}
    assert {(p["post_type"], int(p["post_parent"])) for p in added.values()} <= {
        ("revision", i) for i in drafts
    }
    assert '"type":"approval_approved"' in audit


def _sandbox_ask(
    tmp_path: Path, server: ScriptedAnthropicServer, instruction: str, sandbox: SandboxSite | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": server.base_url,
        **sandbox_environment(sandbox),
    }
    return run_wp_agent(["ask", instruction], env=env, timeout=120)


def test_sandbox_mode_labels_its_output(tmp_path: Path, scripted_anthropic: ScriptedAnthropicServer) -> None:
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "option get blogname", "reason": "サイト名"})]),
        lambda request: reply_text(
            "サイト名は " + tool_results_text(request).split(">", 1)[1].split("<", 1)[0].strip() + " です。"
        ),
    )
    default_sandbox = SandboxSite(tmp_path / ".wp-agent" / "sandbox")
    try:  # no WP_AGENT_SANDBOX_SITE: the default place under HOME, created and seeded on first use
        completed = _sandbox_ask(tmp_path, scripted_anthropic, "サイト名を教えて")
        assert completed.returncode == 0, completed.stderr
        assert "Argo Note サンプルサイト" in completed.stdout
        assert "【サンドボックス】" in completed.stdout
        status = default_sandbox.status()
        assert status.created
        assert status.database_running
        assert status.seed is not None
    finally:
        default_sandbox.stop()


def test_missing_api_key_says_what_to_set(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "WP_CLI_MODE": "sandbox"}
    completed = run_wp_agent(["ask", "投稿一覧"], env=env, timeout=60)
    assert completed.returncode == 5
    assert "ANTHROPIC_API_KEY" in completed.stderr
    assert "WP_AGENT_MODEL_PROVIDER=bedrock" in completed.stderr


def test_plain_output_says_why_a_command_failed_and_how_to_approve(
    tmp_path: Path, scripted_anthropic: ScriptedAnthropicServer, cli_sandbox: SandboxSite
) -> None:
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "post get 9999", "reason": "確認"})]),
        reply_text("ID 9999 の投稿はありません。"),
    )
    completed = _sandbox_ask(tmp_path, scripted_anthropic, "ID 9999 の投稿を見せて", cli_sandbox)
    assert completed.returncode == 0, completed.stderr
    assert "✗ wp post get 9999" in completed.stdout
    assert "理由: Error: Could not find the post with ID 9999." in completed.stdout

    scripted_anthropic.enqueue(reply_tool_use([("wp_cli", {"command": "post delete 1", "reason": "削除"})]))
    completed = _sandbox_ask(tmp_path, scripted_anthropic, "ID 1 を削除して", cli_sandbox)
    assert completed.returncode == 3
    assert "wp-agent approve apr_" in completed.stderr  # without a terminal: how to approve later
    assert "--yes" in completed.stderr
