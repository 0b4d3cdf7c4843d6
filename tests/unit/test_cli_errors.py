"""Bad input and unreachable dependencies in the CLI: a stable code, a Japanese line, no traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import NoCredentialsError

from wp_agent.cli import targets
from wp_agent.cli.main import main


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # never reached by these tests
    for name in ("WP_CLI_MODE", "VPS_SSH_KEY_SECRET_ARN", "VPS_SSH_PRIVATE_KEY", "LOG_LEVEL"):
        monkeypatch.delenv(name, raising=False)


def test_an_unknown_subcommand_is_a_japanese_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["schedules"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "入力エラー [USAGE_ERROR]" in err
    assert "'schedules'" in err
    assert "wp-agent --help" in err


def test_a_flag_value_out_of_range_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--max-iterations", "0", "投稿一覧"]) == 2
    err = capsys.readouterr().err
    assert "入力エラー [VALIDATION_ERROR]: --max-iterations には 1〜50 の整数を指定してください。" in err
    assert "max_iterations" not in err


def test_an_unreachable_aws_is_explained_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class NoCredentials:
        def list(self) -> Any:
            raise NoCredentialsError

    monkeypatch.setenv("WP_AGENT_REGISTRY_TABLE", "wp-agent-registry")
    monkeypatch.setattr(targets, "_registry", lambda settings: NoCredentials())
    assert main(["targets", "list"]) == 5
    err = capsys.readouterr().err
    assert "AWSエラー [AWS_UNAVAILABLE]" in err
    assert "NoCredentialsError" in err
    assert "Traceback" not in err


def test_an_unreadable_ssh_key_file_stops_before_the_model_is_called(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("WP_CLI_MODE", "ssh")
    monkeypatch.setenv("VPS_HOST", "127.0.0.1")
    monkeypatch.setenv("VPS_SSH_KEY_PATH", str(tmp_path / "missing_key"))
    assert main(["ask", "投稿一覧"]) == 5
    assert "SSH秘密鍵ファイル" in capsys.readouterr().err


def test_a_local_wordpress_path_that_is_not_a_directory_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("WP_CLI_MODE", "local")
    monkeypatch.setenv("WP_LOCAL_PATH", str(tmp_path / "no-wordpress-here"))
    assert main(["ask", "投稿一覧"]) == 5
    assert "WP_LOCAL_PATH" in capsys.readouterr().err
