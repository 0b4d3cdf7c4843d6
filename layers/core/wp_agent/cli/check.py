"""`wp-agent check`: show what the policy decides for a command, without running it."""

from __future__ import annotations

import argparse
import json
import re
import shlex

from wp_agent.cli import failures, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.config import CliSettings
from wp_agent.policy import CommandPolicy
from wp_agent.program import command_name

_ONLY_OPERATORS = re.compile(r"^[;&|<>()]+$")
_NEEDS_QUOTING = re.compile(r"[\s;&|<>()'\"]")


def command_from_words(words: list[str]) -> str:
    """One word is the command text as the model would write it. Several words are joined as typed:
    words made only of operators stay operators, words with spaces or operator characters are
    double-quoted (so `$(` and backticks inside them are still seen), everything else is bare."""
    if len(words) == 1:
        return words[0]
    parts: list[str] = []
    for word in words:
        if _ONLY_OPERATORS.match(word) or not _NEEDS_QUOTING.search(word):
            parts.append(word)
        else:
            parts.append('"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return " ".join(parts)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "check",
        help="コマンドがポリシーで許可・承認待ち・ブロックのどれになるかを表示します（実行はしません）",
        description="WP-CLI のコマンドをポリシーで判定します（実行はしません）。使い方: wp-agent check [--json] -- '<コマンド>'",
    )
    parser.add_argument("--json", action="store_true", help="判定結果を JSON で標準出力に出します")
    parser.add_argument(
        "--exit-code",
        action="store_true",
        help="終了コードで結果を返します（0 許可、3 承認が必要、4 ブロック）",
    )
    parser.add_argument(
        "words", nargs=argparse.REMAINDER, help="判定するコマンド（例: -- 'post list --format=json'）"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: CliSettings) -> int:
    words = list(args.words[1:] if args.words[:1] == ["--"] else args.words)
    if not words:
        raise failures.usage(
            "USAGE_ERROR", f"判定するコマンドを指定してください。例: {command_name()} check -- 'post list'"
        )
    decision = CommandPolicy.from_settings(settings).classify(command_from_words(words))
    if args.json:
        terminal.out.json(json.dumps(decision.check_json(), ensure_ascii=False))
    else:
        shown = decision.check_json()
        terminal.out.line(f"判定: {decision.decision}（{decision.category.value}）")
        terminal.out.line(f"理由: {shown['reason']}")
        terminal.out.line(f"ルール: {decision.rule}")
        if decision.argv:
            terminal.out.line(f"実行引数: wp {shlex.join(shown['argv'])}")
    if not args.exit_code:
        return ExitCode.OK
    return {"allow": ExitCode.OK, "confirm": ExitCode.AWAITING_APPROVAL, "block": ExitCode.BLOCKED}[
        decision.decision
    ]
