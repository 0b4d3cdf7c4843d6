"""What became of each command of a run, from its audit records: one vocabulary (the API's run view,
`history --json`) and one set of steps, shared by `wp-agent history` / `show` (cli/run_log.py) and
the API (service/run_records.py), with the words people read.

A command's records follow each other (held, approved, executed …); a record about a command joins
the latest line of the same command that has not settled yet, else starts a new line.
"""

from __future__ import annotations

from typing import Final

from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.models.run_status import CommandDecision as Decision
from wp_agent.models.run_status import CommandOrigin as Origin
from wp_agent.models.run_status import CommandOutcome as Outcome

# The `origin` of a read the agent made itself (the site facts at a run's start, the reads an approval
# summary or a post check needs, undo's before-images); what the model asked for is `model`.
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


# The outcome a record settles a command in, and whether it succeeded (None: not known yet).
_OUTCOME_OF: Final[dict[AuditEventType, tuple[Outcome, bool | None]]] = {
    AuditEventType.COMMAND_BLOCKED: ("blocked", None),
    AuditEventType.APPROVAL_REQUESTED: ("awaiting_approval", None),
    AuditEventType.APPROVAL_APPROVED: ("approved", None),
    AuditEventType.APPROVAL_REJECTED: ("rejected", False),
    AuditEventType.APPROVAL_EXPIRED: ("expired", False),
    AuditEventType.COMMAND_OUTCOME_UNKNOWN: ("unknown", False),
}


def outcome_after(event: AuditEvent) -> tuple[Outcome, bool | None] | None:
    """The command's outcome after this record, and whether it succeeded (None: not known yet);
    None when the record does not speak about an outcome."""
    if event.type is AuditEventType.COMMAND_EXECUTED:
        return ("succeeded" if event.success else "failed"), event.success
    return _OUTCOME_OF.get(event.type)


def about_a_command(event: AuditEvent) -> bool:
    """A record about one command of the run (not the run's own records nor a target's)."""
    return event.command is not None and not event.type.value.startswith("target_")
