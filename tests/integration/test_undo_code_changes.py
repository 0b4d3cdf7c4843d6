"""Undo of guarded code changes, later: a run that updated, deleted and installed plugins (each change
guarded, the update from the sandbox's loopback WordPress.org) is undone with `wp-agent undo`, and the
site read directly afterwards has the versions, the files and the active plugins it had before — each
step of the undo itself a guarded change of code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.agent_doubles import ScriptedModel, text_reply, tool_reply
from tests.fakes.wordpress_fixtures import sandbox_settings
from wp_agent.agent.ports import AutoApprove
from wp_agent.agent.runner import AgentRunner
from wp_agent.cli.main import main
from wp_agent.cli.undo import remember_for_undo
from wp_agent.cli.wiring import build_local_deps
from wp_agent.models.agent_io import AgentInput
from wp_agent.sandbox import SandboxSite, sample_updates
from wp_agent.sandbox.sample_updates import INSTALLED, OFFERED, plugin
from wp_agent.sandbox.update_server import UpdateServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
UPDATED = "wpa-sample-good"  # 1.0.0 installed, 1.1.0 offered
DELETED = "wpa-sample-rest-fatal"  # 1.0.0 installed and active, deleted by the run
ADDED = "wpa-undo-added"  # not installed before the run


def test_plugin_updates_deletions_and_installs_are_undone_from_wordpress_org(
    cli_sandbox: SandboxSite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    site = cli_sandbox
    settings = sandbox_settings(site, tmp_path, monkeypatch)
    added = plugin(
        ADDED, "2.0.0", "add_action( 'wp_footer', static function () { echo '<!-- added -->'; } );"
    )
    with UpdateServer(site, [*sample_updates.offered(), added]) as server:
        originals = {e.slug: e for e in sample_updates.installed()}
        for slug in (UPDATED, DELETED):
            server.install(originals[slug])
        assert _wp(site, "plugin", "activate", UPDATED, DELETED).returncode == 0
        before = _plugins(site)
        recently = _wp(site, "option", "get", "recently_activated", "--format=json").stdout

        model = ScriptedModel(
            [
                tool_reply(
                    f"plugin update {UPDATED}",
                    f"plugin delete {DELETED}",
                    f"plugin install {ADDED} --activate",
                ),
                text_reply("更新・削除・追加しました"),
            ]
        )
        runner = AgentRunner(build_local_deps(settings, model=model), AutoApprove("tester"))
        output = runner.run(AgentInput(message="プラグインを整理して"), user_id="local-user")
        state = runner.last_state
        assert state is not None
        assert all(c.undo_available for c in output.executed_commands), output.executed_commands
        assert _plugins(site)[UPDATED] == {"version": OFFERED, "status": "active"}
        assert DELETED not in _plugins(site)
        assert _plugins(site)[ADDED] == {"version": "2.0.0", "status": "active"}

        remember_for_undo(state, settings)
        capsys.readouterr()
        assert main(["undo", state.run_id, "--dry-run"]) == 0
        plan = capsys.readouterr().out
        assert f"plugin update {UPDATED} --version={INSTALLED}" in plan
        assert f"plugin install {DELETED} --version={INSTALLED}" in plan
        assert f"plugin delete {ADDED}" in plan

        code = main(["undo", state.run_id, "--yes"])
        shown = capsys.readouterr().out
        assert code == 0, shown

        assert _plugins(site) == before  # versions and active state, read on the site itself
        for slug in (UPDATED, DELETED):  # the files of the version the site had, byte for byte
            folder = Path(site.wordpress) / "wp-content" / "plugins" / slug
            assert {p.name: p.read_text() for p in folder.iterdir()} == dict(originals[slug].files)
        assert not (Path(site.wordpress) / "wp-content" / "plugins" / ADDED).exists()
        assert _wp(site, "option", "get", "recently_activated", "--format=json").stdout == recently
        assert f"/downloads.wordpress.org/plugin/{UPDATED}.{INSTALLED}.zip" in server.requests


def test_an_undo_step_that_would_break_the_site_is_taken_back_by_its_own_guard(
    cli_sandbox: SandboxSite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The version to go back to is downloaded again; when WordPress.org's copy of it now fatals on the
    front end, the undo's own guard takes that step back: the site keeps the working version it had."""
    site = cli_sandbox
    settings = sandbox_settings(site, tmp_path, monkeypatch)
    with UpdateServer(site, sample_updates.offered()) as server:
        server.install(next(e for e in sample_updates.installed() if e.slug == UPDATED))
        assert _wp(site, "plugin", "activate", UPDATED).returncode == 0
        model = ScriptedModel([tool_reply(f"plugin update {UPDATED}"), text_reply("更新しました")])
        runner = AgentRunner(build_local_deps(settings, model=model), AutoApprove("tester"))
        runner.run(AgentInput(message="更新して"), user_id="local-user")
        state = runner.last_state
        assert state is not None
        server.publish(
            plugin(
                UPDATED, INSTALLED, "add_action( 'template_redirect', static function () { wpa_gone(); } );"
            )
        )
        remember_for_undo(state, settings)
        capsys.readouterr()

        assert main(["undo", state.run_id, "--yes"]) != 0
        shown = capsys.readouterr().out
        assert f"✗ wp plugin update {UPDATED} --version={INSTALLED}\n      変更後に トップページ" in shown, (
            shown
        )
        assert _plugins(site)[UPDATED] == {"version": OFFERED, "status": "active"}  # kept as it was
        front = Path(site.wordpress) / "wp-content" / "plugins" / UPDATED / f"{UPDATED}.php"
        assert "wpa_gone" not in front.read_text()


def _wp(site: SandboxSite, *args: str):  # type: ignore[no-untyped-def]
    return site.wp(*args, check=False)


def _plugins(site: SandboxSite) -> dict[str, dict[str, str]]:
    import json

    rows = json.loads(_wp(site, "plugin", "list", "--fields=name,version,status", "--format=json").stdout)
    return {r["name"]: {"version": r["version"], "status": r["status"]} for r in rows}
