"""When the model API cannot be used, `wp-agent ask` says so as every fixable failure is said: one line on
stderr (nothing on stdout), a wrong or unauthorised key a setting (exit 5), an outage a failure (exit 1)
after its retries — each retry announced before its wait, so nobody watches a silent terminal."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.anthropic_server import ScriptedAnthropicServer, auth_error, overloaded
from tests.fakes.cli import run_cli, sandbox_run_env
from wp_agent.sandbox import SandboxSite


def test_a_key_the_api_refuses_is_a_setting_to_fix(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    scripted_anthropic.enqueue(auth_error())
    done = run_cli(
        tmp_path,
        "ask",
        "投稿一覧を見せて",
        **sandbox_run_env(scripted_anthropic, tmp_path, cli_sandbox, ANTHROPIC_API_KEY="sk-ant-wrong"),
    )
    assert done.returncode == 5, done.stderr
    assert done.stdout == ""
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith("設定エラー [API_ERROR]: APIキーが無効か、権限がありません。")
    )
    assert "sk-ant-wrong" not in done.stderr
    assert scripted_anthropic.request_count == 1  # a refused key is not retried


def test_an_outage_is_retried_aloud_then_one_line_on_stderr(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    scripted_anthropic.enqueue(overloaded(), overloaded(), overloaded(), overloaded())
    env = sandbox_run_env(scripted_anthropic, tmp_path, cli_sandbox, ANTHROPIC_API_KEY="sk-ant-wrong")
    done = run_cli(tmp_path, "ask", "--json", "投稿一覧を見せて", **env)
    assert done.returncode == 1
    retries = [line for line in done.stderr.splitlines() if "秒後に再試行します" in line]
    assert retries == [
        f"AIモデルを呼び出せませんでした（HTTP 529）。0秒後に再試行します（{n}/3回目）…" for n in (1, 2, 3)
    ]
    assert scripted_anthropic.request_count == 4
    scripted_anthropic.enqueue(overloaded(), overloaded(), overloaded(), overloaded())
    plain = run_cli(tmp_path, "ask", "投稿一覧を見せて", **env)
    assert (plain.returncode, plain.stdout) == (1, "")
    assert (
        plain.stderr.strip()
        .splitlines()[-1]
        .startswith("エラー [API_ERROR]: AIモデルのサービスが一時的に利用できません")
    )
