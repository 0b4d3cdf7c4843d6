"""Ctrl-C in a real pseudo-terminal (the child's controlling terminal, so ^C is a real SIGINT from the
line discipline): at the y/N prompt and while a WP-CLI command runs. One Japanese line, exit 130, the
running command ended, the run audited as cancelled, nothing destructive run."""

from __future__ import annotations

import json
import os
import pty
import select
import shlex
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_tool_use
from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import TestWordPress
from tests.fakes.wordpress_fixtures import sandbox_environment
from wp_agent.cli.interrupts import INTERRUPTED_MESSAGE
from wp_agent.sandbox import SandboxSite


def interrupt_when(
    env: dict[str, str],
    instruction: str,
    marker: bytes,
    started: Callable[[], object] | None = None,
    after_press: Callable[[], object] | None = None,
    *,
    sigint_blocked: bool = False,
) -> tuple[int, str, float]:
    """Run `wp-agent ask` on a pty; press Ctrl-C once `marker` is on the screen (and `started()` holds),
    then call `after_press()` (while the CLI handles it). Exit code, screen, seconds from Ctrl-C to exit.
    `sigint_blocked`: the CLI starts with SIGINT blocked, as a parent's signal mask would leave it."""
    argv = [sys.executable, "-m", "wp_agent.cli.main", "ask", instruction]
    pid, controller = pty.fork()
    if pid == 0:  # the child: the pty is its controlling terminal
        if sigint_blocked:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
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
        if pressed_at is None and marker in seen and (started is None or started()):
            os.write(controller, b"\x03")
            pressed_at = time.monotonic()
            if after_press is not None:
                after_press()
        finished, wait_status = os.waitpid(pid, os.WNOHANG)
        if finished:
            status = wait_status
            break
    if status is None:
        if time.monotonic() >= deadline:
            os.kill(pid, 9)
        _, status = os.waitpid(pid, 0)
    with_rest = seen + _rest_of(controller)
    os.close(controller)
    assert pressed_at is not None, with_rest.decode("utf-8", "replace")
    code = os.waitstatus_to_exitcode(status)
    return code, with_rest.decode("utf-8", "replace"), time.monotonic() - pressed_at


def _rest_of(controller: int) -> bytes:
    rest = b""
    try:
        while select.select([controller], [], [], 0.1)[0]:
            chunk = os.read(controller, 4096)
            if not chunk:
                break
            rest += chunk
    except OSError:
        pass
    return rest


def base_env(server: ScriptedAnthropicServer, home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"], "HOME": str(home), "TERM": "dumb",
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url,
        "WP_AGENT_AUDIT_FILE": str(home / "audit.jsonl"),
    }  # fmt: skip


def audit_types(home: Path) -> list[str]:
    lines = (home / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["type"] for line in lines]


@pytest.mark.parametrize("sigint_blocked", [False, True], ids=["plain", "started-with-sigint-blocked"])
def test_ctrl_c_at_the_approval_prompt(
    scripted_anthropic: ScriptedAnthropicServer,
    tmp_path: Path,
    cli_sandbox: SandboxSite,
    sigint_blocked: bool,
) -> None:
    scripted_anthropic.enqueue(reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "削除"})]))
    env = {**base_env(scripted_anthropic, tmp_path), **sandbox_environment(cli_sandbox)}
    code, screen, _ = interrupt_when(env, "ID 45 を削除して", b"[y/N]", sigint_blocked=sigint_blocked)
    assert code == 130, f"exit {code}:\n{screen}"
    assert INTERRUPTED_MESSAGE in screen
    assert "Traceback" not in screen
    assert "KeyboardInterrupt" not in screen
    assert cli_sandbox.wp("post", "get", "45", "--field=post_status").stdout.strip() == "draft"
    assert "run_cancelled" in audit_types(tmp_path)


@pytest.mark.parametrize("sigint_blocked", [False, True], ids=["plain", "started-with-sigint-blocked"])
def test_ctrl_c_while_a_command_runs_ends_it(
    scripted_anthropic: ScriptedAnthropicServer,
    tmp_path: Path,
    cli_sandbox: SandboxSite,
    sigint_blocked: bool,
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
    code, screen, seconds = interrupt_when(
        env, "投稿は何件？", "実行中: wp post list".encode(), pid_file.exists, sigint_blocked=sigint_blocked
    )
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


def test_ctrl_c_over_ssh_ends_the_command_on_the_server(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, sshd_server: SshdRig, rig_site: TestWordPress
) -> None:
    # The rig's WP-CLI over real SSH, the model's `post list` slow on the server (60 s): Ctrl-C kills it
    # there, not only the connection here.
    sshd_server.set_fault("post list", delay_ms=60_000)
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "post list --format=count", "reason": "件数を確認"})])
    )
    env = {**base_env(scripted_anthropic, tmp_path), **sshd_server.environment()}
    gone_after: list[float] = []

    def remote_gone() -> None:
        pressed = time.monotonic()
        while sshd_server.faulted_pids("post", "list") and time.monotonic() - pressed < 10:
            time.sleep(0.02)
        gone_after.append(time.monotonic() - pressed)

    code, screen, _ = interrupt_when(
        env,
        "投稿は何件？",
        "実行中: wp post list".encode(),
        lambda: sshd_server.faulted_pids("post", "list"),
        remote_gone,
    )
    assert code == 130, f"exit {code}:\n{screen}"
    assert INTERRUPTED_MESSAGE in screen
    assert "確認できませんでした" not in screen
    assert "Traceback" not in screen
    assert gone_after[0] < 2.0, f"the command ran on the server {gone_after[0]:.1f} s after Ctrl-C"
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    killed = [r for r in lines if r["type"] == "command_executed" and "post list" in json.dumps(r)]
    assert killed, [r["type"] for r in lines]
    # killed (128 + SIGKILL), as a local command is; not "the connection was lost"
    assert (killed[-1]["success"], killed[-1].get("exit_code"), killed[-1].get("error")) == (False, 137, "")
    assert [r["type"] for r in lines][-2:] == ["run_cancelled", "run_summary"]
