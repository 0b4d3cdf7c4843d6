"""The Abilities API's registry is readable over SSH on the real WordPress 7.x, although the pinned WP-CLI
(2.10) has no ability command: `ability list|get|exists` and `ability category …` are answered by our
reader (executors/ability_reads.py), which prints what abilities say they are and runs none of them."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import TestWordPress
from tests.fakes.wordpress_fixtures import CURRENT, asked_on_the_sandbox, sandbox_settings
from wp_agent.executors.ssh import REMOTE_STAGING_PARENT, SshConnectionPool, SshWpCli
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.sandbox import SandboxSite

pytestmark = [
    pytest.mark.skipif(
        int(CURRENT.version.split(".")[0]) < 7, reason=f"the sandbox runs WordPress {CURRENT.version}"
    ),
]
POLICY = CommandPolicy()
# A plugin's ability whose every callback leaves a mark: reading the registry must leave none.
_PROBE = """<?php
add_action( 'wp_abilities_api_init', function () {
	wp_register_ability( 'wp-agent-test/mark', array(
		'label'               => 'Mark',
		'description'         => 'Leaves a mark when it runs.',
		'category'            => 'site',
		'input_schema'        => array( 'type' => 'object' ),
		'output_schema'       => array( 'type' => 'string' ),
		'execute_callback'    => function () { update_option( 'wp_agent_test_mark', 'executed' ); return 'x'; },
		'permission_callback' => function () { update_option( 'wp_agent_test_mark', 'permission' ); return true; },
		'meta'                => array( 'annotations' => array( 'destructive' => true ), 'show_in_rest' => true ),
	) );
} );
"""


@pytest.fixture
def probe_site(rig_site: TestWordPress) -> Iterator[TestWordPress]:
    plugin = rig_site.path / "wp-content" / "mu-plugins" / "wp-agent-test-ability.php"
    plugin.write_text(_PROBE, encoding="utf-8")
    try:
        yield rig_site
    finally:
        plugin.unlink(missing_ok=True)  # (the site is reset for the next test that needs it fresh)


def _staged_readers() -> list[Path]:
    return sorted(Path(REMOTE_STAGING_PARENT).glob("wp-agent-media-*/wp-agent-ability-reader.php"))


@pytest.mark.sshd
def test_the_registry_is_read_and_no_ability_runs(
    sshd_server: SshdRig, probe_site: TestWordPress, tmp_path: Path
) -> None:
    pool = SshConnectionPool()
    wp = SshWpCli(sshd_server.settings(), pool=pool)
    assert wp.run(["option", "get", "blogname"]).exit_code == 0  # the plugin's first load, before the count
    tables = probe_site.site.table_state()
    try:
        results = {}
        for command in (
            "ability list --format=json",
            "ability list --namespace=wp-agent-test --fields=name,destructive,show_in_rest --format=json",
            "ability list --show-in-rest=false --field=name",
            "ability list --show-in-rest=true --field=name",
            "ability get wp-agent-test/mark --format=json",
            "ability get core/get-site-info --field=label",
            "ability exists wp-agent-test/mark",
            "ability exists wp-agent-test/none",
            "ability category list --format=json",
            "ability category get site --format=json",
            "ability category exists no-such-category",
        ):
            assert POLICY.classify(command).category is PolicyCategory.READ, command
            results[command] = wp.run(shlex.split(command))
    finally:
        pool.close_all()

    listed = json.loads(results["ability list --format=json"].stdout)
    assert {"core/get-site-info", "wp-agent-test/mark"} <= {a["name"] for a in listed}
    assert set(listed[0]) == {"name", "label", "category", "description"}
    assert json.loads(results["ability list --namespace=wp-agent-test --fields=name,destructive,show_in_rest --format=json"].stdout) == [
        {"name": "wp-agent-test/mark", "destructive": "1", "show_in_rest": "1"}
    ]  # fmt: skip
    assert (
        "wp-agent-test/mark" not in results["ability list --show-in-rest=false --field=name"].stdout.split()
    )
    assert "wp-agent-test/mark" in results["ability list --show-in-rest=true --field=name"].stdout.split()
    mark = json.loads(results["ability get wp-agent-test/mark --format=json"].stdout)
    assert mark["input_schema"] == '{"type":"object"}'
    assert (mark["readonly"], mark["destructive"], mark["category"]) == ("", "1", "site")
    assert results["ability get core/get-site-info --field=label"].stdout.strip()
    assert results["ability exists wp-agent-test/mark"].exit_code == 0
    assert results["ability exists wp-agent-test/none"].exit_code == 1
    assert "site" in {c["slug"] for c in json.loads(results["ability category list --format=json"].stdout)}
    assert json.loads(results["ability category get site --format=json"].stdout)["slug"] == "site"
    assert results["ability category exists no-such-category"].exit_code == 1

    # Nothing ran: neither the ability nor its permission check (no table changed), and the staged
    # reader is gone.
    assert probe_site.site.table_state() == tables
    assert probe_site.site.wp("option", "get", "wp_agent_test_mark", check=False).returncode == 1
    assert _staged_readers() == []


def test_the_agent_reads_the_registry_on_the_sandbox(
    cli_sandbox: SandboxSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The local path (the sandbox's own WP-CLI, staged in a private temporary directory here)."""
    settings = sandbox_settings(cli_sandbox, tmp_path, monkeypatch)
    state, model = asked_on_the_sandbox(settings, "ability list --format=json")
    assert state.result is not None
    (command,) = state.result.executed_commands
    assert (command.command, command.success) == ("ability list --format=json", True)
    assert "get-site-info" in json.dumps(model.last_tool_results(), ensure_ascii=False)  # (core\\/…: JSON)
