"""A failure a person caused or can fix, said once at the CLI's edge: one Japanese line on stderr
(`入力エラー [CODE]: what happened and what to do`), and under `--json` one JSON object on stdout
(`{"success": false, "exitCode": N, "error": {"code", "message", "details"?}}`, plus what a script needs to
follow up, such as `runId`), with the documented exit code."""

from __future__ import annotations

import json
from typing import Any

from wp_agent.cli import terminal
from wp_agent.cli.exit_codes import ExitCode

_LABELS = {
    ExitCode.USAGE: "入力エラー",
    ExitCode.CONFIGURATION: "設定エラー",
    ExitCode.AWAITING_APPROVAL: "確認が必要です",
}


class CliError(Exception):
    """`error_details` go under `error.details` (as in an AgentOutput's error); `extra` beside `error`."""

    def __init__(
        self,
        exit_code: ExitCode,
        code: str,
        message_ja: str,
        *,
        label: str | None = None,
        error_details: dict[str, Any] | None = None,
        **extra: Any,
    ) -> None:
        self.exit_code = exit_code
        self.code = code
        self.message_ja = message_ja
        self.label = label or _LABELS.get(exit_code, "エラー")
        self.error_details = error_details or None
        self.extra = extra
        super().__init__(f"{code}: {message_ja}")


def usage(code: str, message_ja: str, **details: Any) -> CliError:
    return CliError(ExitCode.USAGE, code, message_ja, **details)


def configuration(code: str, message_ja: str, **details: Any) -> CliError:
    return CliError(ExitCode.CONFIGURATION, code, message_ja, **details)


def failure_document(
    exit_code: int, code: str, message_ja: str, *, error_details: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    """The one JSON shape of a command that ended without its normal result."""
    present = {key: value for key, value in extra.items() if value is not None}
    error: dict[str, Any] = {"code": code, "message": message_ja}
    if error_details:
        error["details"] = error_details
    return {"success": False, "exitCode": int(exit_code), "error": error, **present}


def report(failure: CliError, *, as_json: bool) -> int:
    terminal.err.line(f"{failure.label} [{failure.code}]: {failure.message_ja}")
    if as_json:
        document = failure_document(
            failure.exit_code,
            failure.code,
            failure.message_ja,
            error_details=failure.error_details,
            **failure.extra,
        )
        terminal.out.json(json.dumps(document, ensure_ascii=False))
    return failure.exit_code
