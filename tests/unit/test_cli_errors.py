"""Bad input and unreachable dependencies in the CLI: a stable code, a Japanese line, no traceback."""

from __future__ import annotations

import io
import json
import sys
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


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["ask", "--bogus", "x"], "知らない引数です: --bogus。使い方: "),
        (["ask"], "次の指定が必要です: 指示。"),
        (["ask", "--max-iterations", "many", "x"], "--max-iterations: 'many' は整数ではありません。"),
        (
            ["ask", "--site-url", "https://a.test/", "--site-id", "2", "x"],
            "--site-id: --site-url と同時には指定できません。",
        ),
        (["sandbox", "explode"], "'explode' は選べません（選べるもの: 'install', 'status'"),
        (["ask", "--user"], "--user: 値を1つ指定してください。"),
        (["sites", "add", "blog"], "--ssh --local のどれか1つを指定してください。"),
    ],
)
def test_bad_flags_are_one_japanese_line_with_the_commands_help(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    captured = capsys.readouterr()
    [line] = captured.err.strip().splitlines()
    assert line.startswith("入力エラー [USAGE_ERROR]: ")
    assert said in line
    assert f"wp-agent {argv[0]}" in line or "wp-agent --help" in line
    assert not any(word in line for word in ("usage:", "error:", "unrecognized", "required", "invalid"))
    assert captured.out == ""


def test_a_bad_flag_under_json_is_also_one_json_object_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["undo", "--json", "--bogus", "run_x"])
    document = json.loads(capsys.readouterr().out)
    assert document == {
        "success": False,
        "exitCode": 2,
        "error": {"code": "USAGE_ERROR", "message": document["error"]["message"]},
    }
    assert document["error"]["message"].startswith("知らない引数です: --bogus")


@pytest.mark.parametrize(
    ("argv", "exit_code", "code"),
    [
        (["approve", "--json", "apr_00000000000000000000"], 2, "APPROVAL_NOT_FOUND"),
        (["reject", "--json", "apr_00000000000000000000"], 2, "APPROVAL_NOT_FOUND"),
        (["undo", "--json", "run_00000000000000000000"], 2, "RUN_NOT_FOUND"),
        (["ask", "--json", "--max-iterations", "0", "x"], 2, "VALIDATION_ERROR"),
        (["ask", "--json", "--site", "nope", "x"], 2, "SITE_NOT_REGISTERED"),
        (["history", "--json", "--site", "nope"], 2, "SITE_NOT_REGISTERED"),
    ],
)
def test_every_refusal_prints_one_json_object_under_json(
    capsys: pytest.CaptureFixture[str], argv: list[str], exit_code: int, code: str
) -> None:
    assert main(argv) == exit_code
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert (document["success"], document["exitCode"], document["error"]["code"]) == (False, exit_code, code)
    assert captured.out.count("\n") == 1
    assert f"[{code}]" in captured.err


def test_an_instruction_that_is_not_utf8_has_its_own_message(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["ask", "下書き\udcff"]) == 2  # how Python hands over argv bytes that are not UTF-8
    assert "入力エラー [INVALID_ENCODING]: 指示が UTF-8 の文字列ではありません" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"\x82\xa0\x82\xa2")))  # Shift_JIS
    assert main(["ask", "-"]) == 2
    assert "[INVALID_ENCODING]" in capsys.readouterr().err


def test_an_empty_or_long_instruction_says_which(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"  \n")))
    assert main(["ask", "-"]) == 2
    assert "指示が空です" in capsys.readouterr().err
    assert main(["ask", "あ" * 8_001]) == 2
    assert "指示が長すぎます（8,001文字）。8,000文字以内にしてください。" in capsys.readouterr().err


def test_an_unexpected_error_is_still_one_json_object_then_its_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr("wp_agent.cli.site_choice.choose", broken)
    with pytest.raises(RuntimeError):  # the console script's excepthook prints its traceback
        main(["history", "--json"])
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert (document["exitCode"], document["error"]["code"]) == (1, "UNKNOWN_ERROR")
    assert captured.err.startswith("エラー [UNKNOWN_ERROR]: 予期しないエラーで終了しました")


def test_api_serve_without_its_extra_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An install without the [local] extra (pipx install wp-agent) has no moto: a setting, not a bug."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setitem(sys.modules, "moto", None)  # `import moto` raises ImportError
    assert main(["api", "serve", "--port", "0"]) == 5
    captured = capsys.readouterr()
    assert "pip install 'wp-agent[local]'" in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""


class _Served(BaseException):
    """Raised by a stand-in for the local stack: what api serve would serve, without serving it."""


@pytest.mark.timeout(60)  # a regression serves the sandbox instead, until stopped
def test_api_serve_site_is_a_registered_site_served_under_its_own_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--site NAME` means what it means for every command: a site of `sites add` (not a label given
    to the sandbox); an unregistered name is refused like anywhere else."""
    from wp_agent.cli import site_book
    from wp_agent.local_api import stack

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert main(["api", "serve", "--site", "blog", "--port", "0"]) == 2
    assert "サイト「blog」は登録されていません" in capsys.readouterr().err

    wordpress = tmp_path / "blog"
    wordpress.mkdir()
    blog = site_book.NamedSite(
        name="blog", kind="local", wp_path=str(wordpress), added_at="2026-12-05T00:00:00Z"
    )
    site_book.save(site_book.SiteBook(sites={"blog": blog}))

    def served(settings: Any, *, target_id: str, **_: Any) -> None:
        raise _Served(target_id, settings.wp_cli_mode.value, str(settings.wp_local_path))

    monkeypatch.setattr(stack, "LocalStack", served)
    with pytest.raises(_Served) as caught:
        main(["api", "serve", "--site", "blog", "--port", "0"])
    assert caught.value.args == ("blog", "local", str(wordpress))
