"""`wp-agent history` / `show` read runs back from the audit file exactly as audited (masked)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.agent_doubles import ScriptedModel, make_deps, text_reply, tool_reply
from wp_agent.adapters.jsonl_audit import JsonlAuditLog
from wp_agent.agent.ports import AutoApprove
from wp_agent.agent.runner import AgentRunner
from wp_agent.cli import history
from wp_agent.cli.main import main
from wp_agent.models.agent_io import AgentInput


@pytest.fixture
def audit_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "audit.jsonl"
    monkeypatch.setenv("WP_AGENT_AUDIT_FILE", str(path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    return path


def run_once(audit_file: Path, instruction: str, *replies: object) -> str:
    deps = make_deps(ScriptedModel(list(replies)))  # type: ignore[arg-type]
    deps.audit = JsonlAuditLog(audit_file)
    runner = AgentRunner(deps, AutoApprove("cli:local-user:--yes"))
    runner.run(AgentInput(message=instruction))
    assert runner.last_state is not None
    history.record_summary(deps.audit, runner.last_state)
    return runner.last_state.run_id


def test_history_lists_runs_newest_first_with_the_masked_instruction(
    audit_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = run_once(
        audit_file, "投稿一覧を見せて", tool_reply("post list --format=ids"), text_reply("3件です。")
    )
    second = run_once(
        audit_file,
        "パスワード password=Secr3t-Value を設定して、ID 45 を削除",
        tool_reply("post delete 45"),
        text_reply("削除しました。"),
    )
    assert main(["history", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert [r["runId"] for r in runs] == [second, first]
    assert "Secr3t-Value" not in json.dumps(runs, ensure_ascii=False)
    deleted = {c["command"]: c for c in runs[0]["commands"]}["post delete 45"]
    assert deleted["approver"] == "cli:local-user:--yes"
    # The API's vocabulary, and the words people read beside it.
    assert (deleted["decision"], deleted["outcome"], deleted["origin"]) == (
        "destructive",
        "succeeded",
        "model",
    )
    assert (deleted["decisionJa"], deleted["outcomeJa"]) == ("要承認", "成功")
    # The agent's own reads (the site facts at the start) are marked, apart from what was asked for.
    asked = [c["command"] for c in runs[0]["commands"] if c["origin"] == "model"]
    assert asked == ["post delete 45"]
    own = [c for c in runs[0]["commands"] if c["origin"] == "system"]
    assert own
    assert {c["decision"] for c in own} == {"read"}
    assert runs[1]["answer"] == "3件です。"
    assert main(["history", "-n", "1"]) == 0
    plain = capsys.readouterr().out.splitlines()
    assert plain[1] == "開始\t実行ID\t結果\tコマンド\t指示"
    assert len(plain) == 3
    assert second in plain[2]
    assert plain[2].split("\t")[3] == "1"  # the commands asked for, not the agent's own reads


def test_show_an_unknown_run_is_a_usage_error(audit_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "run_nope"]) == 2
    assert "RUN_NOT_FOUND" in capsys.readouterr().err
    assert main(["history", "-n", "0"]) == 2
    assert "1〜1000" in capsys.readouterr().err
    assert main(["history"]) == 0
    assert "まだ実行の記録はありません" in capsys.readouterr().out
