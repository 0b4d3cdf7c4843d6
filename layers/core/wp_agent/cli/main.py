"""Entry point of the `wp-agent` console script."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from wp_agent import __version__
from wp_agent.cli import (
    api,
    ask,
    check,
    doctor,
    evaluate,
    failures,
    fleet,
    history,
    interrupts,
    logs,
    mcp,
    pending,
    publish,
    sandbox,
    site_choice,
    sites,
    targets,
    terminal,
    undo,
)
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.parser import parser_class
from wp_agent.config import CliSettings, LocalSettings
from wp_agent.errors import ConfigurationError, WpAgentError


def build_parser(*, json_errors: bool = False) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = parser_class(json_errors=json_errors)(
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
    fleet.add_parser(subparsers)
    publish.add_parser(subparsers)
    sandbox.add_parser(subparsers)
    sites.add_parser(subparsers)
    targets.add_parser(subparsers)
    undo.add_parser(subparsers)
    api.add_parser(subparsers)
    return parser


_LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}


def _configure_logging(settings: LocalSettings) -> None:
    """Log lines on stderr (stdout stays for answers and --json) only when LOG_LEVEL asks for them: a
    person sees one Japanese line per failure, not the libraries' warnings and tracebacks."""
    logs.configure(_LOG_LEVELS[settings.log_level.value] if "LOG_LEVEL" in os.environ else None)


def _innermost(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command parser that parsed the last command word (`wp-agent sites add`: add's)."""
    while True:
        chosen = None
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(args, action.dest, None) or "")
        if chosen is None:
            return parser
        parser = chosen


def _wants_json(arguments: list[str]) -> bool:
    options = arguments[: arguments.index("--")] if "--" in arguments else arguments
    return "--json" in options


_UNEXPECTED = (
    "予期しないエラーで終了しました（wp-agent の不具合です）。下に続く内容を添えて報告してください。"
)


def main(argv: Sequence[str] | None = None) -> int:
    sys.excepthook = terminal.show_uncaught  # an unexpected error's traceback may quote data too
    interrupts.let_ctrl_c_through()  # every prompt and wait answers Ctrl-C (exit 130)
    arguments = list(sys.argv[1:] if argv is None else argv)
    as_json = _wants_json(arguments)
    parser = build_parser(json_errors=as_json)
    args, unknown = parser.parse_known_args(arguments)
    if unknown:  # said by the command's own parser, so the hint names its help
        _innermost(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return _run(args, as_json=as_json)
    except KeyboardInterrupt:
        interrupts.say_interrupted()
        if as_json:
            document = failures.failure_document(
                ExitCode.INTERRUPTED, "INTERRUPTED", interrupts.interrupted_message()
            )
            terminal.out.json(json.dumps(document, ensure_ascii=False))
        return ExitCode.INTERRUPTED
    except Exception:  # a bug: said in one line (one object under --json), then its traceback on stderr
        failures.report(failures.CliError(ExitCode.FAILED, "UNKNOWN_ERROR", _UNEXPECTED), as_json=as_json)
        raise


def _run(args: argparse.Namespace, *, as_json: bool) -> int:
    try:
        logs.configure(None)  # until the settings are read: nothing but our own Japanese lines
        # Each command's own settings, validated before it starts (`mcp` needs no model settings).
        choice = site_choice.choose(args, getattr(args, "settings_class", CliSettings))
        _configure_logging(choice.settings)
        if choice.notice:
            terminal.err.line(choice.notice)
        args.site_choice = choice
        return int(args.handler(args, choice.settings))
    except failures.CliError as refused:
        return failures.report(refused, as_json=as_json)
    except ConfigurationError as exc:
        return failures.report(failures.configuration(exc.code, exc.message_ja), as_json=as_json)
    except ValidationError as exc:
        fields = "、".join(_setting_problem(error) for error in exc.errors())
        return failures.report(
            failures.configuration("INVALID_SETTING", f"環境変数の値が正しくありません: {fields}"),
            as_json=as_json,
        )
    except WpAgentError as exc:  # a command that did not say it itself: its code and Japanese message
        said = failures.CliError(ExitCode.FAILED, exc.code.value, exc.message_ja, error_details=exc.details)
        return failures.report(said, as_json=as_json)
    except Exception as exc:
        if not _is_aws_error(exc):
            raise
        # `targets` (DynamoDB, Secrets Manager) and Bedrock: say what to check instead of a traceback.
        aws_failure = failures.configuration(
            "AWS_UNAVAILABLE",
            f"AWS の呼び出しに失敗しました（{type(exc).__name__}）。"
            "リージョン（AWS_DEFAULT_REGION）、認証情報と権限、設定した名前（テーブルなど）を確認してください。",
            label="AWSエラー",
        )
        return failures.report(aws_failure, as_json=as_json)


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
