"""Approvals in a turn: the held commands become one approval (each with its summary read from the site),
and once the requester decided, the approved ones run — after their summaries were read again on the site
as it is now (an approval is a contract on the text the person read). What to decide comes from the
deciding modules (approval_steps, approval_protocol); every session change goes through the ledger."""

from __future__ import annotations

from collections.abc import Mapping

from wp_agent.agent import approval_protocol, approval_steps
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.ledger import Ledger, Results
from wp_agent.agent.messages import ToolUseBlock
from wp_agent.agent.ports import AgentDeps
from wp_agent.agent.session_state import (
    ApprovalItem,
    ApprovalStatus,
    CommandRecord,
    CommandStatus,
    PendingApproval,
    SessionState,
)
from wp_agent.agent.tool_pipeline import Planned
from wp_agent.agent.tool_results import last_tool_use_ids, tool_result
from wp_agent.models.fleet import FleetStep
from wp_agent.policy import PolicyCategory
from wp_agent.policy.command_policy import RULE_FAILED
from wp_agent.policy.fleet_plan import as_template, step_index
from wp_agent.telemetry import APPROVALS_REQUESTED_TOTAL

MAX_ASKED_AGAIN = 2  # approvals superseded for one command before it is refused instead
SITE_KEEPS_CHANGING = "approval.site_keeps_changing"
_SITE_KEEPS_CHANGING_JA = (
    "承認のたびにサイトの状態が変わり、確認した内容のまま実行できないため、実行しませんでした。"
    "状態が落ち着いてからもう一度依頼してください"
)


class ApprovalFlow:
    def __init__(self, deps: AgentDeps, ledger: Ledger) -> None:
        self._deps = deps
        self._ledger = ledger

    def hold(self, state: SessionState, held: list[CommandRecord], results: Results) -> None:
        """The held commands within the user's quota (counted now, so an approved one always runs)
        become one approval, each with a summary read from the site (one that cannot be worded is
        refused: _refuse_unworded)."""
        if state.pending_approval is not None and state.pending_approval.status is ApprovalStatus.PENDING:
            return  # a retried turn: the approval already exists
        ledger = self._ledger
        # Worded first: a command refused because its text cannot be worded uses none of the quota.
        items = {record.tool_use_id: self._item(state, record) for record in held}
        refused = self._refuse_unworded(state, held, items)
        refused += [r for r in held if r not in refused and not ledger.within_quota(state, r)]
        for record in refused:
            held.remove(record)
            results[record.tool_use_id] = ledger.result_for(record)
        if held:
            asked = [item for record in held if (item := items[record.tool_use_id]) is not None]
            self._ask(state, held, held, asked)
            self._deps.telemetry.count(APPROVALS_REQUESTED_TOTAL)

    def resolve(self, state: SessionState) -> None:
        """The decision acted on: approved commands run, the others are answered; the answers held
        back while waiting and the new ones go to the model in the call order."""
        pending = state.pending_approval
        if pending is None or not approval_protocol.decided(pending):
            return  # expired: nothing held runs (the run has ended)
        held = [r for r in state.commands if r.approval_id == pending.approval_id]
        if pending.status is ApprovalStatus.APPROVED and self._asked_again(state, pending, held):
            return
        ledger = self._ledger
        results = {r["tool_use_id"]: r for r in state.held_results}
        runnable: list[CommandRecord] = []
        scope, policy = state.site_scope(), self._deps.policy
        decided = ledger.decided(
            state,
            approval_steps.RECHECK_REASON,
            lambda site: approval_steps.verdicts(pending, held, policy, scope, site),
        )
        for verdict in decided:
            record = verdict.record
            match verdict.action:
                case "run":
                    runnable.append(record)
                case "blocked":
                    ledger.block(state, record, verdict.rule, verdict.reason_ja)
                    results[record.tool_use_id] = ledger.result_for(record)
                case "rejected":
                    ledger.reject(record)
                    text = approval_steps.rejection_text(pending)
                    results[record.tool_use_id] = tool_result(record.tool_use_id, text, is_error=True)
                case "settled":
                    results[record.tool_use_id] = ledger.result_for(ledger.settled(state, record))
        ledger.run_commands(state, runnable, results)
        order = last_tool_use_ids(state.messages)
        ledger.answered(state, [results[i] for i in order if i in results])
        approval_protocol.resolve(state)

    # -- fleet runs -----------------------------------------------------------------------------------

    def plan_step(self, state: SessionState, planned: Planned) -> dict[str, object]:
        """A write of the canary's planning run becomes the plan's next step (it does not run): with the
        approval text read on the canary, looked-up values written back as `{name}`. The model is told."""
        record, role = planned.record, state.fleet
        item = self._item(state, record, approval_steps.PLAN_READ_REASON)
        if item is None:  # a step the person could not be told about is not planned
            return tool_result(record.tool_use_id, approval_steps.UNWORDED_JA, is_error=True)
        if role is not None and all(step.tool_use_id != record.tool_use_id for step in role.steps):
            role.steps.append(
                FleetStep(
                    tool_use_id=record.tool_use_id,
                    command=planned.template,
                    lookups=planned.lookups,
                    reason=record.reason,
                    category=record.category.value,
                    summary_ja=as_template(item.summary_ja, planned.values),
                    impact_ja=as_template(item.impact_ja, planned.values),
                )
            )
        text = (
            f"計画の手順{len(role.steps) if role else ''}として記録しました（このサイトでもまだ実行していません。"
            f"承認されると各サイトで順に実行されます）: wp {record.command}\n内容: {item.summary_ja}\n影響: {item.impact_ja}"
        )
        return tool_result(record.tool_use_id, text)

    def run_covered(
        self,
        state: SessionState,
        calls: list[ToolUseBlock],
        to_run: list[CommandRecord],
        held: list[CommandRecord],
        approved_up_front: dict[str, str],
    ) -> tuple[list[CommandRecord], list[CommandRecord]]:
        """A fleet site's held steps the fleet's one approval covers run with the others, in the plan's
        order (`approved_up_front` says by whom); otherwise nothing changes: the site asks its own."""
        approver = self.covered_by_fleet(state, held)
        if approver is None:
            return to_run, held
        for record in held:
            record.status, approved_up_front[record.tool_use_id] = CommandStatus.QUEUED, approver
        order = [call.id for call in calls]
        return sorted([*to_run, *held], key=lambda r: order.index(r.tool_use_id)), []

    def covered_by_fleet(self, state: SessionState, held: list[CommandRecord]) -> str | None:
        """Who approved them, when the fleet's one approval covers every held command of a site's run: each is
        a step of the approved plan whose approval text, read on this site now and its looked-up values
        written back as `{name}`, is the approved text. Otherwise None: the site asks for its own approval."""
        role = state.fleet
        if not held or role is None or role.mode != "apply" or role.approved_by is None:
            return None
        for record in held:
            index = step_index(state.run_id, record.tool_use_id)
            if index is None or index >= len(role.steps):
                return None
            step = role.steps[index]
            item = self._item(state, record, approval_steps.REREAD_REASON)
            if item is None:
                return None
            shown = (as_template(item.summary_ja, role.values), as_template(item.impact_ja, role.values))
            if shown != (step.summary_ja, step.impact_ja):
                return None
        return f"fleet:{role.fleet_run_id}:{role.approved_by}"

    # -- inside ---------------------------------------------------------------------------------------

    def _item(
        self, state: SessionState, record: CommandRecord, reason: str = approval_steps.READ_REASON
    ) -> ApprovalItem | None:
        """The record's approval text read on the site now; None when it could not be worded."""
        decision = self._deps.policy.classify_argv(record.argv)
        cannot_undo = self._deps.changes.cannot_undo(decision)
        return self._ledger.decided(
            state, reason, lambda site: approval_steps.approval_item(record, decision, site, cannot_undo)
        )

    def _refuse_unworded(
        self, state: SessionState, held: list[CommandRecord], items: Mapping[str, ApprovalItem | None]
    ) -> list[CommandRecord]:
        """A held command whose approval text could not be worded is refused, never asked about; when it
        is part of one change (an undo, a fleet site's plan: plan_waits_as_one), so is the rest of it.
        The records refused."""
        unworded = [record for record in held if items[record.tool_use_id] is None]
        if not unworded:
            return []
        refused = list(held) if state.reverts_run_id or state.fleet_applying else unworded
        for record in refused:
            reason = approval_steps.UNWORDED_JA if record in unworded else approval_steps.PART_UNWORDED_JA
            self._ledger.block(state, record, RULE_FAILED, reason)
            self._ledger.emit("command_blocked", f"ブロック: {reason}", record.command)
        return refused

    def _ask(
        self,
        state: SessionState,
        records: list[CommandRecord],
        asked: list[CommandRecord],
        items: list[ApprovalItem],
    ) -> None:
        """One new approval of `items`: `records` belong to it, `asked` are audited as asked."""
        approval_id = approval_steps.new_approval_id()
        expires_at = approval_steps.expires_at(self._deps.settings.wp_agent_approval_timeout_seconds)
        approval_protocol.request(state, approval_id=approval_id, items=items, expires_at=expires_at)
        self._ledger.ask(state, records, asked, approval_id)

    def _asked_again(self, state: SessionState, pending: PendingApproval, held: list[CommandRecord]) -> bool:
        """An approval is a contract on the text the person read: each approved command's summary is
        computed again on the site as it is now (another session may have changed it meanwhile). When
        any differs, nothing of this approval runs; the person is asked again with the new text."""
        waiting = [r for r in held if r.status is CommandStatus.HELD]
        shown = {item.tool_use_id: (item.summary_ja, item.impact_ja) for item in pending.items}
        items = {r.tool_use_id: self._item(state, r, approval_steps.REREAD_REASON) for r in waiting}
        refused = self._refuse_unworded(state, waiting, items)
        waiting = [record for record in waiting if record not in refused]
        fresh = [item for record in waiting if (item := items[record.tool_use_id]) is not None]
        if all(shown.get(item.tool_use_id) == (item.summary_ja, item.impact_ja) for item in fresh):
            return False
        ledger = self._ledger
        ids = {record.tool_use_id for record in waiting}
        superseded = sum(1 for a in state.approval_history if any(i.tool_use_id in ids for i in a.items))
        if superseded >= MAX_ASKED_AGAIN:  # the site changes at every look: never ask forever
            for record in waiting:
                ledger.block(state, record, SITE_KEEPS_CHANGING, _SITE_KEEPS_CHANGING_JA)
            return False
        approval_protocol.resolve(state)  # acted on: nothing ran
        for item in pending.items:
            ledger.audit(state, AuditEventType.APPROVAL_SUPERSEDED, command=item.command,
                         category=PolicyCategory.DESTRUCTIVE.value, rule=item.rule, approval_id=pending.approval_id)  # fmt: skip
        self._ask(state, held, waiting, fresh)
        ledger.emit("approval_needed", "承認後にサイトの状態が変わったため、もう一度確認が必要です")
        return True


def plan_waits_as_one(
    state: SessionState, calls: list[ToolUseBlock], to_run: list[CommandRecord], held: list[CommandRecord]
) -> tuple[list[CommandRecord], list[CommandRecord]]:
    """An undo, and a fleet site's run of its plan, is one change: when a person is asked about part of
    it, every write of it waits for that answer (declined, none of it runs; approved, all of it, in the
    plan's order). Reads still run. (The writes are marked held when the approval is asked: ledger.ask.)"""
    if not (state.reverts_run_id or state.fleet_applying) or not held:
        return to_run, held
    writes = [r for r in to_run if r.category is not PolicyCategory.READ and r.status is CommandStatus.QUEUED]
    order = [call.id for call in calls]
    waiting = sorted([*held, *writes], key=lambda r: order.index(r.tool_use_id))
    return [r for r in to_run if r not in writes], waiting
