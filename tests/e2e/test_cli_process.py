"""The tests' `wp-agent` processes forked from the test's process (tests/fakes/cli_process.py) answer as
a new interpreter does: the same exit code, stdout and stderr, whatever the test's process had set."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import warnings
from pathlib import Path

import pytest

from tests.fakes.cli_process import NEW_INTERPRETER_ENV, run_wp_agent
from wp_agent.policy import host_resolution

CASES = {
    "version": ["--version"],
    "a read that runs": ["check", "--json", "--", "post list --post_status=draft"],
    "a refused command": ["check", "--", "eval 'phpinfo();'"],
    "a fetch from a name this machine cannot resolve": [
        "check", "--json", "--", "post create --post_title=a --post_content='[embed]https://www.youtube.com/watch?v=x[/embed]'",
    ],
    "an unknown flag": ["history", "--no-such-flag"],
    "no model settings": ["ask", "投稿一覧"],
    "no sites yet": ["sites", "list"],
}  # fmt: skip


@pytest.mark.parametrize("args", CASES.values(), ids=CASES.keys())
def test_a_forked_run_answers_as_a_new_interpreter(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "WP_CLI_MODE": "sandbox"}
    # What this test's process has and a new one would not: its own variables, a warning filter that
    # turns warnings into errors, the tests' name lookups (conftest), a handler on the root logger.
    monkeypatch.setenv("WP_AGENT_AUDIT_FILE", str(tmp_path / "leaked-audit.jsonl"))
    assert host_resolution.system_resolver("www.youtube.com") is not None  # the documentation zone
    monkeypatch.setattr(logging.root, "handlers", [logging.StreamHandler(io.StringIO())])
    monkeypatch.setattr(logging.root, "level", logging.DEBUG)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        forked = run_wp_agent(args, env=env, timeout=60)
    monkeypatch.setenv(NEW_INTERPRETER_ENV, "1")
    spawned = run_wp_agent(args, env=env, timeout=60)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        spawned.returncode,
        spawned.stdout,
        spawned.stderr,
    )
    assert not (tmp_path / "leaked-audit.jsonl").exists()


def test_a_forked_run_reads_its_input_as_a_new_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "ANTHROPIC_API_KEY": "test-key"}
    instruction = "下書きを一覧で見せて\n" * 20_000  # more than a pipe holds: written while the child reads
    forked = run_wp_agent(["ask", "--json", "-"], env=env, stdin_text=instruction, timeout=60)
    monkeypatch.setenv(NEW_INTERPRETER_ENV, "1")
    spawned = run_wp_agent(["ask", "--json", "-"], env=env, stdin_text=instruction, timeout=60)
    assert forked.returncode == spawned.returncode == 2  # longer than an instruction may be
    assert forked.stdout == spawned.stdout


def test_a_forked_run_is_ended_at_its_timeout(tmp_path: Path) -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        run_wp_agent(["--version"], env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)}, timeout=0)
