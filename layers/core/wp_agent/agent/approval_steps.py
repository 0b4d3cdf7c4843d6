"""The turn's two approval steps; the approval's own state changes go through approval_protocol.

- hold: the calls the pipeline held become one PendingApproval (each with a Japanese summary of
  what will really happen, read from the site with policy-checked read-only commands).
- resolve: after the decision, the approved commands run (each re-checked against the current
  policy and rights) or are answered as rejected; the tool_results held back while waiting
  (`SessionState.held_results`) and the new ones go to the model in the call order.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from wp_agent.agent import approval_protocol
from wp_agent.agent.approval_summary import describe
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.command_runner import CommandRunner
from wp_agent.agent.messages import tool_uses
from wp_agent.agent.session_state import (
    ApprovalItem,
    ApprovalStatus,
    CommandRecord,
    CommandStatus,
    PendingApproval,
    SessionState,
    SessionStatus,
)
from wp_agent.agent.site_scope import apply_site_scope
from wp_agent.agent.tool_results import tool_result
from wp_agent.agent.turn_io import TurnIO
from wp_agent.masking import mask_text
from wp_agent.telemetry import APPROVALS_REQUESTED_TOTAL

_OBSERVE_REASON = "承認の要約のために現在の状態を確認（読み取りのみ）"


class ApprovalSteps:
    def __init__(self, io: TurnIO, runner: CommandRunner) -> None:
        self._io = io
        self._runner = runner

    def hold(self, state: SessionState, held: list[CommandRecord]) -> None:
        if state.pending_approval is not None and state.pending_approval.status is ApprovalStatus.PENDING:
            return  # a retried turn: the approval already exists
        deps = self._io.deps
        approval_id = f"apr_{uuid.uuid4().hex[:20]}"
        items: list[ApprovalItem] = []
        read = self._io.state_reader(state, _OBSERVE_REASON)
        for record in held:
            decision = deps.policy.classify_argv(record.argv)
            summary, impact = describe(decision, read)
            impact = deps.changes.approval_impact(decision, impact)
            record.approval_id = approval_id
            items.append(
                ApprovalItem(
                    tool_use_id=record.tool_use_id,
                    command=record.command,
                    summary_ja=summary,
                    impact_ja=impact,
                    rule=record.rule,
                    model_reason=mask_text(record.reason),
                )
            )
        expires_at = datetime.now(UTC) + timedelta(seconds=deps.settings.wp_agent_approval_timeout_seconds)
        approval_protocol.request(
            state,
            approval_id=approval_id,
            items=items,
            expires_at=expires_at.isoformat(timespec="seconds").replace("+00:00", "Z"),
        )
        for record in held:
            self._io.audit_record(state, AuditEventType.APPROVAL_REQUESTED, record, approval_id=approval_id)
        deps.telemetry.count(APPROVALS_REQUESTED_TOTAL)

    def resolve(self, state: SessionState, pending: PendingApproval) -> None:
        if not approval_protocol.decided(pending):
            return  # expired: nothing held runs (the run has ended)
        held = [r for r in state.commands if r.approval_id == pending.approval_id]
        results = {r["tool_use_id"]: r for r in state.held_results}
        if pending.status is ApprovalStatus.APPROVED:
            self._run_approved(state, held, results)
        else:
            comment = f"（コメント: {pending.comment}）" if pending.comment else ""
            for record in held:
                record.status = CommandStatus.REJECTED
                results[record.tool_use_id] = tool_result(
                    record.tool_use_id,
                    f"利用者がこの操作を拒否しました。実行していません{comment}。別の方法を提案するか、拒否されたことを報告してください。",
                    is_error=True,
                )
        order = _last_tool_use_order(state)
        state.messages.append({"role": "user", "content": [results[i] for i in order if i in results]})
        state.held_results = []
        approval_protocol.resolve(state)
        if not state.status.terminal:  # an SSH failure while running the approved commands ends the run
            state.status = SessionStatus.EXECUTING

    def _run_approved(
        self, state: SessionState, held: list[CommandRecord], results: dict[str, dict[str, Any]]
    ) -> None:
        runnable: list[CommandRecord] = []
        for record in held:
            if record.status is not CommandStatus.HELD:
                results[record.tool_use_id] = self._io.result_for(self._io.settle_after_retry(state, record))
                continue
            # Defence in depth: the approved argv must still pass the current policy and the
            # requester's current rights (a network administrator may have been removed).
            recheck = apply_site_scope(self._io.deps.policy.classify_argv(record.argv), state)
            if recheck.blocked:
                record.status = CommandStatus.BLOCKED
                record.policy_reason = recheck.reason_ja
                results[record.tool_use_id] = self._io.result_for(record)
                continue
            runnable.append(record)
        self._runner.run_all(state, runnable, results)


def _last_tool_use_order(state: SessionState) -> list[str]:
    for message in reversed(state.messages):
        if message["role"] == "assistant" and isinstance(message["content"], list):
            return [call.id for call in tool_uses(message["content"])]
    return []
