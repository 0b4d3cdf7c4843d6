"""The CLI speaks Japanese: every `--help` (argparse's own words included) and every invalid
setting names what is allowed."""

from __future__ import annotations

import argparse
import re

import pytest

from wp_agent.cli.main import build_parser, main

JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def all_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found += all_parsers(child)
    return found


PARSERS = all_parsers(build_parser())


@pytest.mark.parametrize("parser", PARSERS, ids=[p.prog for p in PARSERS])
def test_help_is_japanese(parser: argparse.ArgumentParser) -> None:
    text = parser.format_help()
    for english in ("usage:", "options:", "positional arguments", "show this help", "version number"):
        assert english not in text, text
    assert text.startswith("使い方: ")
    for action in parser._actions:
        if action.help not in (None, argparse.SUPPRESS):
            assert JAPANESE.search(str(action.help)), f"{parser.prog} {action.option_strings}: {action.help}"
    if parser.description:
        assert JAPANESE.search(parser.description), parser.description


def test_every_command_is_listed() -> None:
    commands = {p.prog.removeprefix("wp-agent ") for p in PARSERS}
    expected = {"ask", "approve", "reject", "check", "doctor", "history", "show", "publish", "sandbox"}
    assert expected <= commands


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("WP_CLI_MODE", "remote", "WP_CLI_MODE（使える値: 'local', 'ssh', 'sandbox'）"),
        ("LOG_LEVEL", "verbose", "LOG_LEVEL（使える値: 'debug', 'info', 'warn', 'error'）"),
        ("WP_AGENT_MODEL_PROVIDER", "openai", "WP_AGENT_MODEL_PROVIDER（使える値: 'anthropic', 'bedrock'）"),
        ("AGENT_MAX_ITERATIONS", "99", "AGENT_MAX_ITERATIONS（50以下）"),
        ("VPS_PORT", "twenty-two", "VPS_PORT（整数で指定）"),
    ],
)
def test_an_invalid_setting_lists_what_is_allowed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str, value: str, allowed: str
) -> None:
    monkeypatch.setenv(name, value)
    assert main(["history"]) == 5
    err = capsys.readouterr().err
    assert err.startswith("設定エラー [INVALID_SETTING]: 環境変数の値が正しくありません: ")
    assert allowed in err
