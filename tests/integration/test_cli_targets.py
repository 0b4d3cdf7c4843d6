"""`wp-agent targets` against moto: validation first, the secret created under the prefix, no duplicates."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest

from tests.fakes.aws import REGION
from wp_agent.cli.main import main

pytestmark = pytest.mark.usefixtures("aws")


def test_add_creates_the_secret_and_registers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = tmp_path / "id_ed25519"
    key.write_text(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n", encoding="utf-8"
    )
    code = main([
        "targets", "add", "--id", "blog-prod", "--host", "wp.example.com", "--user", "wpagent",
        "--private-key-file", str(key), "--host-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample", "--owner", "user-1",
    ])  # fmt: skip
    assert code == 0
    assert "登録しました" in capsys.readouterr().out
    secret = json.loads(
        boto3.client("secretsmanager", region_name=REGION).get_secret_value(
            SecretId="wp-agent/targets/blog-prod"
        )["SecretString"]
    )
    assert secret["hostKey"].startswith("ssh-ed25519 ")
    assert "PRIVATE KEY" in secret["privateKey"]

    assert main(["targets", "get", "blog-prod", "--json"]) == 0
    target = json.loads(capsys.readouterr().out)
    assert target["owners"] == ["user-1"]
    assert ":secret:wp-agent/targets/blog-prod" in target["secretArn"]
    assert "AAAA" not in json.dumps(target)  # the key stays in the secret

    assert (
        main(
            [
                "targets",
                "add",
                "--id",
                "blog-prod",
                "--host",
                "h.example",
                "--secret-arn",
                target["secretArn"],
                "--owner",
                "u",
            ]
        )
        == 1
    )
    assert main(["targets", "list"]) == 0
    assert "blog-prod: wpagent@wp.example.com:22" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args",
    [
        [
            "--id",
            "Bad Id",
            "--host",
            "h.example",
            "--secret-arn",
            "arn:aws:secretsmanager:ap-northeast-1:1:secret:wp-agent/targets/x",
            "--owner",
            "u",
        ],
        [
            "--id",
            "ok-id",
            "--host",
            "h.example",
            "--secret-arn",
            "arn:aws:secretsmanager:ap-northeast-1:1:secret:prod/db",
            "--owner",
            "u",
        ],
        [
            "--id",
            "ok-id",
            "--host",
            "bad host!",
            "--secret-arn",
            "arn:aws:secretsmanager:ap-northeast-1:1:secret:wp-agent/targets/x",
            "--owner",
            "u",
        ],
    ],
)
def test_bad_input_registers_nothing(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["targets", "add", *args]) == 2
    assert "エラー" in capsys.readouterr().err
    assert main(["targets", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_missing_table_setting_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("WP_AGENT_REGISTRY_TABLE")
    assert main(["targets", "list"]) == 5
    assert "WP_AGENT_REGISTRY_TABLE" in capsys.readouterr().err
