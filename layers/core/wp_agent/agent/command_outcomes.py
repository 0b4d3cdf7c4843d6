"""What became of each command of a run, from its audit records: one vocabulary (the API's run view,
`history --json`) and one set of steps, shared by `wp-agent history` / `show` (cli/run_log.py) and
the API (service/run_records.py), with the words people read.

A command's records follow each other (held, approved, executed …); a record about a command joins
the latest line of the same command that has not settled yet, else starts a new line.
"""

from __future__ import annotations

from typing import Final, Literal

from wp_agent.agent.audit_events import AuditEvent, AuditEventType

Decision = Literal["read", "write", "destructive", "blocked"]
Outcome = Literal[
    "succeeded",
    "failed",
    "blocked",
    "awaiting_approval",
    "approved",
    "rejected",
    "expired",
    "unknown",
    "not_run",
]
# Who asked for a command: the model (what the person asked for), or the agent itself (the site facts
# at a run's start, the reads an approval summary or a post check needs, undo's before-images).
Origin = Literal["model", "system"]
SYSTEM: Final = "system"

DECISIONS: Final[tuple[Decision, ...]] = ("read", "write", "destructive", "blocked")
SETTLED: Final = frozenset({"succeeded", "failed", "blocked", "rejected", "expired", "unknown"})
# Asked for, and not run: the run did not do everything it was asked (declined).
NOT_RUN: Final = frozenset({"blocked", "rejected", "expired"})

DECISION_JA: Final[dict[str, str]] = {
    "read": "読み取り",
    "write": "書き込み",
    "destructive": "要承認",
    "blocked": "ブロック",
}
OUTCOME_JA: Final[dict[str, str]] = {
    "succeeded": "成功",
    "failed": "失敗",
    "blocked": "ブロック",
    "awaiting_approval": "承認待ち",
    "approved": "承認済み",
    "rejected": "見送り（拒否）",
    "expired": "期限切れ",
    "unknown": "結果不明",
    "not_run": "未実行",
}


def decision_of(category: str | None) -> Decision:
    """The policy's decision an audit record names (anything else is read as refused)."""
    for decision in DECISIONS:
        if category == decision:
            return decision
    return "blocked"


def origin_of(event: AuditEvent) -> Origin:
    return "system" if event.origin == SYSTEM else "model"


def outcome_after(event: AuditEvent) -> tuple[Outcome, bool | None] | None:
    """The command's outcome after this record, and whether it succeeded (None: not known yet);
    None when the record does not speak about an outcome."""
    kind = event.type
    if kind is AuditEventType.COMMAND_BLOCKED:
        return "blocked", None
    if kind is AuditEventType.APPROVAL_REQUESTED:
        return "awaiting_approval", None
    if kind is AuditEventType.APPROVAL_APPROVED:
        return "approved", None
    if kind is AuditEventType.APPROVAL_REJECTED:
        return "rejected", False
    if kind is AuditEventType.APPROVAL_EXPIRED:
        return "expired", False
    if kind is AuditEventType.COMMAND_OUTCOME_UNKNOWN:
        return "unknown", False
    if kind is AuditEventType.COMMAND_EXECUTED:
        return ("succeeded" if event.success else "failed"), event.success
    return None


def about_a_command(event: AuditEvent) -> bool:
    """A record about one command of the run (not the run's own records nor a target's)."""
    return event.command is not None and not event.type.value.startswith("target_")
