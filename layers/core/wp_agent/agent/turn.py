"""AgentTurn: advance a session by one model call and the tool calls it asked for.

The parts that decide — the tool pipeline (validate → policy → site scope → post-type guard → loop
guard), the approval steps and summaries, the site lookup — return values and touch nothing; a decision
that needs the site's state asks for reads as data (policy/site_reads.py). The turn is the loop over them;
every change of the session is the ledger's (ledger.py: commands, quota, audit, the run's end, and each
save by its moment), approvals are the approval flow's (approval_flow.py).

A retried turn (Step Functions retries Lambda tasks; a save that lost to another writer) never re-runs a
command: intent is saved before, the result after; a command found "started" but not finished is of
unknown outcome. What `advance` does, by what the saved session says (checked in this order):

    status terminal ───────────────────────────────► COMPLETED / FAILED (a retry after the end)
    pending_approval PENDING ──────────────────────► AWAITING_APPROVAL (still waiting)
    pending_approval decided ─► resolve: run the approved / answer the rejected commands,
                                held_results + new results → one user message (then go on)
    messages[-1] is assistant ─► tool step again (a retry after the model answered)
    stop_reason set, or iterations at the cap ─────► FAILED (MAX_ITERATIONS_EXCEEDED)
    otherwise: [siteId → site URL] → [an undo run's planned first step] or ([first call of the run: the
               site's facts into its first user message] → model call) → assistant message → tool step

    tool step: each call decided (reads it asks for first), its outcome applied at once → the runnable
    ones run (ledger.run_commands) → any held: one approval → AWAITING_APPROVAL; no tool calls →
    COMPLETED (the text is the answer); an SSH failure → FAILED; else results → user message → CONTINUE
    (or FAILED when the loop guard set stop_reason).
"""

from __future__ import annotations

import logging
import time
from functools import partial
from typing import Any, cast

from wp_agent.agent import audit_outbox, lifecycle, site_lookup, stop_reasons
from wp_agent.agent.approval_flow import ApprovalFlow, plan_waits_as_one
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.ledger import Ledger, Moment, Results
from wp_agent.agent.messages import Content, ToolUseBlock, assistant_content, text_of, tool_uses
from wp_agent.agent.ports import AgentDeps, ApprovalDecision
from wp_agent.agent.prompt import cached_system_blocks, cached_tools
from wp_agent.agent.session_state import (
    ApprovalStatus,
    CommandRecord,
    SessionState,
    SessionStatus,
)
from wp_agent.agent.site_commands import SiteCommands
from wp_agent.agent.tool_pipeline import (
    LOOKUP_REASON,
    READ_REASON,
    Answer,
    Blocked,
    Hold,
    LoopStopped,
    Planned,
    Run,
    RunSoFar,
    Settled,
    ToolCallOutcome,
    ToolCallPipeline,
    Unknown,
)
from wp_agent.errors import StaleSessionError, WpAgentError
from wp_agent.models.workflow import Route
from wp_agent.policy.site_scope import SiteScope
from wp_agent.telemetry import API_CALLS_TOTAL, COMMANDS_BLOCKED_TOTAL, TURN_DURATION_SECONDS

logger = logging.getLogger(__name__)


class AgentTurn:
    """Advances sessions; one instance serves many (kept across warm invocations). Every change of a
    session goes through its ledger (ledger.py); approvals through the approval flow (approval_flow.py)."""

    def __init__(self, deps: AgentDeps) -> None:
        self._deps = deps
        self._pipeline = ToolCallPipeline(deps.policy, deps.settings)
        self._site = SiteCommands(deps.wp_cli, deps.limiter, deps.policy, deps.telemetry, deps.site_facts)
        self._ledger = Ledger(deps, self._site)
        self._approvals = ApprovalFlow(deps, self._ledger)

    def advance(self, state: SessionState) -> Route:
        started, stale = time.perf_counter(), False
        if state.audit_outbox:
            audit_outbox.deliver(state, self._deps.audit)  # what earlier steps could not write
        try:
            return self._advance(state)
        except StaleSessionError:
            stale = True  # another writer saved first: the caller runs the turn again on their state
            logger.info("stale session; the turn runs again", extra={"session_id": state.session_id})
            raise
        except WpAgentError as exc:
            logger.warning("turn failed", extra={"session_id": state.session_id, "error_code": exc.code})
            self._ledger.finish(state, SessionStatus.FAILED, error=exc)
            return Route.FAILED
        finally:
            spent = time.perf_counter() - started
            state.elapsed_ms += int(spent * 1000)
            self._deps.telemetry.seconds(TURN_DURATION_SECONDS, spent)
            if not stale:
                self._ledger.save(state, Moment.TURN_END)

    def decide(self, state: SessionState, decision: ApprovalDecision) -> None:
        """Record the requester's decision on the pending approval (the next advance acts on it)."""
        lifecycle.record_decision(state, decision)
        self._ledger.save(state, Moment.DECIDED)

    def expire_approval(self, state: SessionState) -> None:
        if lifecycle.expire_approval(state, simulated=self._deps.wp_cli.simulated):
            self._ledger.save(state, Moment.DECIDED)

    def cancel(self, state: SessionState) -> None:
        if lifecycle.cancel_run(state, simulated=self._deps.wp_cli.simulated):
            self._ledger.save(state, Moment.DECIDED)

    # -- the states (see the module docstring) ----------------------------------------------------

    def _advance(self, state: SessionState) -> Route:
        if state.status.terminal:
            return Route.COMPLETED if state.status is SessionStatus.COMPLETED else Route.FAILED
        pending = state.pending_approval
        if pending is not None:
            if pending.status is ApprovalStatus.PENDING:
                return Route.AWAITING_APPROVAL
            self._approvals.resolve(state)
            if state.status.terminal:
                return Route.FAILED
            if state.pending_approval is not None:  # the site changed: the person is asked again
                return Route.AWAITING_APPROVAL
        if state.messages and state.messages[-1]["role"] == "assistant":
            return self._tool_step(state, state.messages[-1]["content"])
        if state.stop_reason:
            return self._stop_for_loop(state)
        if state.iterations >= (state.input.max_iterations or self._deps.settings.agent_max_iterations):
            state.stop_reason = "iteration_cap"
            return self._stop_for_loop(state)
        options = state.input.multisite
        if options is not None and options.site_id is not None and state.site_url is None:
            self._look_up_site(state, options.site_id)
            if state.status.terminal:
                return Route.FAILED
        planned = bool(state.reverts_run_id) or state.fleet_applying  # planned, not asked of the model
        opening = self._deps.opening.first_step(state) if planned and not state.iterations else None
        closing = self._deps.opening.last_step(state) if planned and state.iterations else None
        if closing is not None:  # its steps ran (or were decided): the answer comes from the records
            self._ledger.finish(state, SessionStatus.COMPLETED, response=closing)
            return Route.COMPLETED if state.status is SessionStatus.COMPLETED else Route.FAILED
        if opening is not None:  # an undo run's revert plan, a fleet site's approved plan: not a model call
            audit_outbox.put(state, opening.audit)
            state.plan_approved_steps = dict(opening.approved_by_plan)
            state.iterations += 1
            state.messages.append({"role": "assistant", "content": opening.content})
            self._ledger.save(state, Moment.PLAN_OPENED)
            return self._tool_step(state, opening.content)
        return self._tool_step(state, self._call_model(state))

    def _call_model(self, state: SessionState) -> list[dict[str, Any]]:
        """One model call; its reply is saved as the assistant message before any tool runs."""
        if self._deps.site_facts and not state.iterations and state.site_facts_run_id != state.run_id:
            self._ledger.add_site_facts(state)  # None: no facts (an MCP client plans)
        if state.status is not SessionStatus.PLANNING:
            state.status = SessionStatus.PLANNING
            self._ledger.save(state, Moment.PLANNING)
        self._ledger.emit("model_call", "AIが次の手順を考えています…")
        self._deps.limiter.before_model_call()
        reply = self._deps.model.create(
            system=cached_system_blocks(),
            tools=cached_tools(fleet_planning=state.fleet_planning),
            messages=state.messages,
        )
        self._deps.telemetry.count(API_CALLS_TOTAL)
        state.iterations += 1
        state.usage.calls += 1
        for key, value in reply.usage.items():
            setattr(state.usage, key, getattr(state.usage, key) + int(value))
        problem = stop_reasons.reply_problem(reply)
        if problem is not None:  # refusal, or a tool call cut off: nothing of this reply runs
            raise problem
        content = assistant_content(reply.content)
        stop_reasons.mark_truncated_text(reply, content)
        content = content or [{"type": "text", "text": "（応答が空でした）"}]
        state.messages.append({"role": "assistant", "content": content})
        self._ledger.save(state, Moment.MODEL_REPLY)
        return content

    def _tool_step(self, state: SessionState, content: Content) -> Route:
        calls = tool_uses(content)
        if not calls:
            self._ledger.finish(state, SessionStatus.COMPLETED, response=text_of(content))
            return Route.COMPLETED if state.status is SessionStatus.COMPLETED else Route.FAILED
        state.status = SessionStatus.EXECUTING
        results = self._answer_tool_calls(state, calls)
        if state.pending_approval is not None and state.pending_approval.status is ApprovalStatus.PENDING:
            state.held_results = results
            state.status = SessionStatus.AWAITING_APPROVAL
            self._ledger.emit("approval_needed", "確認が必要な操作があります")
            return Route.AWAITING_APPROVAL
        if state.status.terminal:
            return Route.FAILED
        state.messages.append({"role": "user", "content": results})
        if state.stop_reason:
            return self._stop_for_loop(state)
        return Route.CONTINUE

    def _stop_for_loop(self, state: SessionState) -> Route:
        self._ledger.finish(
            state, SessionStatus.FAILED, error=stop_reasons.loop_stop_error(state, self._deps.settings)
        )
        return Route.FAILED

    # -- tool calls: decided, then applied --------------------------------------------------------

    def _answer_tool_calls(self, state: SessionState, calls: list[ToolUseBlock]) -> list[dict[str, Any]]:
        """Every call decided and its outcome applied in order (the loop guard sees the calls before
        it); the runnable ones run, the held ones become one approval."""
        results: Results = {}
        to_run: list[CommandRecord] = []
        held: list[CommandRecord] = []
        approved_up_front: dict[str, str] = {}  # tool-use id -> who approved it before it was asked
        scope = state.site_scope()
        changing = self._pipeline.changing_calls(calls)
        for index, call in enumerate(calls):
            existing = state.record(call.id)
            outcome = self._decide_call(state, call, index, existing, scope, alone=not changing - {index})
            if existing is None and not isinstance(outcome, Answer | Planned):
                state.commands.append(outcome.record)
            match outcome:
                case Answer(result):
                    results[call.id] = result
                case Blocked(record, answer):
                    results[call.id] = answer
                    self._ledger.audit_record(state, AuditEventType.COMMAND_BLOCKED, record)
                    self._deps.telemetry.count(COMMANDS_BLOCKED_TOTAL)
                    self._ledger.emit("command_blocked", f"ブロック: {record.policy_reason}", record.command)
                case LoopStopped(record, answer, stop_reason):
                    results[call.id] = answer
                    state.stop_reason = stop_reason
                    self._ledger.audit_record(state, AuditEventType.COMMAND_BLOCKED, record)
                case Run(record, approved_by):
                    if approved_by is not None:
                        approved_up_front[record.tool_use_id] = approved_by
                    to_run.append(record)
                case Hold(record):
                    held.append(record)
                case Planned():
                    results[call.id] = self._approvals.plan_step(state, outcome)
                case Settled(record) | Unknown(record):  # (only an Unknown one is still "started")
                    results[call.id] = self._ledger.result_for(
                        self._ledger.settled(state, record, stamp=True)
                    )
        to_run, held = self._approvals.run_covered(state, calls, to_run, held, approved_up_front)
        to_run, held = plan_waits_as_one(state, calls, to_run, held)
        for record in [r for r in to_run if r.tool_use_id in approved_up_front]:
            approver = approved_up_front[record.tool_use_id]
            self._ledger.audit_record(state, AuditEventType.APPROVAL_APPROVED, record, approver=approver)
        self._ledger.run_commands(state, to_run, results)
        if held and not state.status.terminal:
            self._approvals.hold(state, held, results)
        return [results[call.id] for call in calls if call.id in results]

    def _decide_call(
        self,
        state: SessionState,
        call: ToolUseBlock,
        index: int,
        existing: CommandRecord | None,
        scope: SiteScope,
        *,
        alone: bool,
    ) -> ToolCallOutcome:
        run = RunSoFar.of(
            state, scope, skip_allowed=self._deps.settings.agent_allow_skip_confirmation, alone_in_reply=alone
        )
        reason = LOOKUP_REASON if state.fleet_planning else READ_REASON
        decided = self._ledger.decided(
            state, reason, partial(self._pipeline.decide, call, index, existing, run)
        )
        return cast(ToolCallOutcome, decided)  # (mypy joins the union's members: T would be `object`)

    # -- the site: the lookup, reads for decisions, commands --------------------------------------

    def _look_up_site(self, state: SessionState, site_id: int) -> None:
        """multisite.siteId → state.site_url (a failed lookup ends the run)."""
        try:
            asked = site_lookup.lookup(self._deps.policy, state.run_id, site_id)
            state.site_url = site_lookup.looked_up_site_url(self._ledger.read_once(state, asked), site_id)
        except StaleSessionError:
            raise  # another writer saved first: the turn runs again on their state (advance)
        except WpAgentError as failure:
            self._ledger.finish(state, SessionStatus.FAILED, error=failure)
            return
        self._ledger.save(state, Moment.SITE_FOUND)
