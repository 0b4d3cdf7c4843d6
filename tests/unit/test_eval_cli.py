"""`wp-agent eval` refuses what it cannot do, before touching any site or model."""

from __future__ import annotations

from pathlib import Path

import pytest

from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.main import main


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("WP_CLI_MODE", "local")
    monkeypatch.setenv("WP_LOCAL_PATH", str(tmp_path))


def test_eval_runs_only_on_the_sandbox(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--tasks", "list-drafts"]) == ExitCode.CONFIGURATION
    assert "サンドボックスでのみ実行できます" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "says"), [(["--trials", "0"], "--trials"), (["--fail-under", "2"], "--fail-under")]
)
def test_bad_numbers_are_usage_errors(args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", *args]) == ExitCode.USAGE
    assert says in capsys.readouterr().err


def test_an_unknown_task_pattern_or_result_file_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "--tasks", "no-such-task"]) == ExitCode.CONFIGURATION
    assert "一致する評価タスクがありません" in capsys.readouterr().err
    (tmp_path / "x.json").write_text("{}", encoding="utf-8")
    assert (
        main(["eval", "--compare", str(tmp_path / "x.json"), str(tmp_path / "x.json")])
        == ExitCode.CONFIGURATION
    )
    assert "評価結果のファイルを読めません" in capsys.readouterr().err
