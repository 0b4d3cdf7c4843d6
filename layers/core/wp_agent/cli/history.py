"""`wp-agent history [--json] [-n N]` and `wp-agent show <runId>`: past runs from the audit file.

Each run is put together from its audit records (grouped by run id): the instruction and the answer
from its `run_summary` record (written when the run stops; masked like everything in the audit),
each command with the policy's decision, the approver and the outcome. Nothing is read from
anywhere else, so what is shown is exactly what was audited.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.ports import AuditLog
from wp_agent.agent.session_state import SessionState, SessionStatus
from wp_agent.cli import failures, site_book, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.config import CliSettings
from wp_agent.masking import mask_text
from wp_agent.program import command_name

_STATUS_JA = {
    "completed": "完了",
    "failed": "失敗",
    "cancelled": "中止",
    "awaiting_approval": "承認待ち",
    "unknown": "不明（記録が途中まで）",
}
_DECISION_JA = {"read": "読み取り", "write": "書き込み", "destructive": "要承認", "blocked": "ブロック"}


def record_summary(audit: AuditLog, state: SessionState) -> None:
    """The run's instruction and answer (masked) as one audit record, when the run stops held or
    interrupted; a run that ended wrote its end record itself (agent/lifecycle.py), exactly once."""
    if state.status.terminal:
        return
    result = state.result
    answer = ""
    if result is not None:
        answer = result.response or (result.error.message if result.error else "")
    status = {SessionStatus.AWAITING_APPROVAL: "awaiting_approval"}.get(
        state.status, state.status.value.lower()
    )
    audit.append(
        AuditEvent(
            type=AuditEventType.RUN_SUMMARY,
            user_id=state.user_id,
            session_id=state.session_id,
            target_id=state.target_id,
            run_id=state.run_id or None,
            instruction=mask_text(state.input.message),
            answer=mask_text(answer),
            status=status,
            error=result.error.code.value if result is not None and result.error else None,
        )
    )


@dataclass
class CommandLine:
    command: str
    decision: str
    approver: str | None = None
    outcome: str = "未実行"
    success: bool | None = None
    exit_code: int | None = None
    duration_ms: int | None = None
    error: str | None = None


@dataclass
class Run:
    run_id: str
    session_id: str
    user_id: str
    started_at: str
    target_id: str = ""
    instruction: str = ""
    answer: str = ""
    status: str = "unknown"
    error_code: str | None = None
    commands: list[CommandLine] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "sessionId": self.session_id,
            "userId": self.user_id,
            "startedAt": self.started_at,
            "targetId": self.target_id,
            "status": self.status,
            "errorCode": self.error_code,
            "instruction": self.instruction,
            "answer": self.answer,
            "commands": [
                {
                    "command": c.command,
                    "decision": c.decision,
                    "approver": c.approver,
                    "outcome": c.outcome,
                    "success": c.success,
                    "exitCode": c.exit_code,
                    "durationMs": c.duration_ms,
                    "error": c.error,
                }
                for c in self.commands
            ],
        }


def read_runs(path: Path) -> list[Run]:
    """Runs in the order they started; lines that are not audit records are skipped."""
    runs: dict[str, Run] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    for line in lines:
        try:
            event = AuditEvent.model_validate_json(line)
        except ValueError:
            continue
        key = event.run_id or event.session_id
        run = runs.get(key)
        if run is None:
            run = runs[key] = Run(key, event.session_id, event.user_id, event.timestamp, event.target_id)
        _apply(run, event)
    return list(runs.values())


def _command(run: Run, command: str, category: str | None) -> CommandLine:
    for line in run.commands:  # the latest record of the same command not yet settled
        if (
            line.command == command
            and line.success is None
            and line.outcome in {"未実行", "承認待ち", "承認済み"}
        ):
            return line
    line = CommandLine(command, _DECISION_JA.get(category or "", category or ""))
    run.commands.append(line)
    return line


def _apply(run: Run, event: AuditEvent) -> None:
    kind = event.type
    if kind is AuditEventType.RUN_SUMMARY:
        run.instruction = event.instruction or run.instruction
        run.answer = event.answer or ""
        run.status = event.status or run.status
        run.error_code = event.error
        return
    if kind is AuditEventType.RUN_CANCELLED:
        run.status = "cancelled"
        return
    if kind is AuditEventType.RUN_REFUSED:
        run.status, run.error_code = "failed", event.error
        return
    if event.command is None:
        return
    line = _command(run, event.command, event.category)
    if kind is AuditEventType.COMMAND_BLOCKED:
        line.decision, line.outcome = "ブロック", f"ブロック: {event.policy_reason or event.rule}"
    elif kind is AuditEventType.APPROVAL_REQUESTED:
        line.outcome = "承認待ち"
    elif kind is AuditEventType.APPROVAL_APPROVED:
        line.approver, line.outcome = event.approver, "承認済み"
    elif kind is AuditEventType.APPROVAL_REJECTED:
        line.approver, line.outcome, line.success = event.approver, "見送り（拒否）", False
    elif kind is AuditEventType.APPROVAL_EXPIRED:
        line.outcome, line.success = "期限切れ", False
    elif kind is AuditEventType.COMMAND_OUTCOME_UNKNOWN:
        line.outcome, line.success = "結果不明", False
    elif kind is AuditEventType.COMMAND_EXECUTED:
        line.success, line.exit_code, line.duration_ms, line.error = (
            event.success, event.exit_code, event.duration_ms, event.error,
        )  # fmt: skip
        line.outcome = "成功" if event.success else "失敗"


# --- commands -------------------------------------------------------------------------------------


def add_parsers(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    history = subparsers.add_parser(
        "history",
        help="過去の実行を一覧します（監査ログから）",
        description="監査ログ（WP_AGENT_AUDIT_FILE）にある過去の実行を新しい順に一覧します。",
    )
    history.add_argument("-n", type=int, default=20, metavar="N", help="表示する件数（1〜1000、既定 20）")
    history.add_argument("--json", action="store_true", help="JSON で標準出力に出します")
    history.add_argument(
        "--site", metavar="NAME", help="このサイト（wp-agent sites add）で実行したものだけを表示します"
    )
    history.set_defaults(handler=run_history)
    show = subparsers.add_parser(
        "show",
        help="1回の実行の詳細を表示します（指示、回答、各コマンドの判定・承認者・結果）",
        description="監査ログから1回の実行の詳細を表示します。実行IDは wp-agent history で確認できます。",
    )
    show.add_argument("run_id", metavar="実行ID", help="run_… の形式の実行ID")
    show.add_argument("--json", action="store_true", help="JSON で標準出力に出します")
    show.add_argument("--site", metavar="NAME", help="このサイトで実行したものに限ります")
    show.set_defaults(handler=run_show)


def _on_site(runs: list[Run], name: str | None) -> list[Run]:
    """The runs made on the named site (a run records where it ran, whichever way it was chosen)."""
    if name is None:
        return runs
    book = site_book.load()
    site = book.sites.get(name)
    if site is None:
        raise failures.usage(
            "SITE_NOT_REGISTERED", f"サイト「{name}」は登録されていません。登録済み: {book.names()}"
        )
    target = site_book.target_of(site_book.settings_with(CliSettings, site.environment()))
    return [run for run in runs if run.target_id == target]


def run_history(args: argparse.Namespace, settings: CliSettings) -> int:
    if not 1 <= args.n <= 1000:
        raise failures.usage("VALIDATION_ERROR", "-n には 1〜1000 の整数を指定してください。")
    runs = _on_site(read_runs(settings.wp_agent_audit_file.expanduser()), args.site)[-args.n :][::-1]
    if args.json:
        terminal.out.json(json.dumps([run.to_json() for run in runs], ensure_ascii=False))
        return ExitCode.OK
    if not runs:
        terminal.out.line("まだ実行の記録はありません。")
        return ExitCode.OK
    rows = [
        [run.started_at, run.run_id, _STATUS_JA.get(run.status, run.status), str(len(run.commands)),
         _short(run.instruction or "（指示の記録なし）")]
        for run in runs
    ]  # fmt: skip
    terminal.out.table(["開始", "実行ID", "結果", "コマンド", "指示"], rows, title="過去の実行（新しい順）")
    return ExitCode.OK


def run_show(args: argparse.Namespace, settings: CliSettings) -> int:
    runs = {
        run.run_id: run for run in _on_site(read_runs(settings.wp_agent_audit_file.expanduser()), args.site)
    }
    run = runs.get(args.run_id)
    if run is None:
        raise failures.usage(
            "RUN_NOT_FOUND",
            f"実行ID {args.run_id} の記録は監査ログにありません。{command_name()} history で確認してください。",
        )
    if args.json:
        terminal.out.json(json.dumps(run.to_json(), ensure_ascii=False))
        return ExitCode.OK
    terminal.out.line(f"実行ID: {run.run_id}（セッション {run.session_id}、依頼者 {run.user_id}）")
    terminal.out.line(f"開始: {run.started_at}")
    terminal.out.line(
        f"結果: {_STATUS_JA.get(run.status, run.status)}" + (f" [{run.error_code}]" if run.error_code else "")
    )
    terminal.out.line(f"指示: {run.instruction or '（記録なし）'}")
    terminal.out.line(f"回答: {run.answer or '（記録なし）'}")
    rows = [
        [f"wp {c.command}", c.decision, c.approver or "－", c.outcome, "" if c.exit_code is None else str(c.exit_code),
         "" if c.duration_ms is None else f"{c.duration_ms}ms"]
        for c in run.commands
    ]  # fmt: skip
    if rows:
        terminal.out.table(
            ["コマンド", "判定", "承認者", "結果", "終了コード", "時間"], rows, title="コマンド"
        )
    return ExitCode.OK


def _short(text: str, limit: int = 40) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
