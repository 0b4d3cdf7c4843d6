"""LocalWpCli / build_wp_cli: argv without a shell, timeouts, output caps (and the sandbox executor's shape)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from wp_agent.config import CliSettings
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.code_guard import GuardedWpCli, unguarded
from wp_agent.executors.environment import INHERITED
from wp_agent.executors.factory import build_wp_cli
from wp_agent.executors.local import LocalWpCli
from wp_agent.executors.port import OUTPUT_LIMIT_BYTES, WpCli
from wp_agent.executors.sandbox import SandboxWpCli
from wp_agent.masking import command_label, mask_argv

STUB = Path(__file__).resolve().parents[1] / "fakes" / "wp_stub.py"
# A multi-word WP_CLI_BIN, as in `php /opt/wp-cli.phar`.
STUB_BIN = f"{shlex.quote(sys.executable)} {shlex.quote(str(STUB))}"


def _settings(**values: object) -> CliSettings:
    base: dict[str, object] = {"wp_local_path": None, "wp_agent_sandbox_site": None, "vps_host": None}
    base.update(values)
    return CliSettings(**base)  # type: ignore[arg-type]


def _running(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True, check=False)
    return [line for line in found.stdout.splitlines() if "pgrep" not in line]


def _wait_gone(marker: str, seconds: float = 5.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := _running(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.fixture
def wp(tmp_path: Path) -> LocalWpCli:
    return LocalWpCli(tmp_path, wp_cli_bin=STUB_BIN, timeout_seconds=10)


def test_runs_argv_without_a_shell_and_prepends_path(wp: LocalWpCli, tmp_path: Path) -> None:
    hostile = ["post", "update", "1", "--post_title=a; touch /tmp/x && $(id) `id` | cat > y"]
    result = wp.run(hostile)
    assert result.exit_code == 0
    assert result.ok
    assert json.loads(result.stdout) == [f"--path={tmp_path}", *hostile]
    assert not result.truncated
    assert result.duration_ms >= 0


def test_command_line_splits_a_multi_word_binary(tmp_path: Path) -> None:
    wp = LocalWpCli(tmp_path, wp_cli_bin="php /opt/wp-cli.phar")
    assert wp.command_line(["post", "list"]) == [
        "php",
        "/opt/wp-cli.phar",
        f"--path={tmp_path}",
        "post",
        "list",
    ]
    assert wp.max_concurrency == 5
    assert wp.simulated is False


def test_the_configured_wordpress_user_goes_on_every_command(tmp_path: Path) -> None:
    wp = unguarded(
        build_wp_cli(_settings(wp_cli_mode="local", wp_local_path=tmp_path, wp_agent_wp_user="editor1"))
    )
    assert isinstance(wp, LocalWpCli)
    assert wp.command_line(["post", "list"]) == ["wp", f"--path={tmp_path}", "--user=editor1", "post", "list"]
    assert "--user=editor1" not in LocalWpCli(tmp_path).command_line(["post", "list"])


@pytest.mark.parametrize("bad", ["-x", " admin", "admin\n", "a\x00b", "x" * 101])
def test_a_wordpress_user_setting_that_is_not_a_login_is_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError, match="WordPress user"):
        _settings(wp_agent_wp_user=bad)


def test_wp_cli_gets_a_minimal_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent_secrets = {
        "ANTHROPIC_API_KEY": "sk-ant-api03-secret",
        "AWS_ACCESS_KEY_ID": "AKIAABCDEFGHIJKLMNOP",
        "AWS_SECRET_ACCESS_KEY": "aws-secret",
        "AWS_SESSION_TOKEN": "session",
        "VAULT_TOKEN": "hvs.x",
        "VPS_SSH_PRIVATE_KEY": "key",
        "WP_AGENT_POLICY_RULES": "{}",
        "WP_CLI_STRICT_ARGS_MODE": "1",
        "DB_PASSWORD": "from-the-shell",
    }
    for name, value in agent_secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LANG", "ja_JP.UTF-8")
    monkeypatch.setenv("WORDPRESS_DB_HOST", "localhost:/run/mysqld.sock")
    wp = build_wp_cli(
        _settings(
            wp_cli_mode="local",
            wp_local_path=tmp_path,
            wp_cli_bin=STUB_BIN,
            wp_agent_local_env_passthrough="WORDPRESS_DB_HOST",
        )
    )
    env = json.loads(wp.run(["--stub-env"]).stdout)
    assert not set(agent_secrets) & set(env)
    assert env["LANG"] == "ja_JP.UTF-8"
    assert env["WORDPRESS_DB_HOST"] == "localhost:/run/mysqld.sock"
    assert env["PATH"]
    assert set(env) <= {*INHERITED, "WORDPRESS_DB_HOST", "WP_CLI_ALLOW_ROOT"}


@pytest.mark.parametrize("names", ["ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "X,MY_TOKEN", "bad name"])
def test_agent_credentials_cannot_be_passed_through(names: str) -> None:
    with pytest.raises(ValueError, match="cannot be passed"):
        _settings(wp_agent_local_env_passthrough=names)


def test_stdin_is_closed_so_prompts_fail_fast(wp: LocalWpCli) -> None:
    result = wp.run(["--stub-read-stdin"])
    assert result.stdout.strip() == "stdin-bytes=0"


def test_error_exit_and_stderr_are_reported(wp: LocalWpCli) -> None:
    result = wp.run(["post", "get", "999", "--stub-exit=1", "--stub-stderr=Error: Could not find the post."])
    assert result.exit_code == 1
    assert not result.ok
    assert result.stderr.strip() == "Error: Could not find the post."


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    marker = f"wpagent-local-{uuid.uuid4().hex}"
    wp = LocalWpCli(tmp_path, wp_cli_bin=STUB_BIN, timeout_seconds=0.5)
    with pytest.raises(WpAgentError) as caught:
        wp.run(["--stub-sleep=30", "--stub-child-sleep=30", f"--stub-marker={marker}"])
    assert caught.value.code is AgentErrorCode.COMMAND_TIMEOUT
    assert "0.5秒" in caught.value.message_ja
    assert _wait_gone(marker) == []


def test_output_is_capped_per_stream_and_reading_continues(tmp_path: Path) -> None:
    wp = LocalWpCli(tmp_path, wp_cli_bin=STUB_BIN, output_limit=1000)
    result = wp.run(["--stub-stdout-bytes=300000", "--stub-stderr-bytes=5000", "--stub-exit=3"])
    assert result.truncated
    assert len(result.stdout) == 1000
    assert len(result.stderr) == 1000
    # The command ran to completion: its own exit status, not a kill.
    assert result.exit_code == 3


def test_default_cap_is_ten_megabytes(wp: LocalWpCli) -> None:
    result = wp.run([f"--stub-stdout-bytes={OUTPUT_LIMIT_BYTES + 2_000_000}"])
    assert result.truncated
    assert len(result.stdout.encode()) == OUTPUT_LIMIT_BYTES
    assert result.exit_code == 0


def test_output_exactly_at_the_cap_is_not_truncated(tmp_path: Path) -> None:
    wp = LocalWpCli(tmp_path, wp_cli_bin=STUB_BIN, output_limit=4096)
    result = wp.run(["--stub-stdout-bytes=4096"])
    assert not result.truncated
    assert len(result.stdout) == 4096


def test_invalid_utf8_is_replaced(wp: LocalWpCli) -> None:
    result = wp.run(["--stub-raw-hex=ff41e381"])
    assert result.stdout == "\ufffdA\ufffd"


def test_missing_binary_is_a_clear_error(tmp_path: Path) -> None:
    wp = LocalWpCli(tmp_path, wp_cli_bin="/nonexistent/wp-cli-binary")
    with pytest.raises(WpAgentError) as caught:
        wp.run(["post", "list"])
    assert "WP_CLI_BIN" in caught.value.message_ja


def test_concurrent_runs_are_independent(wp: LocalWpCli) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=5) as pool:
        results = list(pool.map(lambda i: wp.run(["post", "get", str(i)]), range(10)))
    assert [json.loads(r.stdout)[-1] for r in results] == [str(i) for i in range(10)]


def test_local_mode_requires_wp_local_path() -> None:
    with pytest.raises(WpAgentError) as caught:
        build_wp_cli(_settings(wp_cli_mode="local"))
    assert "WP_LOCAL_PATH" in caught.value.message_ja


def test_factory_builds_local_with_settings(tmp_path: Path) -> None:
    built = build_wp_cli(_settings(wp_cli_mode="local", wp_local_path=tmp_path, wp_cli_timeout=1500))
    assert isinstance(built, GuardedWpCli)  # plugin and theme changes guarded
    wp = unguarded(built)
    assert isinstance(wp, LocalWpCli)
    unguarded_too = build_wp_cli(
        _settings(wp_cli_mode="local", wp_local_path=tmp_path, wp_agent_guard_code_changes=False)
    )
    assert isinstance(unguarded_too, LocalWpCli)
    assert wp.command_line(["cache", "flush"])[:2] == ["wp", f"--path={tmp_path}"]


def test_factory_ssh_mode_names_missing_settings() -> None:
    with pytest.raises(WpAgentError) as caught:
        build_wp_cli(_settings(wp_cli_mode="ssh"))
    assert caught.value.code is AgentErrorCode.SSH_CONNECTION_FAILED
    assert "VPS_HOST" in caught.value.message_ja
    with pytest.raises(WpAgentError) as caught:
        build_wp_cli(
            _settings(
                wp_cli_mode="ssh",
                vps_host="203.0.113.10",
                vps_ssh_key_path=None,
                vps_ssh_key_secret_arn=None,
                vps_ssh_key_secret_id=None,
                vps_ssh_key_vault_path=None,
                vps_ssh_private_key=None,
            )
        )
    assert "VPS_SSH_KEY_PATH" in caught.value.message_ja
    assert "VPS_SSH_KEY_SECRET_ARN" in caught.value.message_ja


def test_sandbox_executor_is_labelled_and_starts_nothing_until_used(tmp_path: Path) -> None:
    """Building the executor touches nothing; the real WordPress behind it is tested in
    tests/integration/test_sandbox.py."""
    wp = SandboxWpCli(tmp_path / "sb")
    assert wp.simulated is True
    assert wp.site.home == tmp_path / "sb"
    assert not (tmp_path / "sb").exists()


def test_executors_satisfy_the_port(tmp_path: Path) -> None:
    executors: list[WpCli] = [LocalWpCli(tmp_path), SandboxWpCli(tmp_path)]
    assert [e.simulated for e in executors] == [False, True]


def test_redaction_masks_secret_flags() -> None:
    argv = [
        "user",
        "create",
        "bob",
        "bob@example.com",
        "--user_pass=hunter2",
        "--password",
        "s3cret",
        "--role=author",
    ]
    assert mask_argv(argv) == [
        "user",
        "create",
        "bob",
        "bob@example.com",
        "--user_pass=***",
        "--password",
        "***",
        "--role=author",
    ]
    assert command_label(argv) == "user create bob"
    assert command_label(["--info"]) == "(none)"
