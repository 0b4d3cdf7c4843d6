"""Running `wp-agent` as a separate process, the way an operator or a script would (forked from the test's
process where a new interpreter proves nothing more: tests/fakes/cli_process.py)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_server import ScriptedAnthropicServer
from tests.fakes.cli_process import run_wp_agent
from tests.fakes.clock import faketime_argv, faketime_environment
from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress_fixtures import sandbox_environment
from wp_agent.sandbox import SandboxSite


def sandbox_run_env(
    server: ScriptedAnthropicServer, home: Path, sandbox: SandboxSite, **overrides: str
) -> dict[str, str]:
    """What a `wp-agent` run on the sandbox with the scripted model needs (and `overrides`)."""
    return {**_scripted_model(server, home), **sandbox_environment(sandbox), **overrides}


def _scripted_model(server: ScriptedAnthropicServer, home: Path) -> dict[str, str]:
    """A key, the scripted model's URL, an audit file under `home`, retries without waiting."""
    return {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": server.base_url,
        "WP_AGENT_AUDIT_FILE": str(home / "audit.jsonl"),
        "WP_AGENT_API_RETRY_BASE_SECONDS": "0.01",
    }


def ask_json(
    server: ScriptedAnthropicServer, rig: SshdRig, home: Path, *args: str
) -> tuple[int, dict[str, Any], str]:
    """Exit code, the AgentOutput printed on stdout (which must hold nothing else), the audit file."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        **_scripted_model(server, home),
        **rig.environment(),
    }
    completed = run_wp_agent(["ask", "--json", *args], env=env, timeout=120)
    assert completed.stdout.count("\n") == 1, completed.stdout + completed.stderr
    audit = home / "audit.jsonl"
    return (
        completed.returncode,
        json.loads(completed.stdout),
        audit.read_text(encoding="utf-8") if audit.exists() else "",
    )


def run_cli(
    home: Path, *args: str, stdin_text: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """`wp-agent <args>` as a process with a clean environment under `home` (no terminal, no AWS
    lookups beyond the variables given; stdin empty unless `stdin_text`)."""
    return _run_cli([], home, args, stdin_text, env)


def run_cli_at(moment: datetime, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`run_cli`, the process's clock starting at `moment` (Debian's faketime)."""
    return _run_cli(faketime_argv(moment), home, args, None, {**faketime_environment(), **env})


def _run_cli(
    prefix: list[str], home: Path, args: Sequence[str], stdin_text: str | None, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    environment = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "AWS_EC2_METADATA_DISABLED": "true",  # never probe the instance metadata address
        "AWS_CONFIG_FILE": str(home / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-aws-credentials"),
        **env,
    }
    return run_wp_agent(args, env=environment, stdin_text=stdin_text, timeout=120, prefix=prefix)


def run_on_terminal(
    args: Sequence[str],
    env: dict[str, str],
    answers: str = "",
    *,
    prompt: bytes = b"[y/N]",
    timeout: float = 90,
) -> tuple[int, bytes]:
    """`wp-agent <args>` on a real pseudo-terminal (stdin, stdout and stderr), so every branch on
    isatty is the one a person meets. `answers` holds one character per `prompt` seen, in order.
    Returns the exit code and the raw bytes the terminal received."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "wp_agent.cli.main", *args],
        stdin=terminal, stdout=terminal, stderr=terminal, env=env, close_fds=True,
    )  # fmt: skip
    os.close(terminal)
    seen = b""
    answered = 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the process closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        if answered < len(answers) and seen.count(prompt) > answered:
            os.write(controller, f"{answers[answered]}\n".encode())
            answered += 1
        if process.poll() is not None and not ready:
            break
    os.close(controller)
    if process.poll() is None:
        process.kill()
    return process.wait(timeout=30), seen
