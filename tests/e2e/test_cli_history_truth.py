"""`wp-agent history` tells what happened, on the real sandbox with the scripted model: each kind of
run is driven as a person would (completed, a failed `--yes` delete, a partial failure, a refusal
while the rest ran, Ctrl-C, a held run, an undo, an MCP call) and `history --json` / `show` are read
back. An `undo --dry-run` is not a run. Undo says one thing everywhere: a force-deleted post is
「元に戻せません」 in the approval, `undoAvailable`, the hint after the run and `undo` itself, which
re-creates it and says it put back only part; a second undo and an undo of a read-only run run nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import Implementation

from tests.fakes.anthropic_server import ScriptedAnthropicServer, delay, reply_text, reply_tool_use
from tests.fakes.cli import run_cli, sandbox_run_env
from wp_agent.sandbox import SandboxSite

pytestmark = pytest.mark.timeout(420)


def tools(*commands: str) -> Any:
    return reply_tool_use([("wp_cli", {"command": c, "reason": "指示どおり"}) for c in commands])


class Person:
    """`wp-agent …` as processes under one HOME, on one sandbox, with one scripted model."""

    def __init__(self, server: ScriptedAnthropicServer, home: Path, sandbox: SandboxSite) -> None:
        self.server, self.home, self.env = server, home, sandbox_run_env(server, home, sandbox)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(self.home, *args, **self.env)

    def ask(self, instruction: str, *replies: Any, flags: tuple[str, ...] = ()) -> tuple[int, str]:
        self.server.enqueue(*replies)
        done = self.cli("ask", "--json", *flags, instruction)
        return done.returncode, json.loads(done.stdout)["runId"]

    def interrupted_ask(self, instruction: str) -> int:
        """Ctrl-C (SIGINT) while the model is thinking."""
        before = self.server.request_count
        self.server.enqueue(delay(60))
        env = {"PATH": os.environ["PATH"], "HOME": str(self.home), **self.env}
        process = subprocess.Popen(
            [sys.executable, "-m", "wp_agent.cli.main", "ask", instruction], env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while self.server.request_count == before and time.monotonic() < deadline:
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
        return process.returncode

    def mcp_calls(self) -> None:
        """One MCP connection: a read that runs and a delete held for the person."""

        async def session() -> None:
            params = StdioServerParameters(
                command=sys.executable, args=["-m", "wp_agent.cli.main", "mcp"],
                env={"PATH": os.environ["PATH"], "HOME": str(self.home), **self.env},
            )  # fmt: skip
            with anyio.fail_after(120):
                async with (
                    stdio_client(params) as (read, write),
                    ClientSession(
                        read, write, client_info=Implementation(name="walk", version="1")
                    ) as client,
                ):
                    await client.initialize()
                    await client.call_tool("wp_cli", {"command": "option get blogname", "reason": "サイト名"})
                    await client.call_tool("wp_cli", {"command": "post delete 46", "reason": "不要な下書き"})

        anyio.run(session)

    def history(self) -> dict[str, dict[str, Any]]:
        listed = self.cli("history", "--json", "-n", "100")
        assert listed.returncode == 0, listed.stderr
        return {run["runId"]: run for run in json.loads(listed.stdout)}


@pytest.mark.slow
def test_history_tells_each_kind_of_run_as_it_happened(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    me = Person(scripted_anthropic, tmp_path, cli_sandbox)
    code, completed = me.ask(
        "下書きを見せて", tools("post list --post_status=draft --format=ids"), reply_text("2件です。")
    )
    assert code == 0
    code, failed = me.ask(
        "投稿9999を完全に削除して", tools("post delete 9999 --force"), reply_text("削除できませんでした。"),
        flags=("--yes",),
    )  # fmt: skip
    assert code == 1
    code, partial = me.ask(
        # 47 was deleted (below the site's newest post, so it stays missing): its update fails
        "題を変えて", tools("post update 45 --post_title=新しい題", "post update 47 --post_title=x"),
        reply_text("一部だけ変えました。"),
    )  # fmt: skip
    assert code == 6
    code, declined = me.ask(
        "DBを消して一覧を出して",
        tools("db drop --yes", "post list --format=ids"),
        reply_text("一覧だけ出しました。"),
    )
    assert code == 0
    assert me.interrupted_ask("一覧して") == 130
    code, held = me.ask("ID 46 を削除して", tools("post delete 46"))
    assert code == 3

    # undo: a dry run first (not a run), the undo, then again (already undone: nothing runs)
    dry = me.cli("undo", partial, "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["dryRun"] is True
    dry_run_id = json.loads(dry.stdout)["runId"]
    undone = me.cli("undo", partial, "--yes", "--json")
    assert undone.returncode == 0, undone.stderr
    undo_run = json.loads(undone.stdout)["runId"]
    assert (
        cli_sandbox.wp("post", "get", "45", "--field=post_title").stdout.strip()
        == "AIで変わるコンテンツ制作の未来"
    )
    again = me.cli("undo", partial, "--yes")
    assert again.returncode == 0
    assert f"すでに取り消しました（取り消しの実行ID: {undo_run}）" in again.stdout
    nothing = me.cli("undo", completed, "--json")  # read-only: nothing to undo, exit 0 as the help says
    assert nothing.returncode == 0, nothing.stderr
    assert json.loads(nothing.stdout) == {
        "success": True, "revertsRunId": completed, "nothingToUndo": "no_changes", "undoneBy": None,
    }  # fmt: skip
    me.mcp_calls()
    _the_history_says_what_happened(me, completed, failed, partial, declined, held, undo_run, dry_run_id)


def _the_history_says_what_happened(
    me: Person,
    completed: str,
    failed: str,
    partial: str,
    declined: str,
    held: str,
    undo_run: str,
    dry_run_id: str,
) -> None:
    runs = me.history()
    assert dry_run_id not in runs  # dry runs are not runs
    statuses = {run_id: (runs[run_id]["status"], runs[run_id]["errorCode"]) for run_id in runs}
    assert statuses[completed] == ("completed", None)
    assert statuses[failed] == ("failed", "UNKNOWN_ERROR")
    assert statuses[partial] == ("partial_failure", None)
    assert statuses[declined] == ("declined", None)
    assert statuses[held] == ("awaiting_approval", None)
    assert statuses[undo_run] == ("undo", None)
    assert runs[undo_run]["revertsRunId"] == partial
    # The undone run keeps how it ended, and says it was put back (and by which run).
    assert (runs[partial]["undoneBy"], runs[partial]["runStatus"]) == (undo_run, "undone")
    assert (runs[completed]["undoneBy"], runs[completed]["runStatus"]) == (None, "completed")
    assert runs[declined]["runStatus"] == "declined"
    assert runs[undo_run]["instruction"] == f"{partial} を元に戻す"
    [cancelled] = [r for r in runs.values() if r["instruction"] == "一覧して"]
    assert (cancelled["status"], cancelled["errorCode"]) == ("cancelled", None)
    mcp = [r for r in runs.values() if r["channel"] == "mcp:walk"]
    assert sorted((r["instruction"], r["status"]) for r in mcp) == [
        ("MCP（walk）: wp option get blogname — サイト名", "completed"),
        ("MCP（walk）: wp post delete 46 — 不要な下書き", "awaiting_approval"),
    ]
    assert len(runs) == 9  # the six asks, the undo, the two MCP calls; nothing else
    assert not [r for r in runs.values() if r["status"] == "unknown" or not r["instruction"]]

    shown = {run_id: me.cli("show", run_id).stdout for run_id in (failed, partial, declined, undo_run)}
    assert "結果: 失敗 [UNKNOWN_ERROR]" in shown[failed]
    assert f"結果: 一部失敗・取り消し済み（{undo_run}）\n" in shown[partial]
    assert "結果: 見送りあり\n" in shown[declined]
    assert f"結果: 取り消し（undo）\n取り消した実行: {partial}" in shown[undo_run]
    assert "完了 [" not in "".join(shown.values())
    # Times in the site's time zone (the sandbox's is Asia/Tokyo), as its facts said, the undo's too
    # (the MCP calls went to another site whose zone no run learned: UTC, and said so); the model's
    # commands apart from the agent's own reads.
    assert {r["siteTimeZone"] for r in runs.values() if r["channel"] != "mcp:walk"} == {"Asia/Tokyo"}
    assert runs[completed]["startedAtLocal"].endswith("+09:00")
    assert [(c["command"], c["origin"]) for c in runs[completed]["commands"] if c["origin"] == "model"] == [
        ("post list --post_status=draft --format=ids", "model")
    ]
    assert any(c["origin"] == "system" for c in runs[completed]["commands"])
    listed = me.cli("history").stdout
    assert "Asia/Tokyo" in listed
    assert "不明" not in listed
    assert "指示の記録なし" not in listed
    assert "結果" in listed
    assert "中止" in listed
    assert "承認待ち" in listed


def _keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [k for k, v in value.items() for k in (k, *_keys(v))]
    if isinstance(value, list):
        return [k for item in value for k in _keys(item)]
    return []


@pytest.mark.slow
def test_undo_of_a_force_deleted_post_says_one_thing_everywhere(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    me = Person(scripted_anthropic, tmp_path, cli_sandbox)
    scripted_anthropic.enqueue(tools("post delete 45 --force"))
    held = me.cli("ask", "--json", "ID 45 を完全に削除して")
    assert held.returncode == 3, held.stderr
    output = json.loads(held.stdout)
    [item] = output["error"]["details"]["commands"]
    assert "元に戻せません" in item["impact"]  # the approval text
    assert "作り直す" in item["impact"]
    assert "コメントとリビジョンは戻らず" in item["impact"]

    scripted_anthropic.enqueue(reply_text("完全に削除しました。"))
    approved = me.cli("approve", output["approvalId"], "--json")
    assert approved.returncode == 0, approved.stderr
    [deleted] = json.loads(approved.stdout)["executedCommands"]
    assert deleted["undoAvailable"] is False
    assert "一部だけ元に戻せます" in approved.stderr  # the hint: partly, and what will differ
    assert "元に戻すには" not in approved.stderr
    assert "wp post delete 45 --force — ゴミ箱を経由せずに削除した投稿は元に戻せません。" in approved.stderr
    run_id = output["runId"]

    undone = me.cli("undo", run_id, "--yes")
    assert undone.returncode == 6, undone.stdout + undone.stderr  # put back only in part
    assert "一部だけ元に戻せます" in undone.stdout
    assert "✗ 元のとおりには戻せません: wp post delete 45 --force" in undone.stdout
    assert "一部だけ元に戻しました" in undone.stdout
    assert not [line for line in undone.stdout.splitlines() if line.startswith("元に戻しました")]
    assert (
        cli_sandbox.wp("post", "get", "45", "--field=post_title").stdout.strip()
        == "AIで変わるコンテンツ制作の未来"
    )

    again = me.cli("undo", run_id, "--yes", "--json")
    assert again.returncode == 0, again.stderr
    said = json.loads(again.stdout)
    assert said["nothingToUndo"] == "already_undone"
    assert "すでに取り消しました" in again.stderr
    records = [
        json.loads(line) for line in (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len({r["run_id"] for r in records if r.get("reverts_run_id") == run_id}) == 1  # nothing ran again

    runs = me.history()
    [undo_run] = [r for r in runs.values() if r["revertsRunId"] == run_id]
    assert (undo_run["status"], undo_run["errorCode"]) == ("partial_failure", None)
    shown = me.cli("show", undo_run["runId"]).stdout
    assert "結果: 取り消し（undo）: 一部だけ戻した" in shown

    # --json is camelCase throughout (the dry-run plan included)
    scripted_anthropic.enqueue(tools("post update 46 --post_title=題"), reply_text("変えました。"))
    changed = me.cli("ask", "--json", "46の題を変えて")
    dry = me.cli("undo", json.loads(changed.stdout)["runId"], "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)
    assert plan["plan"]["steps"]
    assert not [k for k in _keys(plan) + _keys(said) if "_" in k]
