"""The doctor's model line: a warning from 60 days before the retirement date kept in the repo."""

from __future__ import annotations

from datetime import date

from wp_agent.cli.doctor import model_lifetime_check
from wp_agent.config import CliSettings


def _check(model: str, today: date) -> tuple[bool, str, str]:
    check = model_lifetime_check(CliSettings(anthropic_model=model), today)
    return check.ok, check.line(), check.warning


def test_sixty_days_before_retirement_the_line_warns() -> None:
    ok, line, warning = _check("claude-sonnet-4-5", date(2026, 10, 1))
    assert ok
    assert line.startswith("⚠ AIモデルの提供期間: claude-sonnet-4-5（提供終了予定 2026-11-30）")
    assert "あと60日" in warning


def test_earlier_there_is_nothing_to_warn_about() -> None:
    ok, line, warning = _check("claude-sonnet-4-5", date(2026, 9, 30))
    assert ok
    assert line.startswith("✓ ")
    assert warning == ""


def test_a_model_without_an_announced_date_passes_quietly() -> None:
    ok, line, warning = _check("claude-sonnet-5-5", date(2026, 11, 25))
    assert (ok, line, warning) == (True, "✓ AIモデルの提供期間: claude-sonnet-5-5", "")


def test_after_retirement_the_line_says_it_has_retired() -> None:
    ok, line, warning = _check("claude-sonnet-4-5", date(2026, 12, 1))
    assert ok
    assert line.startswith("⚠ AIモデルの提供期間: claude-sonnet-4-5（提供終了 2026-11-30）")
    assert "提供終了しています" in warning
