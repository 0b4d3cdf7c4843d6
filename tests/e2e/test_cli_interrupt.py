"""Ctrl-C in a real pseudo-terminal (the child's controlling terminal, so ^C is a real SIGINT from the
line discipline): at the y/N prompt and while a WP-CLI command runs. One Japanese line, exit 130, the
running command ended, the run audited as cancelled, nothing destructive run."""

from __future__ import annotations

import json
import os
import pty
import select
import shlex
import sys
import time
from pathlib import Path

from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_tool_use
from tests.fakes.wordpress_fixtures import sandbox_environment
from wp_agent.cli.interrupts import INTERRUPTED_MESSAGE
from wp_agent.sandbox import SandboxSite


def interrupt_when(
    env: dict[str, str], instruction: str, marker: bytes, started: Path | None = None
) -> tuple[int, str, float]:
    """Run `wp-agent ask` on a pty; press Ctrl-C once `marker` is on the screen (and the file `started`
    exists). Exit code, screen, seconds from Ctrl-C to exit."""
    argv = [sys.executable, "-m", "wp_agent.cli.main", "ask", instruction]
    pid, controller = pty.fork()
    if pid == 0:  # the child: the pty is its controlling terminal
        os.execve(argv[0], argv, env)  # noqa: S606 - argv list, no shell
    seen = b""
    pressed_at: float | None = None
    deadline = time.monotonic() + 180  # generous: the machine is shared
    status: int | None = None
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(controller, 4096)
            except OSError:
                chunk = b""
            seen += chunk
            if not chunk:
                break
        if pressed_at is None and marker in seen and (started is None or started.exists()):
            os.write(controller, b"\x03")
            pressed_at = time.monotonic()
        finished, wait_status = os.waitpid(pid, os.WNOHANG)
        if finished:
            status = wait_status
            break
    if status is None:
        if time.monotonic() >= deadline:
            os.kill(pid, 9)
        _, status = os.waitpid(pid, 0)
    with_rest = seen
    try:
        while select.select([controller], [], [], 0.1)[0]:
            chunk = os.read(controller, 4096)
            if not chunk:
                break
            with_rest += chunk
    except OSError:
        pass
    os.close(controller)
    assert pressed_at is not None, with_rest.decode("utf-8", "replace")
    code = os.waitstatus_to_exitcode(status)
    return code, with_rest.decode("utf-8", "replace"), time.monotonic() - pressed_at


def base_env(server: ScriptedAnthropicServer, home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"], "HOME": str(home), "TERM": "dumb",
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url,
        "WP_AGENT_AUDIT_FILE": str(home / "audit.jsonl"),
    }  # fmt: skip


def audit_types(home: Path) -> list[str]:
    lines = (home / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["type"] for line in lines]


def test_ctrl_c_at_the_approval_prompt(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    scripted_anthropic.enqueue(reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "削除"})]))
    env = {**base_env(scripted_anthropic, tmp_path), **sandbox_environment(cli_sandbox)}
    code, screen, _ = interrupt_when(env, "ID 45 を削除して", b"[y/N]")
    assert code == 130, f"exit {code}:\n{screen}"
    assert INTERRUPTED_MESSAGE in screen
    assert "Traceback" not in screen
    assert "KeyboardInterrupt" not in screen
    assert cli_sandbox.wp("post", "get", "45", "--field=post_status").stdout.strip() == "draft"
    assert "run_cancelled" in audit_types(tmp_path)


def test_ctrl_c_while_a_command_runs_ends_it(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    # The sandbox's own WP-CLI, behind a wrapper that first sleeps when the model's command runs (a slow
    # command, e.g. a big export); the check before the model (`core version`) answers at once.
    pid_file = tmp_path / "wrapper.pid"
    wrapper = tmp_path / "slow-wp"
    wrapper.write_text(
        f'#!/bin/sh\ncase "$*" in *"post list"*) echo $$ > {shlex.quote(str(pid_file))}; sleep 60;; esac\n'
        f'exec {shlex.join(cli_sandbox.wp_command())} "$@"\n',
        encoding="utf-8",
    )
    wrapper.chmod(0o755)
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "post list --format=count", "reason": "件数を確認"})])
    )
    env = {
        **base_env(scripted_anthropic, tmp_path),
        "WP_CLI_MODE": "local",
        "WP_LOCAL_PATH": str(cli_sandbox.wordpress),
        "WP_CLI_BIN": str(wrapper),
    }
    code, screen, seconds = interrupt_when(env, "投稿は何件？", "実行中: wp post list".encode(), pid_file)
    assert code == 130, f"exit {code}:\n{screen}"
    assert INTERRUPTED_MESSAGE in screen
    assert "Traceback" not in screen
    # not the wrapper's 60 s: the command was ended (the screen and audit say what the CLI did meanwhile)
    assert seconds < 20, f"{seconds:.1f} s after Ctrl-C:\n{screen}\naudit: {audit_types(tmp_path)}"
    wrapper_pid = int(pid_file.read_text(encoding="utf-8"))
    assert (
        not Path(f"/proc/{wrapper_pid}").exists()
        or "Z" in Path(f"/proc/{wrapper_pid}/stat").read_text().split()[2]
    )
    types = audit_types(tmp_path)
    assert types[-2:] == ["run_cancelled", "run_summary"]
    assert "command_executed" in types  # the ended command is on record (killed)
