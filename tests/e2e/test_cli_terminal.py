"""`wp-agent ask` in a terminal (a real pseudo-terminal): progress lines, the y/N approval prompt with
the Japanese summary, and the answer; in sandbox mode (the real sandbox WordPress)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_text, reply_tool_use
from tests.fakes.wordpress_fixtures import sandbox_environment
from wp_agent.sandbox import SandboxSite


def run_in_terminal(
    server: ScriptedAnthropicServer, home: Path, sandbox: SandboxSite, answer: str
) -> tuple[int, str]:
    controller, terminal = pty.openpty()
    env = {
        "PATH": os.environ["PATH"], "HOME": str(home), "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url,
        "TERM": "dumb", **sandbox_environment(sandbox),
    }  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "wp_agent.cli.main", "ask", "ID 45 の下書きを削除して"],
        stdin=terminal, stdout=terminal, stderr=terminal, env=env, close_fds=True,
    )  # fmt: skip
    os.close(terminal)
    seen = b""
    answered = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(controller, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        if not answered and b"[y/N]" in seen:
            os.write(controller, f"{answer}\n".encode())
            answered = True
        if process.poll() is not None and not ready:
            break
    os.close(controller)
    return process.wait(timeout=30), seen.decode("utf-8", "replace")


@pytest.mark.parametrize(("answer", "status", "code"), [("y", "trash", 0), ("n", "draft", 0)])
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
