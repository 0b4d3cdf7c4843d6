"""The agent's own execution path records before-images (turn hook), the answer says what can be
undone, and `wp-agent undo <runId>` puts the sandbox back — a run of its own in the audit log."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.fakes.agent_doubles import ScriptedModel, text_reply, tool_reply
from tests.fakes.wordpress_fixtures import asked_on_the_sandbox, sandbox_settings
from wp_agent.agent.ports import AutoApprove
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.session_state import SessionState
from wp_agent.cli.main import main
from wp_agent.cli.undo import remember_for_undo
from wp_agent.cli.wiring import build_local_deps
from wp_agent.config import CliSettings
from wp_agent.models.agent_io import AgentInput
from wp_agent.sandbox import SandboxSite
from wp_agent.undo.execute import PlanOutcome
from wp_agent.undo.revert_run import CheckedPlan, RevertRun

pytestmark = pytest.mark.slow


def test_a_run_is_undone_from_the_cli(
    cli_sandbox: SandboxSite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = sandbox_settings(cli_sandbox, tmp_path, monkeypatch)
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
    if "一部を元に戻せませんでした" in first:  # the run stays undoable; tried again, nothing is left to do
        assert main(["undo", state.run_id, "--yes"]) == 0
        assert "元に戻す操作はありません" in capsys.readouterr().out
    else:
        assert "一部だけ元に戻しました" in first
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


def test_undoing_a_trash_asks_nobody_and_puts_back_exactly_what_was(
    cli_sandbox: SandboxSite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = sandbox_settings(cli_sandbox, tmp_path, monkeypatch)
    meta_before = cli_sandbox.wp("post", "meta", "list", "46", "--format=json").stdout
    post_before = unmodified(cli_sandbox.wp("post", "get", "46", "--format=json").stdout)
    options_before = cli_sandbox.wp("option", "list", "--search=post_count", "--format=json").stdout
    state = ran_and_remembered(settings, "post delete 46")
    capsys.readouterr()

    assert main(["undo", state.run_id, "--dry-run"]) == 0
    shown = capsys.readouterr().out
    # No step that would write what is there already (the network's post count when the trash did
    # not change it) …
    for line in shown.splitlines():
        words = shlex.split(line.strip())
        if words[:3] == ["wp", "option", "update"]:
            assert cli_sandbox.wp("option", "get", words[3]).stdout.strip() != words[4], line
        assert (
            words[:3] != ["wp", "option", "delete"]
            or cli_sandbox.wp("option", "get", words[3]).returncode == 0
        )
    # … and WordPress's own trash records are named as such, not as custom fields.
    trash_records = ("_wp_trash_meta_status", "_wp_trash_meta_time", "_wp_desired_post_slug")
    for key in trash_records:
        line = next(line for line in shown.splitlines() if f"（{key}）" in line)
        assert "ゴミ箱に入れたときにWordPressが残した記録" in line

    # Nobody is asked (no --yes, no terminal): each record is a key the trash added, whose deletion
    # the plan approves itself; the audit says so, step by step.
    assert main(["undo", state.run_id]) == 0, capsys.readouterr().out
    events = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    approvals = [e for e in events if e.get("reverts_run_id") == state.run_id and "approval" in e["type"]]
    assert {(e["type"], e.get("approver")) for e in approvals} == {("approval_approved", "system:undoPlan")}
    assert sorted(shlex.split(e["command"])[4] for e in approvals) == sorted(trash_records)
    assert all(len(shlex.split(e["command"])) == 5 for e in approvals)  # each key as a whole
    assert cli_sandbox.wp("post", "meta", "list", "46", "--format=json").stdout == meta_before
    assert unmodified(cli_sandbox.wp("post", "get", "46", "--format=json").stdout) == post_before
    assert cli_sandbox.wp("option", "list", "--search=post_count", "--format=json").stdout == options_before


def ran_and_remembered(settings: CliSettings, command: str) -> SessionState:
    """A run of the agent that asked for `command` (approved), kept for `wp-agent undo` as `ask` keeps it."""
    state, _ = asked_on_the_sandbox(settings, command)
    remember_for_undo(state, settings)
    return state


def unmodified(post_json: str) -> dict[str, object]:
    """The post's fields but the last-modified time (WordPress sets it on every update; undo too)."""
    fields: dict[str, object] = json.loads(post_json)
    return {k: v for k, v in fields.items() if k not in ("post_modified", "post_modified_gmt")}


def test_an_undo_leaves_what_changed_after_its_plan(
    cli_sandbox: SandboxSite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Between the plan and its steps (a person may be asked), WordPress's trash record is written
    again: the undo deletes neither the new value nor anything of the post, and says so."""
    settings = sandbox_settings(cli_sandbox, tmp_path, monkeypatch)
    state = ran_and_remembered(settings, "post delete 46")
    capsys.readouterr()
    planned_execute = RevertRun.execute

    def written_meanwhile(self: RevertRun, checked: CheckedPlan, *, approved_by: str | None) -> PlanOutcome:
        assert any(s.takes_back_addition for s in checked.plan.steps)
        cli_sandbox.wp("post", "meta", "update", "46", "_wp_trash_meta_time", "1700000000")
        return planned_execute(self, checked, approved_by=approved_by)

    monkeypatch.setattr(RevertRun, "execute", written_meanwhile)
    assert main(["undo", state.run_id]) != 0
    said = capsys.readouterr().out
    assert "計画の後に別の変更が加えられた" in said, said
    assert cli_sandbox.wp("post", "meta", "get", "46", "_wp_trash_meta_time").stdout.strip() == "1700000000"
    assert cli_sandbox.wp("post", "get", "46", "--field=post_status").stdout.strip() == "trash"


def test_an_undo_settles_what_its_own_steps_write(
    cli_sandbox: SandboxSite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Re-checked before it starts, the undo still puts back what its own steps make WordPress write on
    another thing (deactivating a plugin again records it in `recently_activated`)."""
    settings = sandbox_settings(cli_sandbox, tmp_path, monkeypatch)
    ran_and_remembered(settings, "plugin deactivate akismet")
    recently = cli_sandbox.wp("option", "get", "recently_activated", "--format=json").stdout
    activated = ran_and_remembered(settings, "plugin activate akismet")
    capsys.readouterr()
    assert main(["undo", activated.run_id, "--yes"]) == 0, capsys.readouterr().out
    assert cli_sandbox.wp("plugin", "is-active", "akismet", check=False).returncode == 1
    assert cli_sandbox.wp("option", "get", "recently_activated", "--format=json").stdout == recently


def test_an_undo_never_deletes_a_key_the_database_takes_for_another(
    cli_sandbox: SandboxSite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The run adds `Views`; someone keeps `views` on the same post afterwards (the agent itself refuses to
    write another spelling of a kept key: policy/meta_spelling.py). Under WordPress's case-insensitive
    collation deleting `Views` deletes `views` too, so the undo leaves it and says why (never asks)."""
    settings = sandbox_settings(cli_sandbox, tmp_path, monkeypatch)
    views = cli_sandbox.wp("post", "meta", "get", "10", "views").stdout
    assert views.strip()
    cli_sandbox.wp("post", "meta", "delete", "10", "views")
    added = ran_and_remembered(settings, "post meta add 10 Views 5")
    cli_sandbox.wp("post", "meta", "add", "10", "views", views.strip())  # another writer, after the run
    capsys.readouterr()
    assert main(["undo", added.run_id, "--yes"]) == 0
    said = capsys.readouterr().out
    assert "「views」" in said, said
    assert cli_sandbox.wp("post", "meta", "get", "10", "views").stdout == views
