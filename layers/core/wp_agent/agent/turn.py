"""AgentTurn: advance a session by one model call and the tool calls it asked for.

Every step is checkpointed through the SessionStore so that a retried turn (Step Functions retries
Lambda tasks) never re-runs a command: intent is recorded before a command runs, the result after.
A command found "started" but not finished is reported to the model as of unknown outcome.

What `advance` does, by what the saved session says (checked in this order):

    status terminal ───────────────────────────────► COMPLETED / FAILED (a retry after the end)
    pending_approval PENDING ──────────────────────► AWAITING_APPROVAL (still waiting)
    pending_approval decided ─► resolve: run the approved / answer the rejected commands,
                                held_results + new results → one user message (then go on)
    messages[-1] is assistant ─► tool step again (a retry after the model answered: decided calls
                                 reuse their records; a "started" one is of unknown outcome)
    stop_reason set, or iterations at the cap ─────► FAILED (MAX_ITERATIONS_EXCEEDED)
    otherwise: [siteId → site URL] → model call → assistant message → tool step

    tool step: each call through the pipeline (validate → policy → site scope → loop guard →
    hold or run) → run the runnable ones → if any held: hold them as one approval
    (held_results keeps the answers so far) → AWAITING_APPROVAL; no tool calls → COMPLETED
    (the text is the answer); an SSH failure → FAILED; else results → user message → CONTINUE
    (or FAILED when the loop guard set stop_reason).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from wp_agent.agent import audit_outbox, lifecycle, stop_reasons
from wp_agent.agent.approval_steps import ApprovalSteps
from wp_agent.agent.command_runner import CommandRunner
from wp_agent.agent.messages import Content, ToolUseBlock, assistant_content, text_of, tool_uses
from wp_agent.agent.ports import AgentDeps, ApprovalDecision
from wp_agent.agent.prompt import cached_system_blocks, cached_tools
from wp_agent.agent.session_state import ApprovalStatus, CommandRecord, SessionState, SessionStatus
from wp_agent.agent.site_lookup import resolve_site_id
from wp_agent.agent.tool_pipeline import (
    Answer,
    Hold,
    Run,
    ToolCallPipeline,
)
from wp_agent.agent.turn_io import TurnIO
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.models.workflow import Route
from wp_agent.telemetry import API_CALLS_TOTAL, TURN_DURATION_SECONDS

logger = logging.getLogger(__name__)


class AgentTurn:
    """Advances sessions; one instance serves many sessions (safe to keep across warm invocations)."""

    def __init__(self, deps: AgentDeps) -> None:
        self._deps = deps
        self._io = TurnIO(deps)
        self._runner = CommandRunner(self._io)
        self._pipeline = ToolCallPipeline(self._io)
        self._approvals = ApprovalSteps(self._io, self._runner)

    def advance(self, state: SessionState) -> Route:
        started = time.perf_counter()
        audit_outbox.deliver(state, self._deps.audit)  # what earlier steps could not write
        try:
            return self._advance(state)
        except WpAgentError as exc:
            logger.warning(
                "turn failed", extra={"session_id": state.session_id, "error_code": exc.code.value}
            )
            self._io.finish(state, SessionStatus.FAILED, error=exc)
            return Route.FAILED
        finally:
            spent = time.perf_counter() - started
            state.elapsed_ms += int(spent * 1000)
            self._deps.telemetry.seconds(TURN_DURATION_SECONDS, spent)
            self._io.checkpoint(state)

    def decide(self, state: SessionState, decision: ApprovalDecision) -> None:
        """Record the requester's decision on the pending approval (the next advance acts on it)."""
        lifecycle.record_decision(state, decision)
        self._io.checkpoint(state)

    def expire_approval(self, state: SessionState) -> None:
        if lifecycle.expire_approval(state, simulated=self._deps.wp_cli.simulated):
            self._io.checkpoint(state)

    def cancel(self, state: SessionState) -> None:
        if lifecycle.cancel_run(state, simulated=self._deps.wp_cli.simulated):
            self._io.checkpoint(state)

    # -- the loop (see the module docstring) ----------------------------------------------------

    def _advance(self, state: SessionState) -> Route:
        if state.status.terminal:
            return Route.COMPLETED if state.status is SessionStatus.COMPLETED else Route.FAILED
        pending = state.pending_approval
        if pending is not None:
            if pending.status is ApprovalStatus.PENDING:
                return Route.AWAITING_APPROVAL
            self._approvals.resolve(state, pending)
            if state.status.terminal:
                return Route.FAILED
        if state.messages and state.messages[-1]["role"] == "assistant":
            return self._tool_step(state, state.messages[-1]["content"])
        if state.stop_reason:
            return self._stop_for_loop(state)
        if state.iterations >= (state.input.max_iterations or self._deps.settings.agent_max_iterations):
            state.stop_reason = "iteration_cap"
            return self._stop_for_loop(state)
        options = state.input.multisite
        if options is not None and options.site_id is not None and state.site_url is None:
            resolve_site_id(self._io, self._runner, state, options.site_id)
            if state.status.terminal:
                return Route.FAILED
        opening = self._deps.changes.opening_step(state) if state.iterations == 0 else None
        if opening is not None:  # an undo run: its first step is the revert plan, not a model call
            state.iterations += 1
            state.messages.append({"role": "assistant", "content": opening})
            self._io.checkpoint(state)
            return self._tool_step(state, opening)
        return self._tool_step(state, self._call_model(state))

    def _call_model(self, state: SessionState) -> list[dict[str, Any]]:
        """One model call; its reply is saved as the assistant message before any tool runs."""
        state.status = SessionStatus.PLANNING
        self._io.checkpoint(state)
        self._io.emit("model_call", "AIが次の手順を考えています…")
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
        self._io.checkpoint(state)
        return content

    def _tool_step(self, state: SessionState, content: Content) -> Route:
        calls = tool_uses(content)
        if not calls:
            self._io.finish(state, SessionStatus.COMPLETED, response=text_of(content))
            return Route.COMPLETED
        state.status = SessionStatus.EXECUTING
        results = self._answer_tool_calls(state, calls)
        if state.pending_approval is not None and state.pending_approval.status is ApprovalStatus.PENDING:
            state.held_results = results
            state.status = SessionStatus.AWAITING_APPROVAL
            self._io.emit("approval_needed", "確認が必要な操作があります")
            return Route.AWAITING_APPROVAL
        if state.status.terminal:
            return Route.FAILED
        state.messages.append({"role": "user", "content": results})
        if state.stop_reason:
            return self._stop_for_loop(state)
        return Route.CONTINUE

    def _answer_tool_calls(self, state: SessionState, calls: list[ToolUseBlock]) -> list[dict[str, Any]]:
        """Every call through the pipeline; the runnable ones run, the held ones become one approval."""
        results: dict[str, dict[str, Any]] = {}
        to_run: list[CommandRecord] = []
        held: list[CommandRecord] = []
        for index, call in enumerate(calls):
            match self._pipeline.decide(state, index, call):
                case Answer(result):
                    results[call.id] = result
                case Run(record):
                    to_run.append(record)
                case Hold(record):
                    held.append(record)
        self._io.checkpoint(state)
        self._runner.run_all(state, to_run, results)
        if held and not state.status.terminal:
            self._approvals.hold(state, held)
        return [results[call.id] for call in calls if call.id in results]

    def _stop_for_loop(self, state: SessionState) -> Route:
        limit = state.input.max_iterations or self._deps.settings.agent_max_iterations
        messages = {
            "iteration_cap": f"処理回数の上限（{limit}回）に達したため中断しました。",
            "repeated_command": "同じコマンドが繰り返されたため、暴走を防ぐために中断しました。",
            "command_cap": f"実行コマンド数の上限（{self._deps.settings.agent_max_commands}件）に達したため中断しました。",
        }
        reason = state.stop_reason or "iteration_cap"
        error = WpAgentError(
            AgentErrorCode.MAX_ITERATIONS_EXCEEDED,
            messages[reason] + "ここまでの結果を返します。",
            details={"reason": reason, "iterations": state.iterations},
        )
        self._io.finish(state, SessionStatus.FAILED, error=error)
        return Route.FAILED
