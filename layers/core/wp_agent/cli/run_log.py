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
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.command_outcomes import (
    DECISION_JA,
    NOT_RUN,
    OUTCOME_JA,
    SETTLED,
    about_a_command,
    decision_of,
    origin_of,
    outcome_after,
)
from wp_agent.models.run_status import CommandDecision as Decision
from wp_agent.models.run_status import CommandOrigin as Origin
from wp_agent.models.run_status import CommandOutcome as Outcome
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
# The end record's error code says how the run failed; for these statuses the status says it all.
_CODE_SAID_BY_STATUS = {"cancelled", "awaiting_approval", "expired", "partial_failure"}


@dataclass
class CommandLine:
    """One command as the API's run view has it (agent/command_outcomes.py), with its words."""

    command: str
    decision: Decision
    origin: Origin = "model"
    approver: str | None = None
    outcome: Outcome = "not_run"
    policy_reason: str | None = None
    success: bool | None = None
    exit_code: int | None = None
    duration_ms: int | None = None
    error: str | None = None

    @property
    def decision_ja(self) -> str:
        return DECISION_JA[self.decision]

    @property
    def outcome_ja(self) -> str:
        words = OUTCOME_JA[self.outcome]
        return f"{words}: {self.policy_reason}" if self.outcome == "blocked" and self.policy_reason else words

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "origin": self.origin,
            "decision": self.decision,
            "decisionJa": self.decision_ja,
            "approver": self.approver,
            "outcome": self.outcome,
            "outcomeJa": self.outcome_ja,
            "success": self.success,
            "exitCode": self.exit_code,
            "durationMs": self.duration_ms,
            "error": self.error,
        }


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
    time_zone: str | None = None  # the site's, as its end record says (None: not known)
    commands: list[CommandLine] = field(default_factory=list)

    @property
    def started_local(self) -> str:
        """When it started, in the site's time zone (UTC when the run did not learn it)."""
        return local_time(self.started_at, self.time_zone)

    @property
    def asked(self) -> list[CommandLine]:
        """The commands the model asked for (the agent's own reads left out)."""
        return [line for line in self.commands if line.origin == "model"]

    @property
    def system_reads(self) -> list[CommandLine]:
        return [line for line in self.commands if line.origin == "system"]

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
        if any(line.outcome in NOT_RUN for line in self.commands):
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
            "siteTimeZone": self.time_zone,
            "startedAtLocal": local_iso(self.started_at, self.time_zone),
            "targetId": self.target_id,
            "channel": self.channel,
            "status": self.status,
            "runStatus": self.run_status.value,
            "errorCode": self.error_code,
            "undoneBy": self.undone_by,
            "revertsRunId": self.reverts_run_id,
            "instruction": self.instruction,
            "answer": self.answer,
            "commands": [line.to_json() for line in self.commands],
        }


def _zone(name: str | None) -> tzinfo | None:
    """A run's time zone: a zone's name, or an offset such as +09:00 (None: not known here)."""
    if not name:
        return None
    if name[0] in "+-":
        try:
            hours, minutes = name[1:].split(":")
            offset = timedelta(hours=int(hours), minutes=int(minutes))
            return timezone(-offset if name[0] == "-" else offset)
        except ValueError:  # not HH:MM, or a day or more
            return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def local_iso(stamp: str, zone_name: str | None) -> str | None:
    """A record's UTC time in the site's time zone, ISO 8601 with its offset (None: not known)."""
    zone = _zone(zone_name)
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return moment.astimezone(zone).isoformat(timespec="seconds") if zone is not None else None


def local_time(stamp: str, zone_name: str | None) -> str:
    """A record's time as people read it: in the site's time zone, named; else in UTC, said so."""
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    zone = _zone(zone_name)
    if zone is None:
        return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"
    return f"{moment.astimezone(zone):%Y-%m-%d %H:%M:%S} {zone_name}"


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
    # A run that did not read the site's facts (an undo, an MCP call) is shown in the site's time zone
    # as the latest run on the same site learned it.
    zones: dict[str, str] = {}
    for run in runs.values():
        zones[run.target_id] = run.time_zone or zones.get(run.target_id, "")
    for run in runs.values():
        run.time_zone = run.time_zone or zones.get(run.target_id) or None
    # A run put back by an undo that completed (and was not undone itself) reads as undone.
    reverts = {run.run_id: run.reverts_run_id for run in runs.values()}
    for reverted_id in {r for r in reverts.values() if r in runs}:
        runs[reverted_id].undone_by = latest_standing_undo(
            reverted_id, reverts, lambda undo: runs[undo].status == "undo"
        )
    return list(runs.values())


def _command(run: Run, event: AuditEvent) -> CommandLine:
    command = event.command or ""
    for line in reversed(run.commands):  # the latest record of the same command not yet settled
        if line.command == command and line.outcome not in SETTLED:
            return line
    line = CommandLine(command, decision_of(event.category), origin_of(event))
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
        run.time_zone = event.time_zone or run.time_zone
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
    if not about_a_command(event):
        return
    line = _command(run, event)
    after = outcome_after(event)
    if after is None:
        return
    line.outcome, success = after
    if kind is AuditEventType.COMMAND_BLOCKED:
        line.decision, line.policy_reason = "blocked", event.policy_reason or event.rule
    elif kind in (AuditEventType.APPROVAL_APPROVED, AuditEventType.APPROVAL_REJECTED):
        line.approver = event.approver
    elif kind is AuditEventType.COMMAND_EXECUTED:
        line.exit_code, line.duration_ms, line.error = event.exit_code, event.duration_ms, event.error
    if success is not None or kind is AuditEventType.COMMAND_EXECUTED:
        line.success = success


def decisions_on(path: Path, approval_id: str) -> list[AuditEvent]:
    """The audited decisions on one approval (approved / rejected / expired / superseded), in order."""
    decided = {
        AuditEventType.APPROVAL_APPROVED,
        AuditEventType.APPROVAL_REJECTED,
        AuditEventType.APPROVAL_EXPIRED,
        AuditEventType.APPROVAL_SUPERSEDED,
    }
    return [e for e in read_events(path) if e.approval_id == approval_id and e.type in decided]
