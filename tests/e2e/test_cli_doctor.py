"""`wp-agent doctor` and the checks `ask` makes before its first model call, run as a process the way
a new user would: the real sandbox, the real sshd rig, Bedrock and host-key misconfigurations."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import ScriptedAnthropicServer
from tests.fakes.cli import run_cli, run_cli_at
from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import TestWordPress
from tests.fakes.wordpress_fixtures import CURRENT, sandbox_environment
from wp_agent.sandbox import SandboxSite


def doctor_json(home: Path, **env: str) -> tuple[int, dict[str, Any]]:
    done = run_cli(home, "doctor", "--json", **env)
    return done.returncode, json.loads(done.stdout)


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["name"]: check for check in report["checks"]}


def test_doctor_on_the_sandbox_checks_everything_and_passes(tmp_path: Path, cli_sandbox: SandboxSite) -> None:
    code, report = doctor_json(tmp_path, ANTHROPIC_API_KEY="test-key", **sandbox_environment(cli_sandbox))
    assert code == 0, report
    assert report["ok"] is True
    checks = by_name(report)
    assert {"model.api_key", "sandbox", "wp.binary", "wp.wordpress", "wp.sites"} <= set(checks)
    assert checks["wp.binary"]["detail"] == "WP-CLI 2.10.0"
    assert "https://example.test/en/" in checks["wp.sites"]["detail"]


def test_doctor_in_a_terminal_style_lists_each_check_with_its_fix(
    tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    done = run_cli(tmp_path, "doctor", **sandbox_environment(cli_sandbox))  # no API key
    assert done.returncode == 5
    assert "✗ AIモデルの認証情報: ANTHROPIC_API_KEY が設定されていません" in done.stdout
    assert "対処: `export ANTHROPIC_API_KEY=sk-ant-...`" in done.stdout
    assert f"✓ WordPress: バージョン {CURRENT.version}" in done.stdout
    assert "Traceback" not in done.stderr


def test_doctor_over_ssh_reaches_the_remote_wp(
    tmp_path: Path, sshd_server: SshdRig, rig_site: TestWordPress
) -> None:
    code, report = doctor_json(tmp_path, ANTHROPIC_API_KEY="test-key", **sshd_server.environment())
    assert code == 0, report
    checks = by_name(report)
    assert checks["ssh.host_key"]["ok"]
    assert checks["wp.binary"]["detail"].startswith("WP-CLI 2.10")


def test_doctor_names_a_wrong_pinned_host_key(
    tmp_path: Path, sshd_server: SshdRig, rig_site: TestWordPress
) -> None:
    other = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
    env = {**sshd_server.environment(), "VPS_SSH_HOST_KEY": other}
    code, report = doctor_json(tmp_path, ANTHROPIC_API_KEY="test-key", **env)
    assert code == 5
    failed = [c for c in report["checks"] if not c["ok"]]
    assert [c["name"] for c in failed] == ["wp.connect"]
    assert "ホスト鍵が登録済みの鍵と一致しない" in failed[0]["fix"]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"WP_AGENT_MODEL_PROVIDER": "bedrock"}, "Amazon Bedrock のリージョン"),
        ({"WP_AGENT_MODEL_PROVIDER": "bedrock", "AWS_REGION": "ap-northeast-1"}, "Amazon Bedrock の認証情報"),
        ({"ANTHROPIC_API_KEY": "k", "WP_CLI_MODE": "ssh", "VPS_HOST": "127.0.0.1"}, "SSH秘密鍵"),
        (
            {"ANTHROPIC_API_KEY": "k", "WP_CLI_MODE": "local", "WP_LOCAL_PATH": "/nonexistent"},
            "WordPress のディレクトリ",
        ),
    ],
)
def test_ask_stops_on_configuration_before_the_model_with_exit_5(
    tmp_path: Path, scripted_anthropic: ScriptedAnthropicServer, env: dict[str, str], expected: str
) -> None:
    done = run_cli(tmp_path, "ask", "投稿一覧", ANTHROPIC_BASE_URL=scripted_anthropic.base_url, **env)
    assert done.returncode == 5, done.stderr
    assert done.stderr.startswith(f"設定エラー [CONFIGURATION_ERROR]: {expected}")
    assert "Traceback" not in done.stderr
    assert scripted_anthropic.request_count == 0


@pytest.mark.parametrize("host_key", ["", "not-a-key", "ssh-ed25519 AAAA%%%"])
def test_a_missing_or_malformed_host_key_is_exit_5_before_the_model(
    tmp_path: Path, scripted_anthropic: ScriptedAnthropicServer, sshd_server: SshdRig, host_key: str
) -> None:
    env = {**sshd_server.environment(), "VPS_SSH_HOST_KEY": host_key}
    done = run_cli(
        tmp_path,
        "ask",
        "投稿一覧",
        ANTHROPIC_API_KEY="k",
        ANTHROPIC_BASE_URL=scripted_anthropic.base_url,
        **env,
    )
    assert done.returncode == 5, done.stderr
    assert "ホスト鍵" in done.stderr
    assert "Traceback" not in done.stderr
    assert scripted_anthropic.request_count == 0


@pytest.mark.clock
@pytest.mark.parametrize(
    ("moment", "detail", "note"),
    [
        (datetime(2026, 10, 15, 12, tzinfo=UTC), "提供終了予定 2026-11-30", "に提供終了予定です（あと46日）"),
        (datetime(2027, 1, 4, 12, tzinfo=UTC), "提供終了 2026-11-30", "に提供終了しています"),
    ],
    ids=["before", "after"],
)
def test_doctor_warns_about_a_model_that_retires_without_failing(
    tmp_path: Path, cli_sandbox: SandboxSite, moment: datetime, detail: str, note: str
) -> None:
    """claude-sonnet-4-5 retires on 2026-11-30 (model_catalog.json): a warning, not a failure, in the
    60 days before that date and after it, whatever day the test runs (the process's clock is set)."""
    env = {
        **sandbox_environment(cli_sandbox),
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_MODEL": "claude-sonnet-4-5",
    }
    done = run_cli_at(moment, tmp_path, "doctor", "--json", **env)
    retirement = by_name(json.loads(done.stdout))["model.retirement"]
    assert retirement["ok"] is True
    assert retirement["detail"] == f"claude-sonnet-4-5（{detail}）"
    assert done.returncode == 0, done.stdout
    done = run_cli_at(moment, tmp_path, "doctor", **env)
    assert f"⚠ AIモデルの提供期間: claude-sonnet-4-5（{detail}）" in done.stdout
    assert f"注意: モデル「claude-sonnet-4-5」は 2026-11-30 {note}" in done.stdout
