"""The agent's own execution path records before-images (turn hook), the answer says what can be
undone, and `wp-agent undo <runId>` puts the sandbox back — a run of its own in the audit log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.agent_doubles import ScriptedModel, text_reply, tool_reply
from tests.fakes.wordpress_fixtures import sandbox_environment
from wp_agent.agent.ports import AutoApprove
from wp_agent.agent.runner import AgentRunner
from wp_agent.cli.main import main
from wp_agent.cli.undo import remember_for_undo
from wp_agent.cli.wiring import build_local_deps
from wp_agent.config import CliSettings
from wp_agent.models.agent_io import AgentInput
from wp_agent.sandbox import SandboxSite

pytestmark = pytest.mark.slow


def test_a_run_is_undone_from_the_cli(
    cli_sandbox: SandboxSite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, value in {
        **sandbox_environment(cli_sandbox),
        "WP_AGENT_AUDIT_FILE": str(tmp_path / "audit.jsonl"),
        "ANTHROPIC_API_KEY": "test",
    }.items():
        monkeypatch.setenv(name, value)
    settings = CliSettings()
    model = ScriptedModel(
        [
            tool_reply("post update 45 --post_title=エージェントの題名", "option update blogname 新しい名前"),
            tool_reply("post delete 46", "term delete post_tag 8"),
            text_reply("変更しました"),
        ]
    )
    deps = build_local_deps(settings, model=model)
    runner = AgentRunner(deps, AutoApprove("tester"))
    output = runner.run(AgentInput(message="題名とサイト名を変えて46を削除"), user_id="local-user")
    state = runner.last_state
    assert state is not None
    by_command = {c.command: c.undo_available for c in output.executed_commands}
    assert by_command["post update 45 --post_title=エージェントの題名"] is True
    assert by_command["post delete 46"] is True
    assert by_command["term delete post_tag 8"] is False  # marked before it ran
    assert cli_sandbox.wp("post", "get", "46", "--field=post_status").stdout.strip() == "trash"

    remember_for_undo(state, settings)
    assert f"wp-agent undo {state.run_id}" in capsys.readouterr().err

    assert main(["undo", state.run_id, "--dry-run"]) == 0
    shown = capsys.readouterr().out
    assert "元に戻す計画" in shown
    assert "term delete" in shown  # reported as not revertible
    assert cli_sandbox.wp("option", "get", "blogname").stdout.strip() == "新しい名前"  # dry run: nothing ran

    assert main(["undo", state.run_id, "--user", "someone-else"]) == 2  # requester only
    assert main(["undo", state.run_id, "--yes"]) == 6  # the deleted tag cannot be put back: partly
    first = capsys.readouterr().out
    assert "✗ 元のとおりには戻せません: wp term delete post_tag 8" in first
    assert (
        cli_sandbox.wp("post", "get", "45", "--field=post_title").stdout.strip()
        == "AIで変わるコンテンツ制作の未来"
    )
    assert cli_sandbox.wp("post", "get", "46", "--field=post_status").stdout.strip() == "draft"
    assert cli_sandbox.wp("option", "get", "blogname").stdout.strip() == cli_sandbox.facts()["blogname"]
    if (
        "一部を元に戻せませんでした" in first
    ):  # a step failed: the run stays undoable, the rest is tried again
        assert main(["undo", state.run_id, "--yes"]) == 6
    else:
        assert "一部だけ元に戻しました" in first
    capsys.readouterr()
    assert main(["undo", state.run_id, "--yes"]) == 0  # undone already: said, nothing runs
    assert "すでに取り消しました" in capsys.readouterr().out

    events = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    undo_events = [e for e in events if e.get("reverts_run_id") == state.run_id]
    assert {e["type"] for e in undo_events} >= {
        "run_revert_started",
        "run_revert_finished",
        "command_executed",
    }
    assert {e["run_id"] for e in undo_events} != {state.run_id}  # a run of its own
