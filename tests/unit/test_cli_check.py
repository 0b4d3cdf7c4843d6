"""`wp-agent check`: the JSON document, word joining, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from wp_agent.cli.check import command_from_words
from wp_agent.cli.main import main


def run_check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    return code, capsys.readouterr().out


def test_json_output_is_exactly_the_documented_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_check(capsys, "--json", "--", "post delete 45")
    assert code == 0
    assert json.loads(out) == {
        "decision": "confirm",
        "category": "destructive",
        "reason": "投稿の削除は取り消せない、または影響の大きい操作のため、依頼者の承認が必要です",
        "rule": "confirm.post.delete",
        "argv": ["post", "delete", "45"],
    }


@pytest.mark.parametrize(
    ("command", "decision"),
    [("post list --format=json", "allow"), ("db drop", "block"), ("theme activate x", "confirm")],
)
def test_decisions(capsys: pytest.CaptureFixture[str], command: str, decision: str) -> None:
    _, out = run_check(capsys, "--json", "--", command)
    assert json.loads(out)["decision"] == decision


def test_exit_code_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_check(capsys, "--exit-code", "--", "post list")[0] == 0
    assert run_check(capsys, "--exit-code", "--", "post delete 1")[0] == 3
    assert run_check(capsys, "--exit-code", "--", "db drop")[0] == 4


def test_human_output_is_japanese_and_masks_secrets(capsys: pytest.CaptureFixture[str]) -> None:
    _, out = run_check(capsys, "--", "user create bob b@x.com --role=subscriber --user_pass=hunter2")
    assert "判定: confirm" in out  # a new login waits for approval
    assert "ログインできる新しいアカウント" in out
    assert "hunter2" not in out


def test_missing_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--json"]) == 2


def test_several_words_are_joined_as_typed() -> None:
    assert command_from_words(["post", "list", ";", "rm"]) == "post list ; rm"
    assert command_from_words(["post", "create", "--post_title=A & B"]) == 'post create "--post_title=A & B"'
    assert (
        command_from_words(["post", "create", "--post_content=<p>x</p>"])
        == 'post create "--post_content=<p>x</p>"'
    )
    assert (
        command_from_words(["post", "create", "--post_title=$(id) x"]) == 'post create "--post_title=$(id) x"'
    )


def test_console_script_runs_in_a_subprocess() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "wp_agent.cli.main", "check", "--json", "--", "eval 'phpinfo();'"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0
    assert json.loads(completed.stdout)["rule"] == "blocked.code_execution"


def test_role_refuses_what_it_does_not_cover(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_check(
        capsys, "--json", "--role", "editor", "--exit-code", "--", "plugin activate akismet"
    )
    document = json.loads(out)
    assert code == 4
    assert (document["decision"], document["rule"]) == ("block", "role.insufficient")
    assert (document["role"], document["roleNeeded"]) == ("editor", "admin")
    assert "管理者（admin）" in document["reason"]
    code, out = run_check(capsys, "--json", "--role", "editor", "--", "post update 45 --post_title=x")
    assert (json.loads(out)["decision"], json.loads(out)["roleNeeded"]) == ("allow", "editor")


def test_role_alone_shows_what_it_may_do(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_check(capsys, "--json", "--role", "viewer")
    assert code == 0
    assert json.loads(out)["writes"] == []
    _, out = run_check(capsys, "--role", "editor")
    assert "編集者（editor）ができること" in out
    assert "post" in out
    assert "plugin" in out.split("読み取りのみ:")[1]


def test_an_unknown_role_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["check", "--role", "author", "--", "post list"])
    assert exited.value.code == 2
