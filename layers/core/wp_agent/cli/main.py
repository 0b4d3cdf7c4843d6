"""Entry point of the `wp-agent` console script."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from pydantic import ValidationError

from wp_agent import __version__
from wp_agent.cli import (
    api,
    ask,
    check,
    doctor,
    evaluate,
    history,
    interrupts,
    logs,
    mcp,
    pending,
    publish,
    sandbox,
    targets,
    terminal,
    undo,
)
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.config import CliSettings, LocalSettings
from wp_agent.errors import ConfigurationError


class _JapaneseHelpFormatter(argparse.HelpFormatter):
    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, "使い方: " if prefix is None else prefix)


class _Parser(argparse.ArgumentParser):
    """argparse in Japanese: help, usage and section titles, and a Japanese lead line on errors
    (argparse's own detail stays, it names the argument); subcommand parsers are made of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _JapaneseHelpFormatter)
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
        if message:  # help, usage, version and argparse's own errors: through the one writer too
            terminal.stream_for(file).line(message, end="")

    def error(self, message: str) -> NoReturn:
        terminal.err.line(self.format_usage(), end="")
        terminal.err.line(f"入力エラー [USAGE_ERROR]: コマンドの指定が正しくありません（{message}）。")
        terminal.err.line(f"使い方: {self.prog} --help")
        raise SystemExit(ExitCode.USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = _Parser(
        prog="wp-agent",
        description="Argo Note WP-CLI Agent — 日本語の指示でWordPressを操作します",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"wp-agent {__version__}",
        help="バージョンを表示して終了します",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="<コマンド>")
    ask.add_parser(subparsers)
    check.add_parser(subparsers)
    doctor.add_parser(subparsers)
    pending.add_parsers(subparsers)
    history.add_parsers(subparsers)
    mcp.add_parser(subparsers)
    evaluate.add_parser(subparsers)
    publish.add_parser(subparsers)
    sandbox.add_parser(subparsers)
    targets.add_parser(subparsers)
    undo.add_parser(subparsers)
    api.add_parser(subparsers)
    return parser


_LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}


def _configure_logging(settings: LocalSettings) -> None:
    """Our loggers at LOG_LEVEL on stderr (stdout stays for answers and --json); libraries at WARNING."""
    # In a terminal the audit file already holds every record: only an explicit LOG_LEVEL turns on info logs.
    level = _LOG_LEVELS[settings.log_level.value] if "LOG_LEVEL" in os.environ else logging.WARNING
    logs.configure(level)


def main(argv: Sequence[str] | None = None) -> int:
    sys.excepthook = terminal.show_uncaught  # an unexpected error's traceback may quote data too
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except KeyboardInterrupt:
        interrupts.say_interrupted()
        return ExitCode.INTERRUPTED


def _run(args: argparse.Namespace) -> int:
    try:
        # Each command's own settings, validated before it starts (`mcp` needs no model settings).
        settings = getattr(args, "settings_class", CliSettings)()
        _configure_logging(settings)
        return int(args.handler(args, settings))
    except ConfigurationError as exc:
        terminal.err.line(f"設定エラー: {exc.message_ja}")
        return ExitCode.CONFIGURATION
    except ValidationError as exc:
        fields = "、".join(_setting_problem(error) for error in exc.errors())
        terminal.err.line(f"設定エラー: 環境変数の値が正しくありません: {fields}")
        return ExitCode.CONFIGURATION
    except Exception as exc:
        if not _is_aws_error(exc):
            raise
        # `targets` (DynamoDB, Secrets Manager) and Bedrock: say what to check instead of a traceback.
        terminal.err.line(
            f"AWSエラー [AWS_UNAVAILABLE]: AWS の呼び出しに失敗しました（{type(exc).__name__}）。"
            "リージョン（AWS_DEFAULT_REGION）、認証情報と権限、設定した名前（テーブルなど）を確認してください。"
        )
        return ExitCode.CONFIGURATION


def _setting_problem(error: Any) -> str:
    """`NAME（使える値: …）` from one pydantic error: the allowed values or range, never the value given
    (it may be a secret)."""
    name = ".".join(str(part) for part in error["loc"]).upper()
    context = error.get("ctx") or {}
    if "expected" in context:  # enums and literals: 'local', 'ssh' or 'sandbox'
        return f"{name}（使える値: {str(context['expected']).replace(' or ', ', ')}）"
    bounds = {"ge": "以上", "gt": "より大きい値", "le": "以下", "lt": "未満"}
    limits = [f"{context[key]}{word}" for key, word in bounds.items() if key in context]
    if limits:
        return f"{name}（{'・'.join(limits)}）"
    kinds = {"int_parsing": "整数", "float_parsing": "数値", "bool_parsing": "true / false"}
    if error.get("type") in kinds:
        return f"{name}（{kinds[error['type']]}で指定）"
    return name


def _is_aws_error(exc: Exception) -> bool:
    from botocore.exceptions import BotoCoreError, ClientError

    return isinstance(exc, BotoCoreError | ClientError)


if __name__ == "__main__":
    sys.exit(main())
