"""`wp-agent ask --json` on the sandbox where the policy refuses every command the model asks for:
the run is not a success (exit code, `success: false`, COMMAND_BLOCKED) and each refusal is one
`command_blocked` audit record."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_text, reply_tool_use
from tests.fakes.cli import run_cli
from tests.fakes.wordpress_fixtures import sandbox_environment
from wp_agent.agent import site_facts
from wp_agent.sandbox import SandboxSite

REFUSED = ["db drop --yes", "eval 'echo 1;'"]


def test_a_run_whose_every_command_is_refused_fails_with_one_record_per_refusal(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": c, "reason": "指示どおり"}) for c in REFUSED]),
        reply_text("実行できませんでした。"),
    )
    audit_file = tmp_path / "audit.jsonl"
    done = run_cli(
        tmp_path,
        "ask",
        "--json",
        "データベースを消して",
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=scripted_anthropic.base_url,
        WP_AGENT_API_RETRY_BASE_SECONDS="0.01",
        WP_AGENT_AUDIT_FILE=str(audit_file),
        **sandbox_environment(cli_sandbox),
    )
    assert done.returncode != 0, done.stdout + done.stderr
    output = json.loads(done.stdout)
    assert output["success"] is False
    assert output["error"]["code"] == "COMMAND_BLOCKED"
    records = [json.loads(line) for line in audit_file.read_text(encoding="utf-8").splitlines()]
    blocked = [r for r in records if r["type"] == "command_blocked"]
    assert sorted(r["command"] for r in blocked) == sorted(REFUSED)
    assert all(r["rule"] and r["policy_reason"] for r in blocked)
    # Only the site's facts ran (reads, before the first model call); none of the model's commands.
    facts = [r for r in records if r.get("reason") == site_facts.READ_REASON]
    assert facts
    assert all((r["type"], r["category"]) == ("command_executed", "read") for r in facts)
    assert "command_executed" not in [r["type"] for r in records if r not in facts]
