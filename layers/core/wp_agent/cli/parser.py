"""argparse in Japanese: help, usage and section titles, and a bad or unknown flag said as one Japanese
line (`入力エラー [USAGE_ERROR]: … 使い方: wp-agent ask --help`, exit 2; under `--json` also the JSON
failure on stdout). argparse's own English messages are translated here, pattern by pattern."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Any, NoReturn

from wp_agent.cli import failures, terminal
from wp_agent.program import NAME, command_name


class JapaneseHelpFormatter(argparse.HelpFormatter):
    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, "使い方: " if prefix is None else prefix)


_KINDS = {"int": "整数", "float": "数値"}

# argparse's messages (Python 3.11–3.13), most specific first; each match becomes Japanese.
_MESSAGES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (re.compile(r"invalid choice: (?P<value>.+?) \(choose from (?P<choices>.+)\)$"),
     lambda m: f"{m['value']} は選べません（選べるもの: {m['choices']}）"),
    (re.compile(r"invalid (?P<kind>\w+) value: (?P<value>.+)$"),
     lambda m: f"{m['value']} は{_KINDS.get(m['kind'], '正しい値')}ではありません"),
    (re.compile(r"expected one argument$"), lambda m: "値を1つ指定してください"),
    (re.compile(r"expected at most one argument$"), lambda m: "値は1つまでです"),
    (re.compile(r"expected at least one argument$"), lambda m: "値を1つ以上指定してください"),
    (re.compile(r"expected (?P<count>\d+) arguments?$"), lambda m: f"値を{m['count']}つ指定してください"),
    (re.compile(r"not allowed with argument (?P<other>.+)$"), lambda m: f"{m['other']} と同時には指定できません"),
    (re.compile(r"ignored explicit argument (?P<value>.+)$"), lambda m: f"値 {m['value']} は付けられません"),
    (re.compile(r"^unrecognized arguments: (?P<args>.+)$"), lambda m: f"知らない引数です: {m['args']}"),
    (re.compile(r"^the following arguments are required: (?P<args>.+)$"),
     lambda m: f"次の指定が必要です: {m['args']}"),
    (re.compile(r"^one of the arguments (?P<args>.+) is required$"),
     lambda m: f"{m['args']} のどれか1つを指定してください"),
    (re.compile(r"^ambiguous option: (?P<option>\S+) could match (?P<matches>.+)$"),
     lambda m: f"{m['option']} はあいまいです（候補: {m['matches']}）"),
    (re.compile(r"^unexpected option string: (?P<option>.+)$"), lambda m: f"{m['option']} は使えません"),
]  # fmt: skip
_ARGUMENT = re.compile(r"^argument (?P<name>.+?): (?P<message>.+)$", re.DOTALL)


def japanese_usage_error(message: str) -> str:
    """argparse's error message in Japanese (its argument names and values kept as they are)."""
    prefix = ""
    argument = _ARGUMENT.match(message)
    if argument is not None:
        prefix, message = f"{argument['name']}: ", argument["message"]
    for pattern, say in _MESSAGES:
        found = pattern.search(message)
        if found is not None:
            return prefix + say(found)
    return f"{prefix}コマンドの指定が正しくありません（{message}）"


class JapaneseParser(argparse.ArgumentParser):
    """Subcommand parsers are made of this class too (argparse passes the class on)."""

    json_errors = False  # `--json` was on the command line: a usage error is a JSON object too

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", JapaneseHelpFormatter)
        add_help = kwargs.pop("add_help", True)
        kwargs["add_help"] = False  # our own -h, with Japanese help
        super().__init__(*args, **kwargs)
        self._positionals.title = "引数"
        self._optionals.title = "オプション"
        if add_help:
            self.add_argument(
                "-h",
                "--help",
                action="help",
                default=argparse.SUPPRESS,
                help="このヘルプを表示して終了します",
            )

    def _print_message(self, message: str, file: Any = None) -> None:
        if message:  # help, usage and version: through the one writer too
            terminal.stream_for(file).line(message, end="")

    def error(self, message: str) -> NoReturn:
        command = command_name() + self.prog.removeprefix(NAME)  # the command that really runs here
        failure = failures.usage("USAGE_ERROR", f"{japanese_usage_error(message)}。使い方: {command} --help")
        raise SystemExit(failures.report(failure, as_json=self.json_errors))


def parser_class(*, json_errors: bool) -> type[JapaneseParser]:
    class Parser(JapaneseParser):
        pass

    Parser.json_errors = json_errors
    return Parser
