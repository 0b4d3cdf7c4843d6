"""`--site-url` / `--site-id` checked against the real sandbox network before the model runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_text, reply_tool_use
from tests.fakes.cli import run_cli, sandbox_run_env
from wp_agent.sandbox import SandboxSite


@pytest.mark.parametrize("option", [["--site-url", "https://nope.test/"], ["--site-id", "99"]])
def test_an_unknown_site_is_exit_2_with_the_list_before_the_model(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite, option: list[str]
) -> None:
    done = run_cli(
        tmp_path, "ask", *option, "投稿一覧", **sandbox_run_env(scripted_anthropic, tmp_path, cli_sandbox)
    )
    assert done.returncode == 2, done.stderr
    assert "入力エラー [SITE_NOT_FOUND]" in done.stderr
    assert (
        "1: https://example.test/、2: https://example.test/en/、3: https://example.test/shop/" in done.stderr
    )
    assert "Traceback" not in done.stderr
    assert scripted_anthropic.request_count == 0


def test_a_site_id_runs_on_that_site_and_shows_the_url_that_ran(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "option get blogname", "reason": "サイト名"})]),
        reply_text("サイト名を確認しました。"),
    )
    env = sandbox_run_env(scripted_anthropic, tmp_path, cli_sandbox)
    done = run_cli(tmp_path, "ask", "--json", "--site-id", "2", "サイト名は？", **env)
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    [command] = output["executedCommands"]
    assert command["command"] == "option get blogname --url=https://example.test/en/"
    assert scripted_anthropic.request_count == 2
    # human output shows the same argv
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "option get blogname", "reason": "サイト名"})]),
        reply_text("サイト名を確認しました。"),
    )
    done = run_cli(tmp_path, "ask", "--site-url", "https://example.test/en", "サイト名は？", **env)
    assert done.returncode == 0, done.stderr
    assert "✓ wp option get blogname --url=https://example.test/en/" in done.stdout
