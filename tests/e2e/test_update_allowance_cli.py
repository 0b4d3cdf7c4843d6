"""Updates the owner allows in advance, on a named site of the CLI: `wp-agent sites updates` sets them,
and `wp-agent ask --site` then runs an update within them without asking — guarded on the real
WordPress (the sandbox's loopback WordPress.org offering the sample plugins' newer versions), the broken
update taken back, the audit naming the allowance as its approver. Taken back again with `--plugins
none`, the same kind of update waits for the person."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_cli_named_sites import model_only
from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_text, reply_tool_use
from tests.fakes.cli import run_cli
from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import TestWordPress
from wp_agent.policy.update_allowance import APPROVER
from wp_agent.sandbox import sample_updates
from wp_agent.sandbox.http_front import HttpFront
from wp_agent.sandbox.sample_updates import INSTALLED, OFFERED
from wp_agent.sandbox.update_server import UpdateServer

pytestmark = pytest.mark.timeout(300)
GOOD, BROKEN = "wpa-sample-good", "wpa-sample-front-fatal"


def test_a_named_sites_allowance_lets_its_updates_run_guarded_without_asking(
    tmp_path: Path, sshd_server: SshdRig, rig_site: TestWordPress, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    site = rig_site.site
    with UpdateServer(site, sample_updates.offered()) as server, HttpFront(site, workers=2) as front:
        for extension in sample_updates.installed():
            if extension.slug in {GOOD, BROKEN}:
                server.install(extension)
        assert site.wp("plugin", "activate", GOOD, BROKEN, check=False).returncode == 0
        env = {**model_only(scripted_anthropic), "WP_AGENT_HEALTH_CONNECT": f"127.0.0.1:{front.port}"}
        wp_bin = str(sshd_server.bin_dir / "wp")
        added = run_cli(tmp_path, "sites", "add", "shop", "--local", str(rig_site.path), "--wp-bin", wp_bin)
        assert added.returncode == 0, added.stderr

        allowed = run_cli(tmp_path, "sites", "updates", "shop", "--plugins", "minor", "--json")
        assert allowed.returncode == 0, allowed.stderr
        assert json.loads(allowed.stdout)["updateAllowance"] == {
            "core": "none",
            "plugins": "minor",
            "themes": "none",
        }

        scripted_anthropic.enqueue(
            reply_tool_use([("wp_cli", {"command": "plugin update --all --minor", "reason": "安全な更新"})]),
            reply_text("更新しました。"),
        )
        asked = run_cli(tmp_path, "ask", "--json", "--site", "shop", "プラグインを安全に更新して", **env)
        output = json.loads(asked.stdout)
        assert "approvalId" not in output, asked.stdout  # nobody was asked
        [command] = output["executedCommands"]
        assert command["command"] == "plugin update --all --minor"
        version = {
            slug: rig_site.wp("plugin", "get", slug, "--field=version").stdout.strip()
            for slug in (GOOD, BROKEN)
        }
        assert version == {GOOD: OFFERED, BROKEN: INSTALLED}  # the good kept, the broken taken back
        audit = [
            json.loads(line) for line in (tmp_path / ".wp-agent" / "audit.jsonl").read_text().splitlines()
        ]
        approved = [r for r in audit if r["run_id"] == output["runId"] and r["type"] == "approval_approved"]
        assert [r["approver"] for r in approved] == [APPROVER]

        withdrawn = run_cli(tmp_path, "sites", "updates", "shop", "--plugins", "none")
        assert withdrawn.returncode == 0, withdrawn.stderr
        scripted_anthropic.enqueue(
            reply_tool_use([("wp_cli", {"command": f"plugin update {BROKEN} --minor", "reason": "更新"})]),
        )
        held = run_cli(tmp_path, "ask", "--json", "--site", "shop", "もう一度更新して", **env)
        assert held.returncode == 3, held.stderr  # waits for the person now
        assert "approvalId" in json.loads(held.stdout)
        assert rig_site.wp("plugin", "get", BROKEN, "--field=version").stdout.strip() == INSTALLED
