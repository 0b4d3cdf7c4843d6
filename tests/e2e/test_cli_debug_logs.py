"""LOG_LEVEL=debug names each command (masked), its duration and exit code, and the model API's retries."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.anthropic_server import ScriptedAnthropicServer, overloaded, reply_text, reply_tool_use
from tests.fakes.cli import run_cli
from tests.fakes.wordpress_fixtures import sandbox_environment
from wp_agent.sandbox import SandboxSite


def test_debug_logs_name_command_duration_exit_code_and_retries(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    scripted_anthropic.enqueue(
        overloaded(),
        reply_tool_use([("wp_cli", {"command": "option get blogname", "reason": "サイト名"})]),
        reply_text("サイト名を確認しました。"),
    )
    done = run_cli(
        tmp_path,
        "ask",
        "サイト名は？",
        LOG_LEVEL="debug",
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=scripted_anthropic.base_url,
        WP_AGENT_API_RETRY_BASE_SECONDS="0.01",
        WP_AGENT_AUDIT_FILE=str(tmp_path / "audit.jsonl"),
        **sandbox_environment(cli_sandbox),
    )
    assert done.returncode == 0, done.stderr
    executed = [line for line in done.stderr.splitlines() if "command executed" in line]
    assert len(executed) == 1, done.stderr
    assert 'command="option get blogname"' in executed[0]
    assert "exit_code=0" in executed[0]
    assert "duration_ms=" in executed[0]
    retried = [line for line in done.stderr.splitlines() if "model call retried" in line]
    assert len(retried) == 1, done.stderr  # the 529 was retried, and it says so
    assert "attempt=1" in retried[0]
    assert "status=529" in retried[0]
    assert "test-key" not in done.stderr
    assert done.stdout.startswith("【サンドボックス】") or "サイト名を確認しました。" in done.stdout
