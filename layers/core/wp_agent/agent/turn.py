"""AgentTurn: advance a session by one model call and the tool calls it asked for.

This file is where a turn changes things. The parts that decide — the tool pipeline (validate → policy
→ site scope → post-type guard → loop guard), the approval steps and summaries, the site lookup —
return values and touch nothing; a decision that needs the site's state asks for reads as data
(agent/site_reads.py) and the turn runs them. Every effect is here: the session's changes, the
checkpoint (saved, then its audit records delivered: audit_outbox.save_and_deliver, their one home),
audit records, reads and commands on the site (site_commands.py), progress and telemetry.

A retried turn (Step Functions retries Lambda tasks; a save that lost to another writer) never re-runs a
command: intent is saved before, the result after; a command found "started" but not finished is of
unknown outcome. A command counts against the user's quota once, by its intent (held ones when held).

What `advance` does, by what the saved session says (checked in this order):

    status terminal ───────────────────────────────► COMPLETED / FAILED (a retry after the end)
    pending_approval PENDING ──────────────────────► AWAITING_APPROVAL (still waiting)
    pending_approval decided ─► resolve: run the approved / answer the rejected commands,
                                held_results + new results → one user message (then go on)
    messages[-1] is assistant ─► tool step again (a retry after the model answered: decided calls
                                 reuse their records; a "started" one is of unknown outcome)
    stop_reason set, or iterations at the cap ─────► FAILED (MAX_ITERATIONS_EXCEEDED)
    otherwise: [siteId → site URL] → [an undo run's planned first step] or ([first call of the run: the
               site's facts into its first user message, checkpoint] → model call) → assistant message
               (checkpoint) → tool step

    tool step: each call decided (reads it asks for first), its outcome applied at once → the runnable
    ones run (before-images; per command: intent checkpoint, run, result + audit checkpoint; after-
    images) → any held: one approval (summaries read from the site; held_results keeps the answers so
    far) → AWAITING_APPROVAL; no tool calls → COMPLETED (the text is the answer); an SSH failure →
    FAILED; else results → user message → CONTINUE (or FAILED when the loop guard set stop_reason).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from wp_agent import clock
from wp_agent.agent import (
    approval_protocol,
    approval_steps,
    audit_outbox,
    lifecycle,
    site_facts,
    site_lookup,
    stop_reasons,
)
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.messages import Content, ToolUseBlock, assistant_content, text_of, tool_uses
from wp_agent.agent.ports import AgentDeps, ApprovalDecision, ProgressEvent
from wp_agent.agent.prompt import cached_system_blocks, cached_tools
from wp_agent.agent.session_state import (
    ApprovalItem,
    ApprovalStatus,
    CommandRecord,
    CommandStatus,
    PendingApproval,
    SessionState,
    SessionStatus,
)
from wp_agent.agent.site_commands import SiteCommands
from wp_agent.agent.site_reads import SiteReads
from wp_agent.agent.site_scope import SiteScope
from wp_agent.agent.tool_pipeline import (
    READ_REASON,
    Answer,
    Blocked,
    Hold,
    LoopStopped,
    Run,
    RunSoFar,
    Settled,
    ToolCallOutcome,
    ToolCallPipeline,
    Unknown,
)
from wp_agent.agent.tool_results import last_tool_use_ids, outcome_fields, result_for, tool_result
from wp_agent.errors import AgentErrorCode, StaleSessionError, WpAgentError
from wp_agent.models.workflow import Route
from wp_agent.policy import PolicyCategory
from wp_agent.telemetry import (
    API_CALLS_TOTAL,
    APPROVALS_REQUESTED_TOTAL,
    COMMANDS_BLOCKED_TOTAL,
    TURN_DURATION_SECONDS,
)

logger = logging.getLogger(__name__)
T = TypeVar("T")
MAX_ASKED_AGAIN = 2  # approvals superseded for one command before it is refused instead
SITE_KEEPS_CHANGING = "approval.site_keeps_changing"
Results = dict[str, dict[str, Any]]  # tool_result blocks by tool_use id


class AgentTurn:
    """Advances sessions; one instance serves many (kept across warm invocations). The commands of one
    tool step run in parallel and change the session under the lock."""

    def __init__(self, deps: AgentDeps) -> None:
        self._deps = deps
        self._pipeline = ToolCallPipeline(deps.policy, deps.settings)
        self._site = SiteCommands(deps.wp_cli, deps.limiter, deps.policy, deps.telemetry, deps.site_facts)
        self._lock = threading.RLock()

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
            self._finish(state, SessionStatus.FAILED, error=exc)
            return Route.FAILED
        finally:
            spent = time.perf_counter() - started
            state.elapsed_ms += int(spent * 1000)
            self._deps.telemetry.seconds(TURN_DURATION_SECONDS, spent)
            if not stale:
                self._checkpoint(state)

    def decide(self, state: SessionState, decision: ApprovalDecision) -> None:
        """Record the requester's decision on the pending approval (the next advance acts on it)."""
        lifecycle.record_decision(state, decision)
        self._checkpoint(state)

    def expire_approval(self, state: SessionState) -> None:
        if lifecycle.expire_approval(state, simulated=self._deps.wp_cli.simulated):
            self._checkpoint(state)

    def cancel(self, state: SessionState) -> None:
        if lifecycle.cancel_run(state, simulated=self._deps.wp_cli.simulated):
            self._checkpoint(state)

    # -- the states (see the module docstring) ----------------------------------------------------

    def _advance(self, state: SessionState) -> Route:
        if state.status.terminal:
            return Route.COMPLETED if state.status is SessionStatus.COMPLETED else Route.FAILED
        pending = state.pending_approval
        if pending is not None:
            if pending.status is ApprovalStatus.PENDING:
                return Route.AWAITING_APPROVAL
            self._resolve_approval(state)
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
        planned = bool(state.reverts_run_id)  # an undo run: planned, not asked of the model
        opening = self._deps.opening.first_step(state) if planned and not state.iterations else None
        closing = self._deps.opening.last_step(state) if planned and state.iterations else None
        if closing is not None:  # its steps ran (or were decided): the answer comes from the records
            self._finish(state, SessionStatus.COMPLETED, response=closing)
            return Route.COMPLETED if state.status is SessionStatus.COMPLETED else Route.FAILED
        if opening is not None:  # an undo run: its first step is the revert plan, not a model call
            audit_outbox.put(state, opening.audit)
            state.plan_approved_steps = dict(opening.approved_by_plan)
            state.iterations += 1
            state.messages.append({"role": "assistant", "content": opening.content})
            self._checkpoint(state)
            return self._tool_step(state, opening.content)
        return self._tool_step(state, self._call_model(state))

    def _call_model(self, state: SessionState) -> list[dict[str, Any]]:
        """One model call; its reply is saved as the assistant message before any tool runs."""
        if self._deps.site_facts and not state.iterations and state.site_facts_run_id != state.run_id:
            self._add_site_facts(state)  # None: no facts (an MCP client plans)
        if state.status is not SessionStatus.PLANNING:
            state.status = SessionStatus.PLANNING
            self._checkpoint(state)
        self._emit("model_call", "AIが次の手順を考えています…")
        self._deps.limiter.before_model_call()
        reply = self._deps.model.create(
            system=cached_system_blocks(), tools=cached_tools(), messages=state.messages
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
        self._checkpoint(state)
        return content

    def _tool_step(self, state: SessionState, content: Content) -> Route:
        calls = tool_uses(content)
        if not calls:
            self._finish(state, SessionStatus.COMPLETED, response=text_of(content))
            return Route.COMPLETED if state.status is SessionStatus.COMPLETED else Route.FAILED
        state.status = SessionStatus.EXECUTING
        results = self._answer_tool_calls(state, calls)
        if state.pending_approval is not None and state.pending_approval.status is ApprovalStatus.PENDING:
            state.held_results = results
            state.status = SessionStatus.AWAITING_APPROVAL
            self._emit("approval_needed", "確認が必要な操作があります")
            return Route.AWAITING_APPROVAL
        if state.status.terminal:
            return Route.FAILED
        state.messages.append({"role": "user", "content": results})
        if state.stop_reason:
            return self._stop_for_loop(state)
        return Route.CONTINUE

    def _stop_for_loop(self, state: SessionState) -> Route:
        self._finish(
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
        scope = SiteScope.of(state)
        changing = self._pipeline.changing_calls(calls)
        for index, call in enumerate(calls):
            existing = state.record(call.id)
            outcome = self._decide_call(state, call, index, existing, scope, alone=not changing - {index})
            if existing is None and not isinstance(outcome, Answer):
                state.commands.append(outcome.record)
            match outcome:
                case Answer(result):
                    results[call.id] = result
                case Blocked(record, answer):
                    results[call.id] = answer
                    self._audit_record(state, AuditEventType.COMMAND_BLOCKED, record)
                    self._deps.telemetry.count(COMMANDS_BLOCKED_TOTAL)
                    self._emit("command_blocked", f"ブロック: {record.policy_reason}", record.command)
                case LoopStopped(record, answer, stop_reason):
                    results[call.id] = answer
                    state.stop_reason = stop_reason
                    self._audit_record(state, AuditEventType.COMMAND_BLOCKED, record)
                case Run(record, approved_by):
                    if approved_by is not None:
                        approved_up_front[record.tool_use_id] = approved_by
                    to_run.append(record)
                case Hold(record):
                    held.append(record)
                case Settled(record):
                    results[call.id] = self._result_for(record)
                case Unknown(record):
                    results[call.id] = self._result_for(self._settled(state, record, stamp=True))
        to_run, held = _undo_waits_as_one(state, calls, to_run, held)
        for record in [r for r in to_run if r.tool_use_id in approved_up_front]:
            approver = approved_up_front[record.tool_use_id]
            self._audit_record(state, AuditEventType.APPROVAL_APPROVED, record, approver=approver)
        self._run_commands(state, to_run, results)
        if held and not state.status.terminal:
            self._hold(state, held, results)
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
        return self._decided(
            state, READ_REASON, lambda site: self._pipeline.decide(call, index, existing, run, site)
        )

    def _settled(self, state: SessionState, record: CommandRecord, *, stamp: bool = False) -> CommandRecord:
        """A record a crashed attempt left "started": its outcome is unknown (never run twice)."""
        if record.status is CommandStatus.STARTED:
            record.status = CommandStatus.UNKNOWN
            if stamp:
                record.finished_at = clock.now_iso()
            self._audit_record(state, AuditEventType.COMMAND_OUTCOME_UNKNOWN, record)
        return record

    # -- approvals: held, then resolved -----------------------------------------------------------

    def _hold(self, state: SessionState, held: list[CommandRecord], results: Results) -> None:
        """The held commands within the user's quota (counted now, so an approved one always runs)
        become one approval, each with a summary read from the site."""
        if state.pending_approval is not None and state.pending_approval.status is ApprovalStatus.PENDING:
            return  # a retried turn: the approval already exists
        for record in [r for r in held if not self._within_quota(state, r)]:
            held.remove(record)
            results[record.tool_use_id] = self._result_for(record)
        if not held:
            return
        deps = self._deps
        approval_id = approval_steps.new_approval_id()
        items = [self._approval_item(state, record) for record in held]
        for record in held:
            record.approval_id = approval_id
        expires_at = approval_steps.expires_at(deps.settings.wp_agent_approval_timeout_seconds)
        approval_protocol.request(state, approval_id=approval_id, items=items, expires_at=expires_at)
        for record in held:
            self._audit_record(state, AuditEventType.APPROVAL_REQUESTED, record, approval_id=approval_id)
        deps.telemetry.count(APPROVALS_REQUESTED_TOTAL)

    def _approval_item(
        self, state: SessionState, record: CommandRecord, reason: str = approval_steps.READ_REASON
    ) -> ApprovalItem:
        decision = self._deps.policy.classify_argv(record.argv)
        cannot_undo = self._deps.changes.cannot_undo(decision)
        return self._decided(
            state, reason, lambda site: approval_steps.approval_item(record, decision, site, cannot_undo)
        )

    def _resolve_approval(self, state: SessionState) -> None:
        """The decision acted on: approved commands run, the others are answered; the answers held
        back while waiting and the new ones go to the model in the call order."""
        pending = state.pending_approval
        if pending is None or not approval_protocol.decided(pending):
            return  # expired: nothing held runs (the run has ended)
        held = [r for r in state.commands if r.approval_id == pending.approval_id]
        if pending.status is ApprovalStatus.APPROVED and self._asked_again(state, pending, held):
            return
        results = {r["tool_use_id"]: r for r in state.held_results}
        runnable: list[CommandRecord] = []
        for verdict in approval_steps.verdicts(pending, held, self._deps.policy, SiteScope.of(state)):
            record = verdict.record
            match verdict.action:
                case "run":
                    runnable.append(record)
                case "blocked":
                    record.status, record.rule = CommandStatus.BLOCKED, verdict.rule
                    record.policy_reason = verdict.reason_ja
                    self._audit_record(state, AuditEventType.COMMAND_BLOCKED, record)
                    results[record.tool_use_id] = self._result_for(record)
                case "rejected":
                    record.status = CommandStatus.REJECTED
                    text = approval_steps.rejection_text(pending)
                    results[record.tool_use_id] = tool_result(record.tool_use_id, text, is_error=True)
                case "settled":
                    results[record.tool_use_id] = self._result_for(self._settled(state, record))
        self._run_commands(state, runnable, results)
        order = last_tool_use_ids(state.messages)
        state.messages.append({"role": "user", "content": [results[i] for i in order if i in results]})
        state.held_results = []
        approval_protocol.resolve(state)
        if not state.status.terminal:  # an SSH failure while running the approved commands ends the run
            state.status = SessionStatus.EXECUTING

    def _asked_again(self, state: SessionState, pending: PendingApproval, held: list[CommandRecord]) -> bool:
        """An approval is a contract on the text the person read: each approved command's summary is
        computed again on the site as it is now (another session may have changed it meanwhile). When
        any differs, nothing of this approval runs; the person is asked again with the new text."""
        waiting = [r for r in held if r.status is CommandStatus.HELD]
        shown = {item.tool_use_id: (item.summary_ja, item.impact_ja) for item in pending.items}
        fresh = [self._approval_item(state, record, approval_steps.REREAD_REASON) for record in waiting]
        if all(shown.get(item.tool_use_id) == (item.summary_ja, item.impact_ja) for item in fresh):
            return False
        ids = {record.tool_use_id for record in waiting}
        superseded = sum(1 for a in state.approval_history if any(i.tool_use_id in ids for i in a.items))
        if superseded >= MAX_ASKED_AGAIN:  # the site changes at every look: never ask forever
            for record in waiting:
                record.status, record.rule = CommandStatus.BLOCKED, SITE_KEEPS_CHANGING
                record.policy_reason = (
                    "承認のたびにサイトの状態が変わり、確認した内容のまま実行できないため、実行しませんでした。"
                    "状態が落ち着いてからもう一度依頼してください"
                )
                self._audit_record(state, AuditEventType.COMMAND_BLOCKED, record)
            return False
        approval_protocol.resolve(state)  # acted on: nothing ran
        for item in pending.items:
            self._audit(
                state,
                AuditEventType.APPROVAL_SUPERSEDED,
                command=item.command,
                category=PolicyCategory.DESTRUCTIVE.value,
                rule=item.rule,
                approval_id=pending.approval_id,
            )
        approval_id = approval_steps.new_approval_id()
        for record in held:
            record.approval_id = approval_id
        expires_at = approval_steps.expires_at(self._deps.settings.wp_agent_approval_timeout_seconds)
        approval_protocol.request(state, approval_id=approval_id, items=fresh, expires_at=expires_at)
        for record in waiting:
            self._audit_record(state, AuditEventType.APPROVAL_REQUESTED, record, approval_id=approval_id)
        state.status = SessionStatus.AWAITING_APPROVAL
        self._emit("approval_needed", "承認後にサイトの状態が変わったため、もう一度確認が必要です")
        return True

    # -- the site: the lookup, reads for decisions, commands --------------------------------------

    def _look_up_site(self, state: SessionState, site_id: int) -> None:
        """multisite.siteId → state.site_url (a failed lookup ends the run)."""
        try:
            record = site_lookup.lookup(self._deps.policy, state.run_id, site_id)
        except WpAgentError as refused:
            self._finish(state, SessionStatus.FAILED, error=refused)
            return
        found = state.record(record.tool_use_id)
        if found is None:
            state.commands.append(record)
            found = self._execute(state, record)
        elif found.status is CommandStatus.STARTED:
            # Interrupted by a crash. The lookup only reads, so it is asked again (and audited as
            # such) rather than failing the run; anything else is never run twice.
            found = self._settled(state, found)
            if found.category is PolicyCategory.READ:
                found.status = CommandStatus.QUEUED
                found = self._execute(state, found)
        try:
            state.site_url = site_lookup.looked_up_site_url(found, site_id)
        except WpAgentError as failure:
            self._finish(state, SessionStatus.FAILED, error=failure)
            return
        self._checkpoint(state)

    def _add_site_facts(self, state: SessionState) -> None:
        """The site's facts (site_facts.py) head the run's first message, saved before the model sees them."""
        plan = site_facts.FactsPlan(state.site_url, self._deps.wp_user)
        answers, audited = self._site.facts(SiteScope.of(state), state.target_id, plan)
        for fields in audited:
            self._audit(state, AuditEventType.COMMAND_EXECUTED, **fields)
        facts = site_facts.describe(plan, answers, now=self._deps.clock())
        state.messages[-1]["content"] = site_facts.with_facts(state.messages[-1]["content"], facts)
        state.site_facts_run_id = state.run_id
        state.site_time_zone = site_facts.time_zone_of(answers) or state.site_time_zone
        state.status = SessionStatus.PLANNING
        self._checkpoint(state, ran=bool(audited))

    def _decided(self, state: SessionState, reason: str, decide: Callable[[SiteReads], T]) -> T:
        """What `decide` decides once the site has answered the reads it asks for (audited)."""
        decided, audited = self._site.decided(SiteScope.of(state), state.target_id, reason, decide)
        for fields in audited:
            self._audit(state, AuditEventType.COMMAND_EXECUTED, **fields)
        return decided

    def _run_commands(self, state: SessionState, records: Sequence[CommandRecord], results: Results) -> None:
        """Run `records` (reads side by side up to the executor's concurrency, each write alone, in
        the call order), their before- and after-images around them, putting each one's tool_result
        into `results`."""
        if not records:
            return
        by_id = {r.tool_use_id: r for r in records}
        scope = SiteScope.of(state)
        for tool_use_id, capture in self._deps.changes.before(records, scope, state.target_id).items():
            by_id[tool_use_id].undo = capture
        for batch in side_by_side(records):
            workers = max(1, min(len(batch), self._deps.wp_cli.max_concurrency))
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="wp-cli") as pool:
                for record in pool.map(lambda r: self._execute(state, r), batch):
                    results[record.tool_use_id] = self._result_for(record)
        for tool_use_id, capture in self._deps.changes.after(records, scope, state.target_id).items():
            by_id[tool_use_id].undo = capture
        fatal = next((r for r in records if r.error_code is AgentErrorCode.SSH_CONNECTION_FAILED), None)
        if fatal is not None:
            error = WpAgentError(
                AgentErrorCode.SSH_CONNECTION_FAILED,
                details={"command": fatal.command, "reason": fatal.stderr},
            )
            self._finish(state, SessionStatus.FAILED, error=error)

    def _execute(self, state: SessionState, record: CommandRecord) -> CommandRecord:
        """One command: the user's command quota, intent saved, run, result saved with its audit record."""
        if not self._within_quota(state, record):
            return record
        with self._lock:
            record.status = CommandStatus.STARTED
            record.started_at = clock.now_iso()
            self._checkpoint(state)  # intent before the command runs
        self._emit("command_started", f"実行中: wp {record.command}", record.command)
        started = time.perf_counter()
        try:
            outcome = outcome_fields(self._site.run(state.target_id, record.argv))
        except WpAgentError as exc:
            outcome = {"exit_code": None, "stdout": "", "stderr": exc.message_ja, "error_code": exc.code}
        with self._lock:
            for key, value in outcome.items():
                setattr(record, key, value)
            record.status = CommandStatus.FINISHED
            record.finished_at = clock.now_iso()
            record.duration_ms = int((time.perf_counter() - started) * 1000)
            self._audit_record(state, AuditEventType.COMMAND_EXECUTED, record)  # saved with the result
            self._checkpoint(state, ran=True)  # result after
        self._report(state, record)
        return record

    def _within_quota(self, state: SessionState, record: CommandRecord) -> bool:
        """The user's command quota, taken once per command (by its intent: a retried turn and an
        approved command find their count taken). A refusal is recorded, audited and saved."""
        refused = self._site.over_quota(state.user_id, state.intent_id(record))
        if refused is None:
            return True
        with self._lock:
            record.status, record.rule, record.policy_reason = CommandStatus.BLOCKED, *refused
            self._audit_record(state, AuditEventType.COMMAND_BLOCKED, record)
            self._checkpoint(state)
        return False

    # -- effects: checkpoint, audit, progress, telemetry, the run's end ---------------------------

    def _checkpoint(self, state: SessionState, *, ran: bool = False) -> None:
        """Save the state, then deliver the audit records it holds (they are true once saved). `ran`:
        they say what ran on the site, so they are written even when the session could not be saved
        (e.g. a cancel changed it meanwhile)."""
        with self._lock:
            try:
                audit_outbox.save_and_deliver(self._deps.store, self._deps.audit, state)
            except Exception:
                if ran:
                    audit_outbox.deliver(state, self._deps.audit)
                raise

    def _finish(self, state: SessionState, status: SessionStatus, **outcome: Any) -> None:
        """The run ends: its AgentOutput from the records (`response`, `error`)."""
        lifecycle.finish(state, status, simulated=self._deps.wp_cli.simulated, **outcome)

    def _emit(self, kind: str, message: str, command: str | None = None) -> None:
        if self._deps.progress is not None:
            self._deps.progress(ProgressEvent(kind, message, command))

    def _result_for(self, record: CommandRecord) -> dict[str, Any]:
        timeout_ms, simulated = self._deps.settings.wp_cli_timeout, self._deps.wp_cli.simulated
        return result_for(record, timeout_ms=timeout_ms, simulated=simulated)

    def _audit(self, state: SessionState, event_type: AuditEventType, **fields: Any) -> None:
        """A record into the session's outbox: it reaches the audit log with the next checkpoint."""
        event = audit_outbox.new_event(event_type, state.audit_about(), **fields)
        with self._lock:
            state.audit_outbox.append(event)

    def _audit_record(
        self, state: SessionState, kind: AuditEventType, record: CommandRecord, **extra: Any
    ) -> None:
        self._audit(state, kind, **audit_outbox.command_fields(record, kind, **extra))

    def _report(self, state: SessionState, record: CommandRecord) -> None:
        self._site.report(record, **state.audit_about())
        done = f"{'完了' if record.succeeded else '失敗'}: wp {record.command}（{record.duration_ms}ms）"
        self._emit("command_finished", done, record.command)


def side_by_side(records: Sequence[CommandRecord]) -> list[list[CommandRecord]]:
    """The reply's commands in the order given, grouped into what may run at once: consecutive reads
    together, every write alone. Two writes of one reply can touch the same stored value (three
    `widget add` read-modify-write one option; a post and its meta): side by side, WordPress keeps
    one and each reports success."""
    batches: list[list[CommandRecord]] = []
    for record in records:
        read = record.category is PolicyCategory.READ
        if read and batches and all(r.category is PolicyCategory.READ for r in batches[-1]):
            batches[-1].append(record)
        else:
            batches.append([record])
    return batches


def _undo_waits_as_one(
    state: SessionState, calls: list[ToolUseBlock], to_run: list[CommandRecord], held: list[CommandRecord]
) -> tuple[list[CommandRecord], list[CommandRecord]]:
    """An undo is one change: when a person is asked about part of it, every write of it waits for that
    answer (declined, none of it runs; approved, all of it, in the plan's order). Reads still run."""
    if not state.reverts_run_id or not held:
        return to_run, held
    writes = [r for r in to_run if r.category is not PolicyCategory.READ and r.status is CommandStatus.QUEUED]
    for record in writes:
        record.status = CommandStatus.HELD
    order = [call.id for call in calls]
    waiting = sorted([*held, *writes], key=lambda r: order.index(r.tool_use_id))
    return [r for r in to_run if r not in writes], waiting
