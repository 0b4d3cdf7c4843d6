"""The approval protocol: the one place where an approval changes.

A destructive command holds the run; the requester decides; the decision reaches the run's approval
wait (a Step Functions task token); the next turn acts on it. An approval's phase is its status and
where its decision is on the way to the run; TRANSITIONS lists what every step does in every phase,
and a step it refuses raises ApprovalRefusedError with the reason the API explains.

    request            -> PENDING
    PENDING            -- attach_token -> PENDING (the wait began; its token is kept)
    PENDING            -- approve | reject -> <decision>/STORED (saved with its audit records)
    <decision>/STORED  -- hand_over -> <decision>/HANDED_OVER -- resolve (the turn acts) -> archived
    <decision>/STORED  -- hand_over_failed -> <decision>/HANDOVER_FAILED
    STORED or HANDOVER_FAILED -- the same decision again -> handed over again (resendable)
    PENDING, a decision not yet acted on -- expire (the wait timed out) -> EXPIRED
    PENDING            -- cancel (the run ended) -> CANCELLED; a decision stays as it was

Callers: the turn (request, resolve), the wait task (attach_token: a decision that came first is
handed over at once), the API (decide, hand_over, record_hand_over, closed_wait_verdict), the
workflow's timeout path (expire), cancel and failure (cancel). Each caller saves the session it
changed; the audit records go with that save (audit_outbox).
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, NamedTuple, Protocol

from wp_agent import clock
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.audit_outbox import audit
from wp_agent.agent.session_state import (
    ApprovalItem,
    ApprovalStatus,
    DecisionDelivery,
    PendingApproval,
    SessionState,
    SessionStatus,
)
from wp_agent.policy.categories import PolicyCategory

logger = logging.getLogger(__name__)


class Step(StrEnum):
    ATTACH_TOKEN = "attach_token"  # noqa: S105 - a step name, not a secret
    APPROVE = "approve"
    REJECT = "reject"
    HAND_OVER = "hand_over"
    HAND_OVER_FAILED = "hand_over_failed"
    RESOLVE = "resolve"
    EXPIRE = "expire"
    CANCEL = "cancel"


class Refusal(StrEnum):
    NOT_FOUND = "not_found"
    ALREADY_DECIDED = "already_decided"
    EXPIRED = "expired"
    RUN_ENDED = "run_ended"
    NOT_PENDING = "not_pending"  # the wait began for an approval that no longer waits
    NOT_DECIDED = "not_decided"  # handing over or acting on a decision nobody made


class ApprovalRefusedError(Exception):
    def __init__(self, refusal: Refusal, status: ApprovalStatus | None = None) -> None:
        super().__init__(refusal.value)
        self.refusal = refusal
        self.status = status  # the approval's, for "already approved / rejected"


class Phase(NamedTuple):
    status: ApprovalStatus
    delivery: DecisionDelivery


_S, _D = ApprovalStatus, DecisionDelivery
PENDING = Phase(_S.PENDING, _D.NONE)
EXPIRED = Phase(_S.EXPIRED, _D.NONE)
CANCELLED = Phase(_S.CANCELLED, _D.NONE)
APPROVED_STORED = Phase(_S.APPROVED, _D.STORED)
APPROVED_FAILED = Phase(_S.APPROVED, _D.HANDOVER_FAILED)
APPROVED_HANDED = Phase(_S.APPROVED, _D.HANDED_OVER)
REJECTED_STORED = Phase(_S.REJECTED, _D.STORED)
REJECTED_FAILED = Phase(_S.REJECTED, _D.HANDOVER_FAILED)
REJECTED_HANDED = Phase(_S.REJECTED, _D.HANDED_OVER)

_R = Refusal
# phase -> step -> the next phase, or why the step is refused. Every phase lists every step.
TRANSITIONS: dict[Phase, dict[Step, Phase | Refusal]] = {
    PENDING: {
        Step.ATTACH_TOKEN: PENDING,
        Step.APPROVE: APPROVED_STORED,
        Step.REJECT: REJECTED_STORED,
        Step.HAND_OVER: _R.NOT_DECIDED,
        Step.HAND_OVER_FAILED: _R.NOT_DECIDED,
        Step.RESOLVE: _R.NOT_DECIDED,
        Step.EXPIRE: EXPIRED,
        Step.CANCEL: CANCELLED,
    },
    # Stored, not known to have reached the wait: the same decision is handed over again.
    APPROVED_STORED: {
        Step.ATTACH_TOKEN: APPROVED_STORED,  # a wait that began after the decision takes it at once
        Step.APPROVE: APPROVED_STORED,
        Step.REJECT: _R.ALREADY_DECIDED,
        Step.HAND_OVER: APPROVED_HANDED,
        Step.HAND_OVER_FAILED: APPROVED_FAILED,
        Step.RESOLVE: APPROVED_HANDED,
        Step.EXPIRE: EXPIRED,
        Step.CANCEL: APPROVED_STORED,
    },
    APPROVED_FAILED: {
        Step.ATTACH_TOKEN: APPROVED_FAILED,
        Step.APPROVE: APPROVED_FAILED,
        Step.REJECT: _R.ALREADY_DECIDED,
        Step.HAND_OVER: APPROVED_HANDED,
        Step.HAND_OVER_FAILED: APPROVED_FAILED,
        Step.RESOLVE: APPROVED_HANDED,
        Step.EXPIRE: EXPIRED,
        Step.CANCEL: APPROVED_FAILED,
    },
    APPROVED_HANDED: {
        Step.ATTACH_TOKEN: APPROVED_HANDED,
        Step.APPROVE: _R.ALREADY_DECIDED,
        Step.REJECT: _R.ALREADY_DECIDED,
        Step.HAND_OVER: APPROVED_HANDED,
        Step.HAND_OVER_FAILED: APPROVED_HANDED,  # a twin request reached the wait: it has it
        Step.RESOLVE: APPROVED_HANDED,
        Step.EXPIRE: EXPIRED,
        Step.CANCEL: APPROVED_HANDED,
    },
    REJECTED_STORED: {
        Step.ATTACH_TOKEN: REJECTED_STORED,
        Step.APPROVE: _R.ALREADY_DECIDED,
        Step.REJECT: REJECTED_STORED,
        Step.HAND_OVER: REJECTED_HANDED,
        Step.HAND_OVER_FAILED: REJECTED_FAILED,
        Step.RESOLVE: REJECTED_HANDED,
        Step.EXPIRE: EXPIRED,
        Step.CANCEL: REJECTED_STORED,
    },
    REJECTED_FAILED: {
        Step.ATTACH_TOKEN: REJECTED_FAILED,
        Step.APPROVE: _R.ALREADY_DECIDED,
        Step.REJECT: REJECTED_FAILED,
        Step.HAND_OVER: REJECTED_HANDED,
        Step.HAND_OVER_FAILED: REJECTED_FAILED,
        Step.RESOLVE: REJECTED_HANDED,
        Step.EXPIRE: EXPIRED,
        Step.CANCEL: REJECTED_FAILED,
    },
    REJECTED_HANDED: {
        Step.ATTACH_TOKEN: REJECTED_HANDED,
        Step.APPROVE: _R.ALREADY_DECIDED,
        Step.REJECT: _R.ALREADY_DECIDED,
        Step.HAND_OVER: REJECTED_HANDED,
        Step.HAND_OVER_FAILED: REJECTED_HANDED,
        Step.RESOLVE: REJECTED_HANDED,
        Step.EXPIRE: EXPIRED,
        Step.CANCEL: REJECTED_HANDED,
    },
    EXPIRED: {
        Step.ATTACH_TOKEN: _R.NOT_PENDING,
        Step.APPROVE: _R.EXPIRED,
        Step.REJECT: _R.EXPIRED,
        Step.HAND_OVER: _R.EXPIRED,
        Step.HAND_OVER_FAILED: _R.EXPIRED,
        Step.RESOLVE: EXPIRED,  # nothing held runs
        Step.EXPIRE: EXPIRED,
        Step.CANCEL: EXPIRED,
    },
    CANCELLED: {
        Step.ATTACH_TOKEN: _R.NOT_PENDING,
        Step.APPROVE: _R.RUN_ENDED,
        Step.REJECT: _R.RUN_ENDED,
        Step.HAND_OVER: _R.RUN_ENDED,
        Step.HAND_OVER_FAILED: _R.RUN_ENDED,
        Step.RESOLVE: _R.RUN_ENDED,
        Step.EXPIRE: CANCELLED,
        Step.CANCEL: CANCELLED,
    },
}
RESENDABLE = frozenset({_D.STORED, _D.HANDOVER_FAILED})


def phase_of(approval: PendingApproval) -> Phase:
    return Phase(approval.status, approval.delivery)


def transition(approval: PendingApproval, step: Step) -> Phase:
    """Apply one step of the table to the approval; ApprovalRefusedError when the table refuses it."""
    after = TRANSITIONS[phase_of(approval)][step]
    if isinstance(after, Refusal):
        raise ApprovalRefusedError(after, approval.status)
    approval.status, approval.delivery = after.status, after.delivery
    return after


def decided(approval: PendingApproval) -> bool:
    return approval.status in (ApprovalStatus.APPROVED, ApprovalStatus.REJECTED)


def decision_payload(approval: PendingApproval) -> dict[str, str]:
    """What the approval wait is answered with (the next turn reads the decision from the session)."""
    decision = "approve" if approval.status is ApprovalStatus.APPROVED else "reject"
    return {"approvalId": approval.approval_id, "decision": decision}


# -- the turn -------------------------------------------------------------------------------------


def request(
    state: SessionState, *, approval_id: str, items: list[ApprovalItem], expires_at: str
) -> PendingApproval:
    """Hold the listed commands for the requester's decision (the turn audits each of them)."""
    pending = PendingApproval(
        approval_id=approval_id,
        run_id=state.run_id,
        requested_by=state.user_id,
        requested_at=clock.now_iso(),
        expires_at=expires_at,
        items=items,
    )
    state.pending_approval = pending
    return pending


def resolve(state: SessionState) -> PendingApproval:
    """The turn has acted on the decision: the approval moves to the history."""
    pending = state.pending_approval
    if pending is None:
        raise ApprovalRefusedError(Refusal.NOT_DECIDED)
    transition(pending, Step.RESOLVE)
    _archive(state, pending)
    return pending


# -- the wait task --------------------------------------------------------------------------------


def attach_token(state: SessionState, approval_id: str, token: str) -> dict[str, str] | None:
    """Keep the wait's token on the approval. When the decision came first, the payload to answer
    this wait with at once (nothing to save then)."""
    pending = state.pending_approval
    if pending is None or pending.approval_id != approval_id:
        raise ApprovalRefusedError(Refusal.NOT_PENDING)
    transition(pending, Step.ATTACH_TOKEN)
    if decided(pending):
        return decision_payload(pending)
    pending.task_token = token
    return None


# -- the API --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    token: str | None  # the approval wait's, when it has begun
    new: bool  # False: the same decision was stored before and is handed over again
    payload: dict[str, str]


def decide(
    state: SessionState,
    approval_id: str,
    *,
    decided_by: str,
    approved: bool,
    comment: str | None,
    declined: Collection[str] = (),
) -> Decision:
    """Store the decision (audited per command), or recognise it being sent again. Who may decide
    is the caller's check (the API: only the requester, whose session it is)."""
    approval = state.find_approval(approval_id)
    if approval is None:
        raise ApprovalRefusedError(Refusal.NOT_FOUND)
    live = approval is state.pending_approval and not state.status.terminal
    if approval.status is ApprovalStatus.PENDING:
        if _past(approval.expires_at):
            raise ApprovalRefusedError(Refusal.EXPIRED)
        if not live:
            raise ApprovalRefusedError(Refusal.RUN_ENDED)
    before = phase_of(approval)
    transition(approval, Step.APPROVE if approved else Step.REJECT)
    if before.status is not ApprovalStatus.PENDING:  # the same decision again
        # Handed over again only to a wait that began (without one, the wait task delivers it).
        if not live or before.delivery not in RESENDABLE or approval.task_token is None:
            raise ApprovalRefusedError(Refusal.ALREADY_DECIDED, approval.status)
        return Decision(approval.task_token, new=False, payload=decision_payload(approval))
    approval.decided_by = decided_by
    approval.decided_at = clock.now_iso()
    approval.comment = comment
    for item in approval.items:
        accepted = approved and item.tool_use_id not in declined  # approved in part: per command
        audit(
            state,
            AuditEventType.APPROVAL_APPROVED if accepted else AuditEventType.APPROVAL_REJECTED,
            command=item.command,
            category=PolicyCategory.DESTRUCTIVE.value,
            rule=item.rule,
            approval_id=approval.approval_id,
            approver=decided_by,
            comment=comment,
        )
    return Decision(approval.task_token, new=True, payload=decision_payload(approval))


class ResumeOutcome(StrEnum):
    RESUMED = "resumed"
    TIMED_OUT = "timed_out"  # Step Functions' word for a closed wait: answered, timed out or restarted
    UNKNOWN_TOKEN = "unknown_token"  # noqa: S105 - a state, not a secret: answered, restarted or stopped
    FAILED = "failed"  # the wait could not be reached (throttled, unavailable, answer lost)


class WaitChannel(Protocol):
    """Answers a run's approval wait (the workflow adapter)."""

    def resume(self, task_token: str, decision: dict[str, Any]) -> ResumeOutcome: ...


def hand_over(channel: WaitChannel, token: str, payload: dict[str, str]) -> ResumeOutcome:
    """Give the stored decision to the wait; a failure is an outcome (the decision stays resendable)."""
    try:
        return channel.resume(token, payload)
    except Exception:
        logger.warning("the approval wait could not be reached", exc_info=True)
        return ResumeOutcome.FAILED


def record_hand_over(state: SessionState, approval_id: str, outcome: ResumeOutcome) -> bool:
    """How the hand-over went; False when that changes nothing (the run may already have it)."""
    approval = state.find_approval(approval_id)
    if approval is None:
        return False
    before = phase_of(approval)
    step = Step.HAND_OVER_FAILED if outcome is ResumeOutcome.FAILED else Step.HAND_OVER
    try:
        return transition(approval, step) != before
    except ApprovalRefusedError:
        return False


def closed_wait_verdict(state: SessionState, approval_id: str, *, new: bool) -> Refusal | None:
    """The wait did not take the decision because it is closed. Step Functions says so alike for a
    wait that timed out and one already answered: by an earlier hand-over (its answer lost), a twin
    request, or a restarted wait task that found the stored decision. The wait times out only after
    the approval's deadline plus a grace longer than any API request (the workflow's
    APPROVAL_HAND_OVER_GRACE), and a new decision was checked against that deadline in this request:
    that one was delivered. Only the workflow's own timeout path expires an approval."""
    approval = state.find_approval(approval_id)
    if state.status is SessionStatus.CANCELLED or (approval is not None and approval.status is _S.CANCELLED):
        return Refusal.RUN_ENDED
    if approval is None or approval.status is _S.EXPIRED:
        return Refusal.EXPIRED
    return None if new else Refusal.ALREADY_DECIDED


# -- the run's end --------------------------------------------------------------------------------


def expire(state: SessionState) -> bool:
    """The wait timed out: nothing held runs (audited per command). False when it had ended."""
    pending = state.pending_approval
    if state.status.terminal or pending is None or phase_of(pending) in (EXPIRED, CANCELLED):
        return False
    transition(pending, Step.EXPIRE)
    pending.decided_at = clock.now_iso()
    pending.task_token = None
    for item in pending.items:
        audit(
            state,
            AuditEventType.APPROVAL_EXPIRED,
            command=item.command,
            rule=item.rule,
            approval_id=pending.approval_id,
        )
    return True


def cancel(state: SessionState) -> str | None:
    """The run no longer waits (cancel, failure, a new run): the approval moves to the history
    (decisions on it are then refused, not unknown). The token its wait had, if any."""
    pending = state.pending_approval
    if pending is None:
        return None
    token = pending.task_token
    if transition(pending, Step.CANCEL) == CANCELLED and pending.decided_at is None:
        pending.decided_at = clock.now_iso()
    _archive(state, pending)
    return token


def _archive(state: SessionState, approval: PendingApproval) -> None:
    approval.task_token = None
    state.approval_history.append(approval)
    state.pending_approval = None


def _past(expires_at: str) -> bool:
    return datetime.fromisoformat(expires_at.replace("Z", "+00:00")) <= clock.now()
