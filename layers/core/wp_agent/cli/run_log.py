"""Past runs read back from the audit file, each with what happened to it.

A run is put together from its audit records (grouped by run id): the instruction, the answer and
how it ended from its end record (`run_summary`, written once when the run stops: completed /
failed with its code / cancelled / expired, or held; an undo run's names the run it reverts, and a
dry run's says it was one), each command with the policy's decision, the approver and the outcome.
Nothing is read from anywhere else, so what is shown is exactly what was audited.

The status is decided once, here, from the end record and the commands — the same facts the exit
code of `ask` / `approve` / `undo` came from — never guessed from a run cut short.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.models.run_status import RunStatus
from wp_agent.undo.standing import latest_standing_undo

# What happened to a run: the JSON value (`history --json`) and the words people read.
STATUS_JA = {
    "completed": "完了",
    "failed": "失敗",
    "partial_failure": "一部失敗",
    "declined": "見送りあり",
    "cancelled": "中止",
    "awaiting_approval": "承認待ち",
    "expired": "期限切れ（承認されず）",
    "undo": "取り消し（undo）",
    "dry_run": "確認のみ（--dry-run）",
    "unknown": "実行中か途中で終了（終了の記録なし）",
}
_RUN_STATUS = {
    "completed": RunStatus.COMPLETED,
    "undo": RunStatus.COMPLETED,
    "failed": RunStatus.FAILED,
    "partial_failure": RunStatus.PARTIAL_FAILURE,
    "declined": RunStatus.DECLINED,
    "cancelled": RunStatus.CANCELLED,
    "awaiting_approval": RunStatus.AWAITING_APPROVAL,
    "expired": RunStatus.EXPIRED,
    "unknown": RunStatus.RUNNING,  # no end record: running, or cut short (said by `status`)
}
# An undo run that did not put everything back (its PARTIAL_FAILURE: some of it, or only re-created).
_UNDO_JA = {"partial_failure": "一部だけ戻した"}
DRY_RUN = "dry_run"  # the end status of `undo --dry-run`: its reads are audited, but it is not a run
_DECISION_JA = {"read": "読み取り", "write": "書き込み", "destructive": "要承認", "blocked": "ブロック"}
_NOT_RUN = ("ブロック", "見送り（拒否）", "期限切れ")  # outcomes of a command that was asked for, not run
# The end record's error code says how the run failed; for these statuses the status says it all.
_CODE_SAID_BY_STATUS = {"cancelled", "awaiting_approval", "expired", "partial_failure"}


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
    channel: str | None = None
    reverts_run_id: str | None = None
    end_status: str | None = None  # as the end record says (None: no end record was written)
    end_error: str | None = None
    cancelled: bool = False
    refused_error: str | None = None
    undone_by: str | None = None  # the undo run that put this run's changes back
    commands: list[CommandLine] = field(default_factory=list)

    @property
    def status(self) -> str:
        """What happened (a key of STATUS_JA)."""
        end = self.end_status
        if end is None:  # the process died before the run's end record
            if self.cancelled:
                return "cancelled"
            return "failed" if self.refused_error else "unknown"
        if end in (DRY_RUN, "cancelled", "awaiting_approval", "expired"):
            return end
        if self.end_error == "PARTIAL_FAILURE":
            return "partial_failure"
        if end != "completed" or self.end_error:
            return "failed"
        if any(line.outcome.startswith(_NOT_RUN) for line in self.commands):
            return "declined"  # some command was declined or refused while the run went on
        return "undo" if self.reverts_run_id else "completed"

    @property
    def run_status(self) -> RunStatus:
        """The run in the vocabulary of the API and the events (models/run_status.py)."""
        if self.undone_by is not None:
            return RunStatus.UNDONE
        return _RUN_STATUS.get(self.status, RunStatus.FAILED)

    @property
    def error_code(self) -> str | None:
        code = self.end_error or self.refused_error
        return None if self.status in _CODE_SAID_BY_STATUS else code

    @property
    def status_ja(self) -> str:
        words = STATUS_JA.get(self.status, self.status)
        if self.reverts_run_id and self.status != "undo":
            words = "取り消し（undo）: " + _UNDO_JA.get(self.status, words)
        words += f" [{self.error_code}]" if self.error_code else ""
        return words + (f"・取り消し済み（{self.undone_by}）" if self.undone_by else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "sessionId": self.session_id,
            "userId": self.user_id,
            "startedAt": self.started_at,
            "targetId": self.target_id,
            "channel": self.channel,
            "status": self.status,
            "runStatus": self.run_status.value,
            "errorCode": self.error_code,
            "undoneBy": self.undone_by,
            "revertsRunId": self.reverts_run_id,
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


def read_events(path: Path) -> list[AuditEvent]:
    """The audit file's records in order; lines that are not audit records are skipped."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    events = []
    for line in lines:
        try:
            events.append(AuditEvent.model_validate_json(line))
        except ValueError:
            continue
    return events


def read_runs(path: Path) -> list[Run]:
    """Runs in the order they started, dry runs included (callers that list runs leave them out)."""
    runs: dict[str, Run] = {}
    for event in read_events(path):
        key = event.run_id or event.session_id
        run = runs.get(key)
        if run is None:
            run = runs[key] = Run(key, event.session_id, event.user_id, event.timestamp, event.target_id)
        _apply(run, event)
    # A run put back by an undo that completed (and was not undone itself) reads as undone.
    reverts = {run.run_id: run.reverts_run_id for run in runs.values()}
    for reverted_id in {r for r in reverts.values() if r in runs}:
        runs[reverted_id].undone_by = latest_standing_undo(
            reverted_id, reverts, lambda undo: runs[undo].status == "undo"
        )
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
    run.channel = run.channel or event.channel
    run.reverts_run_id = run.reverts_run_id or event.reverts_run_id
    if kind is AuditEventType.RUN_SUMMARY:
        run.instruction = event.instruction or run.instruction
        run.answer = event.answer or ""
        run.end_status, run.end_error = event.status or "failed", event.error
        return
    if kind is AuditEventType.RUN_STARTED:
        run.instruction = run.instruction or event.instruction or ""
        return
    if kind is AuditEventType.RUN_CANCELLED:
        run.cancelled = True
        return
    if kind is AuditEventType.RUN_REFUSED:
        run.refused_error = event.error or "UNKNOWN_ERROR"
        return
    if event.command is None or kind.value.startswith("target_"):
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


def decisions_on(path: Path, approval_id: str) -> list[AuditEvent]:
    """The audited decisions on one approval (approved / rejected / expired / superseded), in order."""
    decided = {
        AuditEventType.APPROVAL_APPROVED,
        AuditEventType.APPROVAL_REJECTED,
        AuditEventType.APPROVAL_EXPIRED,
        AuditEventType.APPROVAL_SUPERSEDED,
    }
    return [e for e in read_events(path) if e.approval_id == approval_id and e.type in decided]
