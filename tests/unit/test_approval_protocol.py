"""The approval protocol's transition table, walked step by step through the operations that use it."""

from __future__ import annotations

import itertools

import pytest

from wp_agent.agent import approval_protocol as protocol
from wp_agent.agent.approval_protocol import (
    TRANSITIONS,
    ApprovalRefusedError,
    Phase,
    Refusal,
    ResumeOutcome,
    Step,
)
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.lifecycle import new_session
from wp_agent.agent.session_state import (
    ApprovalItem,
    ApprovalStatus,
    DecisionDelivery,
    SessionState,
    SessionStatus,
)
from wp_agent.models.agent_io import AgentInput

APPROVAL = "apr_0123456789abcdef0123"
PHASES = list(TRANSITIONS)
DECIDED = {ApprovalStatus.APPROVED, ApprovalStatus.REJECTED}
ENDED = {protocol.EXPIRED, protocol.CANCELLED}


def waiting(phase: Phase, *, wait: str | None = "token-1") -> SessionState:
    """A run waiting on an approval that is in `phase`."""
    state = new_session(
        AgentInput(message="45を削除"), session_id="ses_protocol", user_id="u1", target_id="t"
    )
    state.status = SessionStatus.AWAITING_APPROVAL
    pending = protocol.request(
        state,
        approval_id=APPROVAL,
        items=[
            ApprovalItem(
                tool_use_id="toolu_1", command="post delete 45", summary_ja="削除", impact_ja="-", rule="r"
            )
        ],
        expires_at="2099-01-01T00:00:00Z",
    )
    pending.status, pending.delivery = phase.status, phase.delivery
    pending.task_token = wait
    return state


def apply(state: SessionState, step: Step) -> None:
    """Take `step` through the operation that callers use for it."""
    if step is Step.ATTACH_TOKEN:
        protocol.attach_token(state, APPROVAL, "token-2")
    elif step in (Step.APPROVE, Step.REJECT):
        protocol.decide(state, APPROVAL, decided_by="u1", approved=step is Step.APPROVE, comment=None)
    elif step in (Step.HAND_OVER, Step.HAND_OVER_FAILED):
        approval = state.find_approval(APPROVAL)
        assert approval is not None
        step_outcome = ResumeOutcome.FAILED if step is Step.HAND_OVER_FAILED else ResumeOutcome.RESUMED
        before = protocol.phase_of(approval)
        protocol.transition(approval, step)  # refusals surface here; record_hand_over swallows them
        approval.status, approval.delivery = before
        protocol.record_hand_over(state, APPROVAL, step_outcome)
    elif step is Step.RESOLVE:
        protocol.resolve(state)
    elif step is Step.EXPIRE:
        protocol.expire(state)
    else:
        protocol.cancel(state)


def test_every_phase_lists_every_step() -> None:
    for phase in PHASES:
        assert set(TRANSITIONS[phase]) == set(Step), phase


@pytest.mark.parametrize(
    ("phase", "step"), list(itertools.product(PHASES, Step)), ids=lambda v: "/".join(map(str, v))
)
def test_each_step_from_each_phase_does_what_the_table_says(phase: Phase, step: Step) -> None:
    state = waiting(phase)
    expected = TRANSITIONS[phase][step]
    if isinstance(expected, Refusal):
        with pytest.raises(ApprovalRefusedError) as refused:
            apply(state, step)
        if step not in (Step.APPROVE, Step.REJECT) or expected is not Refusal.ALREADY_DECIDED:
            assert refused.value.refusal is expected
        return
    apply(state, step)
    approval = state.find_approval(APPROVAL)
    assert approval is not None
    assert protocol.phase_of(approval) == expected


@pytest.mark.parametrize("phase", PHASES, ids=str)
def test_the_table_keeps_the_protocols_promises(phase: Phase) -> None:
    for step, after in TRANSITIONS[phase].items():
        if isinstance(after, Refusal):
            continue
        if phase in ENDED:
            assert after == phase, (phase, step)  # an ended approval never comes back
        if phase.status in DECIDED and after.status in DECIDED:
            assert after.status is phase.status, (phase, step)  # a decision is never changed
        if phase.delivery is DecisionDelivery.HANDED_OVER and after.status in DECIDED:
            assert after.delivery is DecisionDelivery.HANDED_OVER  # nor un-delivered
        if after.status in DECIDED and phase.status is ApprovalStatus.PENDING:
            assert after.delivery is DecisionDelivery.STORED  # stored before handed over
    if phase.delivery in protocol.RESENDABLE:
        same = Step.APPROVE if phase.status is ApprovalStatus.APPROVED else Step.REJECT
        assert TRANSITIONS[phase][same] == phase  # the same decision may be sent again


def test_a_new_decision_is_audited_per_command_and_a_resend_is_not() -> None:
    state = waiting(protocol.PENDING)
    first = protocol.decide(state, APPROVAL, decided_by="u1", approved=True, comment="OK")
    assert (first.new, first.token, first.payload) == (
        True,
        "token-1",
        {"approvalId": APPROVAL, "decision": "approve"},
    )
    again = protocol.decide(state, APPROVAL, decided_by="u1", approved=True, comment="OK")
    assert not again.new
    assert [e.type for e in state.audit_outbox] == [
        AuditEventType.RUN_STARTED,
        AuditEventType.APPROVAL_APPROVED,
    ]


def test_a_decision_that_came_before_the_wait_is_handed_to_it_at_once() -> None:
    state = waiting(protocol.PENDING, wait=None)
    protocol.decide(state, APPROVAL, decided_by="u1", approved=False, comment=None)
    assert protocol.attach_token(state, APPROVAL, "token-9") == {"approvalId": APPROVAL, "decision": "reject"}


def test_a_pending_approval_past_its_deadline_or_of_an_ended_run_takes_no_decision() -> None:
    late = waiting(protocol.PENDING)
    assert late.pending_approval is not None
    late.pending_approval.expires_at = "2020-01-01T00:00:00Z"
    with pytest.raises(ApprovalRefusedError) as expired:
        protocol.decide(late, APPROVAL, decided_by="u1", approved=True, comment=None)
    assert expired.value.refusal is Refusal.EXPIRED
    ended = waiting(protocol.PENDING)
    ended.status = SessionStatus.FAILED
    with pytest.raises(ApprovalRefusedError) as run_ended:
        protocol.decide(ended, APPROVAL, decided_by="u1", approved=True, comment=None)
    assert run_ended.value.refusal is Refusal.RUN_ENDED


def test_cancel_hands_back_the_waits_token_and_archives_the_approval() -> None:
    state = waiting(protocol.PENDING)
    assert protocol.cancel(state) == "token-1"
    assert state.pending_approval is None
    archived = state.find_approval(APPROVAL)
    assert archived is not None
    assert (archived.status, archived.task_token) == (ApprovalStatus.CANCELLED, None)
