"""Entry point of the `wp-agent` console script."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from pydantic import ValidationError

from wp_agent import __version__
from wp_agent.cli import ask, check, evaluate, publish, sandbox, targets
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.config import Settings
from wp_agent.errors import ConfigurationError


class _Parser(argparse.ArgumentParser):
    """argparse with a Japanese lead line (argparse's own detail stays, it names the argument);
    subcommand parsers are made of this class too."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"入力エラー [USAGE_ERROR]: コマンドの指定が正しくありません（{message}）。", file=sys.stderr)
        print(f"使い方: {self.prog} --help", file=sys.stderr)
        raise SystemExit(ExitCode.USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = _Parser(
        prog="wp-agent",
        description="Argo Note WP-CLI Agent — 日本語の指示でWordPressを操作します",
    )
    parser.add_argument("--version", action="version", version=f"wp-agent {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="<command>")
    ask.add_parser(subparsers)
    check.add_parser(subparsers)
    evaluate.add_parser(subparsers)
    publish.add_parser(subparsers)
    sandbox.add_parser(subparsers)
    targets.add_parser(subparsers)
    return parser


_LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}


def _configure_logging(settings: Settings) -> None:
    """Our loggers at LOG_LEVEL on stderr (stdout stays for answers and --json); libraries at WARNING."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    # In a terminal the audit file already holds every record: only an explicit LOG_LEVEL turns on info logs.
    level = _LOG_LEVELS[settings.log_level.value] if "LOG_LEVEL" in os.environ else logging.WARNING
    logging.getLogger("wp_agent").setLevel(level)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = Settings()
        _configure_logging(settings)
        return int(args.handler(args, settings))
    except ConfigurationError as exc:
        print(f"設定エラー: {exc.message_ja}", file=sys.stderr)
        return ExitCode.CONFIGURATION
    except ValidationError as exc:
        fields = ", ".join(".".join(str(p) for p in e["loc"]).upper() for e in exc.errors())
        print(f"設定エラー: 環境変数の値が正しくありません: {fields}", file=sys.stderr)
        return ExitCode.CONFIGURATION
    except Exception as exc:
        if not _is_aws_error(exc):
            raise
        # `targets` (DynamoDB, Secrets Manager) and Bedrock: say what to check instead of a traceback.
        print(
            f"AWSエラー [AWS_UNAVAILABLE]: AWS の呼び出しに失敗しました（{type(exc).__name__}）。"
            "リージョン（AWS_DEFAULT_REGION）、認証情報と権限、設定した名前（テーブルなど）を確認してください。",
            file=sys.stderr,
        )
        return ExitCode.CONFIGURATION


def _is_aws_error(exc: Exception) -> bool:
    from botocore.exceptions import BotoCoreError, ClientError

    return isinstance(exc, BotoCoreError | ClientError)


if __name__ == "__main__":
    sys.exit(main())
