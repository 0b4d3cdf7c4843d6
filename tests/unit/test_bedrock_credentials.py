"""Amazon Bedrock credentials that cannot sign a request: a Japanese line with its fix, before any call
when the CLI can tell (exit 5), or as the run's API_ERROR when signing itself fails (never a botocore
traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wp_agent.agent.model_client import AnthropicModelClient
from wp_agent.cli.main import main
from wp_agent.config import CliSettings
from wp_agent.errors import AgentErrorCode, WpAgentError


@pytest.fixture(autouse=True)
def aws_without_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in (
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "ANTHROPIC_API_KEY",
        "LOG_LEVEL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_REGION", "ap-northeast-1")
    monkeypatch.setenv("WP_AGENT_MODEL_PROVIDER", "bedrock")


def test_half_a_key_pair_fails_at_signing_as_an_api_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
    client = AnthropicModelClient(CliSettings())
    with pytest.raises(WpAgentError) as caught:
        client.create(system=[], tools=[], messages=[{"role": "user", "content": "こんにちは"}])
    assert caught.value.code is AgentErrorCode.API_ERROR
    assert caught.value.details == {"reason": "BEDROCK_SIGNING_FAILED", "type": "PartialCredentialsError"}
    assert "署名できませんでした（PartialCredentialsError）" in caught.value.message_ja
    assert caught.value.__cause__ is None  # botocore's message (English, may name files) stays out


@pytest.mark.parametrize(
    ("variable", "value", "kind"),
    [
        ("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE", "PartialCredentialsError"),
        ("AWS_PROFILE", "gone", "ProfileNotFound"),
    ],
)
def test_ask_says_it_in_one_line_before_any_call(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variable: str, value: str, kind: str
) -> None:
    monkeypatch.setenv(variable, value)
    assert main(["ask", "投稿一覧"]) == 5
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("設定エラー [CONFIGURATION_ERROR]: Amazon Bedrock の認証情報: ")
    assert f"AWS の認証情報を読めません（{kind}）" in line
    assert "AWS_PROFILE" in line
