"""Every guarded change's approval says the guard's plan, and what it keeps to go back: the files and
active extensions, the languages folder and the site's language, or core's files; the site's options (the
whole database for another branch of core)."""

from __future__ import annotations

import pytest

from wp_agent.command_line.code_changes import CODE_CHANGES, LANGUAGE_CHANGES
from wp_agent.policy import CommandPolicy
from wp_agent.policy.approval_summary import describe

POLICY = CommandPolicy()
SAMPLES = {
    "plugin update akismet": "対象のファイル・サイトの設定（オプション）・有効なプラグインとテーマ",
    "theme activate twentytwentyfour": "対象のファイル・サイトの設定（オプション）・有効なプラグインとテーマ",
    "language core update": "languages フォルダ全体",
    "language core install de_DE --activate": "languages フォルダ全体",
    "site switch-language de_DE": "languages フォルダ全体",
    "core update": "ファイルとデータベース",
    "core update --minor": "自動でファイルと設定を変更前の版に戻し",
}


@pytest.mark.parametrize("command", list(SAMPLES))
def test_the_approval_says_what_the_guard_keeps(command: str) -> None:
    decision = POLICY.classify(command)
    assert decision.needs_approval, decision
    _, impact = describe(decision, None)
    assert "実行の手順" in impact
    assert SAMPLES[command] in impact


def test_every_language_change_is_a_guarded_code_change() -> None:
    assert LANGUAGE_CHANGES <= CODE_CHANGES


def test_updating_all_runs_one_update_per_name_unless_a_name_would_read_as_an_option() -> None:
    """`plugin update --all` becomes one guarded update per plugin WordPress offers one for; the names are
    the site's, so a folder named like an option (`--url=…`) makes the command run as asked, whole."""
    from collections.abc import Sequence

    from wp_agent.executors.code_guard import Guarded, GuardedWpCli
    from wp_agent.executors.port import CommandResult

    class Offering:
        def __init__(self, names: str) -> None:
            self.names = names

        def run(self, argv: Sequence[str]) -> CommandResult:
            return CommandResult(self.names, "", 0, 1)

    argv = ["plugin", "update", "--all", "--minor", "--exclude=b"]
    change = Guarded.of(argv)
    assert change is not None
    guard = GuardedWpCli(Offering("a\nb\nc\n"), None)  # type: ignore[arg-type]
    assert guard._one_by_one(argv, change) == [
        ["plugin", "update", "a", "--minor"],
        ["plugin", "update", "c", "--minor"],
    ]
    guard = GuardedWpCli(Offering("a\n--url=https://elsewhere.example/\n"), None)  # type: ignore[arg-type]
    assert guard._one_by_one(argv, change) is None
