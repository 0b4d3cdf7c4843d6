"""`wp-agent ask` in a terminal (a real pseudo-terminal): progress lines, the y/N approval prompt with
the Japanese summary, and the answer; in sandbox mode (the real sandbox WordPress)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_text, reply_tool_use
from tests.fakes.cli import run_on_terminal
from tests.fakes.wordpress_fixtures import sandbox_environment
from wp_agent.sandbox import SandboxSite


def run_in_terminal(
    server: ScriptedAnthropicServer,
    home: Path,
    sandbox: SandboxSite,
    answer: str,
    instruction: str = "ID 45 の下書きを削除して",
) -> tuple[int, str]:
    """`answer` holds one character per y/N question, in order."""
    env = {
        "PATH": os.environ["PATH"], "HOME": str(home), "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url,
        "TERM": "dumb", **sandbox_environment(sandbox),
    }  # fmt: skip
    code, seen = run_on_terminal(["ask", instruction], env, answer)
    return code, seen.decode("utf-8", "replace")


@pytest.mark.parametrize(("answer", "status", "code"), [("y", "trash", 0), ("n", "draft", 7)])
def test_terminal_approval(
    scripted_anthropic: ScriptedAnthropicServer,
    tmp_path: Path,
    cli_sandbox: SandboxSite,
    answer: str,
    status: str,
    code: int,
) -> None:
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "指示された下書きを削除"})]),
        reply_text("処理しました。"),
    )
    exit_code, screen = run_in_terminal(scripted_anthropic, tmp_path, cli_sandbox, answer)
    assert exit_code == code, screen
    assert "【サンドボックス】" in screen
    assert "AIが次の手順を考えています" in screen  # progress while it works
    assert "投稿（ID: 45）をゴミ箱へ移動します" in screen  # the Japanese summary in the prompt
    assert "影響:" in screen
    assert "処理しました。" in screen  # the answer
    assert cli_sandbox.wp("post", "get", "45", "--field=post_status").stdout.strip() == status
    if answer == "y":
        assert "✓ wp post delete 45" in screen
    else:
        assert "－ wp post delete 45（見送り: 承認されなかったため実行していません）" in screen


def test_each_destructive_command_is_asked_on_its_own(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    scripted_anthropic.enqueue(
        reply_tool_use(
            [
                ("wp_cli", {"command": "post delete 45", "reason": "削除"}),
                ("wp_cli", {"command": "post delete 46", "reason": "削除"}),
            ]
        ),
        reply_text("45 だけ削除しました。"),
    )
    exit_code, screen = run_in_terminal(scripted_anthropic, tmp_path, cli_sandbox, "yn", "45と46を削除して")
    assert exit_code == 7, screen  # 7: finished, but a command was declined
    assert "[1/2] 投稿（ID: 45）をゴミ箱へ移動します" in screen
    assert "[2/2] 投稿（ID: 46）をゴミ箱へ移動します" in screen
    assert "✓ wp post delete 45" in screen
    assert "－ wp post delete 46（見送り" in screen
    assert cli_sandbox.wp("post", "get", "45", "--field=post_status").stdout.strip() == "trash"
    assert cli_sandbox.wp("post", "get", "46", "--field=post_status").stdout.strip() == "draft"
    assert not (tmp_path / ".wp-agent" / "pending").exists()  # answered here: nothing kept
