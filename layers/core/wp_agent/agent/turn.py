"""AgentTurn: advance a session by one model call and the tool calls it asked for.

Every step is checkpointed through the SessionStore so that a retried turn (Step Functions retries
Lambda tasks) never re-runs a command: intent is recorded before a command runs, the result after.
A command found "started" but not finished is reported to the model as of unknown outcome.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from wp_agent.agent import approval_protocol, audit_outbox, lifecycle
from wp_agent.agent.approval_summary import StateReader, describe
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.model_client import ModelClient
from wp_agent.agent.ports import (
    ApprovalDecision,
    AuditLog,
    RateLimiter,
    SessionStore,
)
from wp_agent.agent.prompt import TOOL_NAME, cached_system_blocks, cached_tools, multisite_note
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
from wp_agent.agent.tool_results import close_open_tool_calls, result_for, tool_result
from wp_agent.config import Settings
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.port import WpCli
from wp_agent.models.agent_io import AgentInput, utc_now_iso
from wp_agent.policy import CommandPolicy, PolicyCategory, PolicyDecision
from wp_agent.policy.masking import mask_command, mask_command_output, mask_text
from wp_agent.telemetry import (
    API_CALLS_TOTAL,
    APPROVALS_REQUESTED_TOTAL,
    COMMANDS_BLOCKED_TOTAL,
    COMMANDS_EXECUTED_TOTAL,
    SSH_CONNECTION_FAILURES_TOTAL,
    TURN_DURATION_SECONDS,
    NoTelemetry,
    Telemetry,
)
from wp_agent.undo import agent_turn as undo_turn
from wp_agent.undo import recorder as undo_recorder
from wp_agent.undo.capture import with_undo_note

logger = logging.getLogger(__name__)

MAX_TOOL_CALLS_PER_RESPONSE = 10
_OBSERVE_REASON = "承認の要約のために現在の状態を確認（読み取りのみ）"
REPEAT_LIMIT = 2  # the same argv may run twice (e.g. check before and after); a third time is a loop


class TurnResult(StrEnum):
    CONTINUE = "CONTINUE"
    AWAITING_APPROVAL = "AWAITING_APPROVAL"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


@dataclass(frozen=True)
class ProgressEvent:
    kind: str  # model_call | command_started | command_finished | command_blocked | approval_needed
    message_ja: str
    command: str | None = None


ProgressListener = Callable[[ProgressEvent], None]


class WpCliToolInput(BaseModel):
    model_config = ConfigDict(extra="ignore")
    command: str = Field(min_length=1, max_length=200_000)
    reason: str = Field(default="", max_length=2_000)


@dataclass
class AgentDeps:
    model: ModelClient
    wp_cli: WpCli
    policy: CommandPolicy
    audit: AuditLog
    limiter: RateLimiter
    store: SessionStore
    settings: Settings
    progress: ProgressListener | None = None
    telemetry: Telemetry = field(default_factory=NoTelemetry)


def _sanitise_assistant_content(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep only the fields the Messages API accepts back in an assistant turn."""
    kept: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            kept.append({"type": "text", "text": block["text"]})
        elif kind == "tool_use":
            kept.append(
                {
                    "type": "tool_use",
                    "id": block["id"],
                    "name": block["name"],
                    "input": block.get("input", {}),
                }
            )
        elif kind == "thinking":
            kept.append(
                {
                    "type": "thinking",
                    "thinking": block.get("thinking", ""),
                    "signature": block.get("signature", ""),
                }
            )
        elif kind == "redacted_thinking":
            kept.append({"type": "redacted_thinking", "data": block.get("data", "")})
    return kept


def _as_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def new_run_id() -> str:
    return f"run_{uuid.uuid4().hex[:20]}"


def new_session(
    agent_input: AgentInput,
    *,
    session_id: str,
    user_id: str,
    target_id: str,
    site_url: str | None = None,
    run_id: str | None = None,
) -> SessionState:
    """Initial state: conversation history (text only) + the new instruction as the last user message."""
    messages: list[dict[str, Any]] = []
    for item in agent_input.conversation_history or []:
        content = (
            item.content
            if isinstance(item.content, str)
            else [b for b in item.content if b.get("type") == "text"]
        )
        if not content:
            continue
        if messages and messages[-1]["role"] == item.role:
            previous = messages[-1]["content"]
            messages[-1]["content"] = (
                f"{previous}\n\n{content}"
                if isinstance(previous, str) and isinstance(content, str)
                else [*_as_blocks(previous), *_as_blocks(content)]
            )
        else:
            messages.append({"role": item.role, "content": content})
    text = agent_input.message
    network_wide = bool(agent_input.multisite and agent_input.multisite.network_wide)
    note = multisite_note(site_url, network_wide)
    if note:
        text = f"{text}\n\n{note}"
    if messages and messages[-1]["role"] == "user":
        messages.append({"role": "assistant", "content": "承知しました。続きの指示をどうぞ。"})
    messages.append({"role": "user", "content": text})
    return SessionState(
        session_id=session_id,
        run_id=run_id or new_run_id(),
        user_id=user_id,
        target_id=target_id,
        input=agent_input,
        messages=messages,
        started_at=utc_now_iso(),
        site_url=site_url,
    )


def continue_session(
    state: SessionState, agent_input: AgentInput, *, run_id: str | None = None, timeout_ms: int = 60_000
) -> None:
    """Start a follow-up run in a finished session: the conversation so far stays the context."""
    if not state.status.terminal and state.status is not SessionStatus.IDLE:
        raise WpAgentError(
            AgentErrorCode.UNKNOWN_ERROR,
            "このセッションでは別の処理が実行中です。",
            details={"reason": "session_busy"},
        )
    # A run that ended mid-way (expiry, cancel, failure) may have left tool calls unanswered.
    close_open_tool_calls(state, timeout_ms=timeout_ms)
    approval_protocol.cancel(state)
    if state.messages and state.messages[-1]["role"] == "user":
        # The previous run ended without an assistant reply (e.g. an error); keep roles alternating.
        state.messages.append({"role": "assistant", "content": "（前回の処理は途中で終了しました）"})
    state.messages.append({"role": "user", "content": agent_input.message})
    state.input = agent_input
    state.run_id = run_id or new_run_id()
    state.status = SessionStatus.IDLE
    state.iterations = 0
    state.elapsed_ms = 0
    state.stop_reason = None
    state.result = None


class AgentTurn:
    """Advances sessions; one instance serves many sessions (safe to keep across warm invocations)."""

    def __init__(self, deps: AgentDeps) -> None:
        self._deps = deps
        self._lock = threading.RLock()

    # -- public ---------------------------------------------------------------------------------

    def advance(self, state: SessionState) -> TurnResult:
        started = time.perf_counter()
        audit_outbox.deliver(state, self._deps.audit)  # what earlier steps could not write
        try:
            return self._advance(state)
        except WpAgentError as exc:
            logger.warning(
                "turn failed", extra={"session_id": state.session_id, "error_code": exc.code.value}
            )
            self._finish(state, SessionStatus.FAILED, error=exc)
            return TurnResult.FAILED
        finally:
            spent = time.perf_counter() - started
            state.elapsed_ms += int(spent * 1000)
            self._deps.telemetry.seconds(TURN_DURATION_SECONDS, spent)
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

    # -- the turn -------------------------------------------------------------------------------

    def _advance(self, state: SessionState) -> TurnResult:
        if state.status.terminal:
            return TurnResult.COMPLETED if state.status is SessionStatus.COMPLETED else TurnResult.FAILED
        pending = state.pending_approval
        if pending is not None:
            if pending.status is ApprovalStatus.PENDING:
                return TurnResult.AWAITING_APPROVAL
            self._resolve_approval(state, pending)
            if state.status.terminal:
                return TurnResult.FAILED
        if state.messages and state.messages[-1]["role"] == "assistant":
            # A retried turn after the model answered but before tools finished: redo the tool step
            # (records already handled are reused; a started one is reported as outcome unknown).
            return self._handle_assistant_message(state, state.messages[-1]["content"])
        if state.stop_reason:
            return self._stop_for_loop(state)
        max_iterations = state.input.max_iterations or self._deps.settings.agent_max_iterations
        if state.iterations >= max_iterations:
            state.stop_reason = "iteration_cap"
            return self._stop_for_loop(state)

        options = state.input.multisite
        if options is not None and options.site_id is not None and state.site_url is None:
            self._resolve_site_id(state, options.site_id)
            if state.status.terminal:
                return TurnResult.FAILED
        if state.reverts_run_id and state.iterations == 0:  # an undo run: the revert plan, not the model
            state.iterations += 1
            state.messages.append({"role": "assistant", "content": undo_turn.plan_message(state, self._deps)})
            self._checkpoint(state)
            return self._handle_assistant_message(state, state.messages[-1]["content"])
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
        content = _sanitise_assistant_content(reply.content)
        if not content:
            content = [{"type": "text", "text": "（応答が空でした）"}]
        state.messages.append({"role": "assistant", "content": content})
        self._checkpoint(state)
        return self._handle_assistant_message(state, content)

    def _handle_assistant_message(
        self, state: SessionState, content: list[dict[str, Any]] | str
    ) -> TurnResult:
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        tool_uses = [b for b in blocks if b.get("type") == "tool_use"]
        if not tool_uses:
            text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text").strip()
            self._finish(state, SessionStatus.COMPLETED, response=text)
            return TurnResult.COMPLETED
        state.status = SessionStatus.EXECUTING
        results = self._handle_tool_uses(state, tool_uses)
        if state.pending_approval is not None and state.pending_approval.status is ApprovalStatus.PENDING:
            state.held_results = results
            state.status = SessionStatus.AWAITING_APPROVAL
            self._emit("approval_needed", "確認が必要な操作があります")
            return TurnResult.AWAITING_APPROVAL
        if state.status.terminal:
            return TurnResult.FAILED
        state.messages.append({"role": "user", "content": results})
        if state.stop_reason:
            return self._stop_for_loop(state)
        return TurnResult.CONTINUE

    # -- tool calls -----------------------------------------------------------------------------

    def _handle_tool_uses(self, state: SessionState, tool_uses: list[dict[str, Any]]) -> list[dict[str, Any]]:
        results: dict[str, dict[str, Any]] = {}
        to_run: list[CommandRecord] = []
        held: list[CommandRecord] = []
        for index, tool_use in enumerate(tool_uses):
            tool_use_id = str(tool_use["id"])
            existing = state.record(tool_use_id)
            if existing is not None and existing.status is CommandStatus.QUEUED:
                to_run.append(existing)
                continue
            if existing is not None:
                self._resume_record(state, existing, results, held)
                continue
            if index >= MAX_TOOL_CALLS_PER_RESPONSE:
                results[tool_use_id] = tool_result(
                    tool_use_id,
                    f"一度に実行できるコマンドは{MAX_TOOL_CALLS_PER_RESPONSE}件までです。実行していません。",
                    is_error=True,
                )
                continue
            if tool_use.get("name") != TOOL_NAME:
                results[tool_use_id] = tool_result(
                    tool_use_id,
                    f"不明なツール「{tool_use.get('name')}」です。wp_cli だけが使えます。",
                    is_error=True,
                )
                continue
            try:
                tool_input = WpCliToolInput.model_validate(tool_use.get("input") or {})
            except ValidationError:
                results[tool_use_id] = tool_result(
                    tool_use_id,
                    "wp_cli の入力が不正です。command（文字列）と reason を指定してください。",
                    is_error=True,
                )
                continue
            decision = apply_site_scope(self._deps.policy.classify(tool_input.command), state)
            record = self._new_record(state, tool_use_id, tool_input, decision)
            if decision.blocked:
                record.status = CommandStatus.BLOCKED
                state.commands.append(record)
                self._audit_record(state, AuditEventType.COMMAND_BLOCKED, record)
                self._deps.telemetry.count(COMMANDS_BLOCKED_TOTAL)
                self._emit("command_blocked", f"ブロック: {decision.reason_ja}", record.command)
                results[tool_use_id] = tool_result(
                    tool_use_id,
                    f"このコマンドはブロックされました（実行していません）: {decision.reason_ja}",
                    is_error=True,
                )
                continue
            loop_reason = self._loop_guard(state, record)
            if loop_reason:
                record.status = CommandStatus.BLOCKED
                record.policy_reason = loop_reason
                state.commands.append(record)
                results[tool_use_id] = tool_result(
                    tool_use_id, f"{loop_reason}（実行していません）", is_error=True
                )
                continue
            if decision.needs_approval:
                if not self._skip_confirmation(state):
                    record.status = CommandStatus.HELD
                    state.commands.append(record)
                    held.append(record)
                    continue
                self._audit_record(
                    state,
                    AuditEventType.APPROVAL_APPROVED,
                    record,
                    approver="system:skipDestructiveConfirmation",
                )
            state.commands.append(record)
            to_run.append(record)
        self._checkpoint(state)
        self._run_records(state, to_run, results)
        if held and not state.status.terminal:
            self._hold_for_approval(state, held)
        return [results[str(t["id"])] for t in tool_uses if str(t["id"]) in results]

    def _resume_record(
        self,
        state: SessionState,
        record: CommandRecord,
        results: dict[str, dict[str, Any]],
        held: list[CommandRecord],
    ) -> None:
        """A retried turn meets a tool call it already handled: reuse its outcome, never re-run it."""
        if record.status is CommandStatus.STARTED:
            record.status = CommandStatus.UNKNOWN
            record.finished_at = utc_now_iso()
            self._audit_record(state, AuditEventType.COMMAND_OUTCOME_UNKNOWN, record)
        if record.status is CommandStatus.HELD:
            held.append(record)
            return
        results[record.tool_use_id] = self._result_for(record)

    def _result_for(self, record: CommandRecord) -> dict[str, Any]:
        return result_for(
            record, timeout_ms=self._deps.settings.wp_cli_timeout, simulated=self._deps.wp_cli.simulated
        )

    def _run_records(
        self, state: SessionState, records: list[CommandRecord], results: dict[str, dict[str, Any]]
    ) -> None:
        if not records:
            return
        workers = max(1, min(len(records), self._deps.wp_cli.max_concurrency))
        read = undo_recorder.site_reader(state, self._deps.policy, self._deps.wp_cli, self._deps.limiter)
        undo_recorder.capture_records(records, read, workers=self._deps.wp_cli.max_concurrency)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="wp-cli") as pool:
            for record in pool.map(lambda r: self._execute(state, r), records):
                results[record.tool_use_id] = self._result_for(record)
        undo_recorder.record_records(records, read, workers=self._deps.wp_cli.max_concurrency)
        fatal = next((r for r in records if r.error_code is AgentErrorCode.SSH_CONNECTION_FAILED), None)
        if fatal is not None:
            error = WpAgentError(
                AgentErrorCode.SSH_CONNECTION_FAILED,
                details={"command": fatal.command, "reason": fatal.stderr},
            )
            self._finish(state, SessionStatus.FAILED, error=error)

    def _execute(self, state: SessionState, record: CommandRecord) -> CommandRecord:
        try:
            self._deps.limiter.before_command(state.user_id)
        except WpAgentError as exc:
            with self._lock:
                record.status = CommandStatus.BLOCKED
                record.policy_reason = exc.message_ja
                record.rule = "rate_limit.commands_per_user"
                self._checkpoint(state)
            return record
        with self._lock:
            record.status = CommandStatus.STARTED
            record.started_at = utc_now_iso()
            self._checkpoint(state)  # intent before the command runs
        self._emit("command_started", f"実行中: wp {record.command}", record.command)
        started = time.perf_counter()
        try:
            with self._deps.limiter.command_slot(state.target_id):
                result = self._deps.wp_cli.run(record.argv)
            # Records (session store, API views, AgentOutput) never hold a secret the site printed.
            outcome_fields: dict[str, Any] = {
                "exit_code": result.exit_code,
                "stdout": mask_command_output(result.stdout),
                "stderr": mask_command_output(result.stderr),
                "truncated": result.truncated,
            }
        except WpAgentError as exc:
            outcome_fields = {
                "exit_code": None,
                "stdout": "",
                "stderr": exc.message_ja,
                "error_code": exc.code,
            }
        with self._lock:
            for key, value in outcome_fields.items():
                setattr(record, key, value)
            record.status = CommandStatus.FINISHED
            record.finished_at = utc_now_iso()
            record.duration_ms = int((time.perf_counter() - started) * 1000)
            self._audit_record(state, AuditEventType.COMMAND_EXECUTED, record)  # saved with the result
            try:
                self._checkpoint(state)  # result after
            except Exception:
                # The command ran: its audit record is written even when the session could not be
                # saved (e.g. a cancel changed it meanwhile).
                audit_outbox.deliver(state, self._deps.audit)
                raise
        self._deps.telemetry.count(COMMANDS_EXECUTED_TOTAL)
        if record.error_code is AgentErrorCode.SSH_CONNECTION_FAILED:
            self._deps.telemetry.count(SSH_CONNECTION_FAILURES_TOTAL)
        logger.info(
            "command executed",
            extra={
                "type": "execution",
                "command": record.command,
                "success": record.succeeded,
                "exit_code": record.exit_code,
                "duration_ms": record.duration_ms,
                "error_code": record.error_code.value if record.error_code else None,
                "session_id": state.session_id,
                "user_id": state.user_id,
                "target_id": state.target_id,
            },
        )
        mark = "完了" if record.succeeded else "失敗"
        self._emit(
            "command_finished", f"{mark}: wp {record.command}（{record.duration_ms}ms）", record.command
        )
        return record

    # -- approvals ------------------------------------------------------------------------------

    def _hold_for_approval(self, state: SessionState, held: list[CommandRecord]) -> None:
        if state.pending_approval is not None and state.pending_approval.status is ApprovalStatus.PENDING:
            return  # a retried turn: the approval already exists
        approval_id = f"apr_{uuid.uuid4().hex[:20]}"
        items: list[ApprovalItem] = []
        read = self._state_reader(state)
        for record in held:
            decision = self._deps.policy.classify_argv(record.argv)
            summary, impact = describe(decision, read)
            impact = with_undo_note(decision.command_path, decision.argv, impact)
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
        expires_at = datetime.now(UTC) + timedelta(
            seconds=self._deps.settings.wp_agent_approval_timeout_seconds
        )
        approval_protocol.request(
            state,
            approval_id=approval_id,
            items=items,
            expires_at=expires_at.isoformat(timespec="seconds").replace("+00:00", "Z"),
        )
        for record in held:
            self._audit_record(state, AuditEventType.APPROVAL_REQUESTED, record, approval_id=approval_id)
        self._deps.telemetry.count(APPROVALS_REQUESTED_TOTAL)

    def _state_reader(self, state: SessionState) -> StateReader:
        """Read-only commands the approval summary runs to say what will really happen (is the
        post already in the trash? which role does the user have now?). Policy-checked, scoped to
        the session's site and audited like any command; a refused or failed read gives None."""

        def read(argv: list[str]) -> str | None:
            decision = apply_site_scope(self._deps.policy.classify_argv(argv), state)
            if decision.category is not PolicyCategory.READ:
                return None
            command = mask_command(" ".join(decision.argv))
            try:
                with self._deps.limiter.command_slot(state.target_id):
                    result = self._deps.wp_cli.run(list(decision.argv))
            except WpAgentError as exc:
                self._audit(state, AuditEventType.COMMAND_EXECUTED, command=command, reason=_OBSERVE_REASON,
                            category=decision.category.value, rule=decision.rule, success=False,
                            error=exc.code.value)  # fmt: skip
                return None
            self._audit(state, AuditEventType.COMMAND_EXECUTED, command=command, reason=_OBSERVE_REASON,
                        category=decision.category.value, rule=decision.rule, success=result.ok,
                        exit_code=result.exit_code, duration_ms=result.duration_ms)  # fmt: skip
            return result.stdout if result.ok else None

        return read

    def _resolve_approval(self, state: SessionState, pending: PendingApproval) -> None:
        if not approval_protocol.decided(pending):
            return  # expired: nothing held runs (the run has ended)
        held = [r for r in state.commands if r.approval_id == pending.approval_id]
        results = {r["tool_use_id"]: r for r in state.held_results}
        if pending.status is ApprovalStatus.APPROVED:
            runnable: list[CommandRecord] = []
            for record in held:
                if record.status is not CommandStatus.HELD:
                    results[record.tool_use_id] = self._result_for(self._settle_after_retry(state, record))
                    continue
                # Defence in depth: the approved argv must still pass the current policy and the
                # requester's current rights (a network administrator may have been removed).
                recheck = apply_site_scope(self._deps.policy.classify_argv(record.argv), state)
                if recheck.blocked:
                    record.status = CommandStatus.BLOCKED
                    record.policy_reason = recheck.reason_ja
                    results[record.tool_use_id] = self._result_for(record)
                    continue
                runnable.append(record)
            self._run_records(state, runnable, results)
        else:
            comment = f"（コメント: {pending.comment}）" if pending.comment else ""
            for record in held:
                record.status = CommandStatus.REJECTED
                results[record.tool_use_id] = tool_result(
                    record.tool_use_id,
                    f"利用者がこの操作を拒否しました。実行していません{comment}。別の方法を提案するか、拒否されたことを報告してください。",
                    is_error=True,
                )
        order = self._last_tool_use_order(state)
        state.messages.append({"role": "user", "content": [results[i] for i in order if i in results]})
        state.held_results = []
        approval_protocol.resolve(state)
        if not state.status.terminal:  # an SSH failure while running the approved commands ends the run
            state.status = SessionStatus.EXECUTING

    def _settle_after_retry(self, state: SessionState, record: CommandRecord) -> CommandRecord:
        if record.status is CommandStatus.STARTED:
            record.status = CommandStatus.UNKNOWN
            self._audit_record(state, AuditEventType.COMMAND_OUTCOME_UNKNOWN, record)
        return record

    @staticmethod
    def _last_tool_use_order(state: SessionState) -> list[str]:
        for message in reversed(state.messages):
            if message["role"] == "assistant" and isinstance(message["content"], list):
                return [str(b["id"]) for b in message["content"] if b.get("type") == "tool_use"]
        return []

    def _resolve_site_id(self, state: SessionState, site_id: int) -> None:
        """multisite.siteId → the site's URL (`site list`), before the model runs; every command of
        the session then carries `--url=<that URL>`."""
        decision = self._deps.policy.classify_argv(["site", "list", f"--site__in={site_id}", "--field=url"])
        record = CommandRecord(
            tool_use_id=f"system-site-{state.run_id}",
            run_id=state.run_id,
            command=" ".join(decision.argv),
            argv=list(decision.argv),
            reason="マルチサイトの対象サイトIDをURLに変換",
            category=decision.category,
            rule=decision.rule,
            policy_reason=decision.reason_ja,
            command_path=list(decision.command_path),
            status=CommandStatus.QUEUED,
            iteration=0,
        )
        if decision.blocked:
            error = WpAgentError(
                AgentErrorCode.COMMAND_BLOCKED, decision.reason_ja, details={"command": record.command}
            )
            self._finish(state, SessionStatus.FAILED, error=error)
            return
        found = state.record(record.tool_use_id)
        if found is None:
            state.commands.append(record)
            found = self._execute(state, record)
        elif found.status is CommandStatus.STARTED:
            # Interrupted by a crash. The lookup only reads, so it is asked again (and audited as
            # such) rather than failing the run; anything else is never run twice.
            found = self._settle_after_retry(state, found)
            if found.category is PolicyCategory.READ:
                found.status = CommandStatus.QUEUED
                found = self._execute(state, found)
        try:
            state.site_url = self._looked_up_site_url(found, site_id)
        except WpAgentError as failure:
            self._finish(state, SessionStatus.FAILED, error=failure)
            return
        self._checkpoint(state)

    @staticmethod
    def _looked_up_site_url(found: CommandRecord, site_id: int) -> str:
        """The URL the site lookup gave; otherwise why it gave none, raised as the run's error."""
        if found.error_code is not None:  # SSH down, timeout: the site's state, not the site ID
            raise WpAgentError(found.error_code, found.stderr, details={"siteId": site_id})
        if found.status is not CommandStatus.FINISHED:  # held back (rate limit) or outcome unknown
            why = found.policy_reason if found.status is CommandStatus.BLOCKED else "処理が中断されました"
            raise WpAgentError(
                AgentErrorCode.UNKNOWN_ERROR,
                f"サイトID {site_id} の確認を完了できませんでした（{why}）。もう一度お試しください。",
                details={"reason": "site_lookup_incomplete", "siteId": site_id},
            )
        first_line = found.stdout.strip().splitlines()[0].strip() if found.stdout.strip() else ""
        if found.exit_code != 0 or not first_line.startswith(("http://", "https://")):
            raise WpAgentError(
                AgentErrorCode.UNKNOWN_ERROR,
                f"マルチサイトのサイトID {site_id} が見つかりません。site list で存在するサイトを確認してください。",
                details={"reason": "site_not_found", "siteId": site_id},
            )
        return first_line

    def _skip_confirmation(self, state: SessionState) -> bool:
        return state.input.skip_destructive_confirmation and self._deps.settings.agent_allow_skip_confirmation

    # -- stopping -------------------------------------------------------------------------------

    def _loop_guard(self, state: SessionState, record: CommandRecord) -> str | None:
        same = sum(
            1 for r in state.run_commands() if r.argv == record.argv and r.status is not CommandStatus.BLOCKED
        )
        if same >= REPEAT_LIMIT:
            state.stop_reason = "repeated_command"
            return "同じコマンドが繰り返し呼び出されたため、処理を中止しました"
        ran = sum(
            1
            for r in state.run_commands()
            if r.status
            in {CommandStatus.QUEUED, CommandStatus.STARTED, CommandStatus.FINISHED, CommandStatus.UNKNOWN}
        )
        if ran >= self._deps.settings.agent_max_commands:
            state.stop_reason = "command_cap"
            return f"1回の依頼で実行できるコマンド数の上限（{self._deps.settings.agent_max_commands}件）に達したため、処理を中止しました"
        return None

    def _stop_for_loop(self, state: SessionState) -> TurnResult:
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
        self._finish(state, SessionStatus.FAILED, error=error)
        return TurnResult.FAILED

    def _finish(
        self,
        state: SessionState,
        status: SessionStatus,
        *,
        response: str = "",
        error: WpAgentError | None = None,
    ) -> None:
        lifecycle.finish(state, status, response=response, error=error, simulated=self._deps.wp_cli.simulated)

    # -- plumbing -------------------------------------------------------------------------------

    def _new_record(
        self, state: SessionState, tool_use_id: str, tool_input: WpCliToolInput, decision: PolicyDecision
    ) -> CommandRecord:
        return CommandRecord(
            tool_use_id=tool_use_id,
            run_id=state.run_id,
            command=mask_command(tool_input.command.strip()),
            argv=list(decision.argv),
            reason=tool_input.reason,
            category=decision.category,
            rule=decision.rule,
            policy_reason=decision.reason_ja,
            command_path=list(decision.command_path),
            pattern=decision.pattern,
            status=CommandStatus.QUEUED,
            iteration=state.iterations,
        )

    def _checkpoint(self, state: SessionState) -> None:
        """Save the state, then deliver the audit records it holds (they are true once saved)."""
        with self._lock:
            self._deps.store.save(state)
            audit_outbox.deliver(state, self._deps.audit)

    def _emit(self, kind: str, message: str, command: str | None = None) -> None:
        if self._deps.progress is not None:
            self._deps.progress(ProgressEvent(kind, message, command))

    def _audit_record(
        self,
        state: SessionState,
        event_type: AuditEventType,
        record: CommandRecord,
        *,
        approval_id: str | None = None,
        approver: str | None = None,
    ) -> None:
        error = None
        if record.error_code is not None:
            error = record.error_code.value
        elif record.status is CommandStatus.FINISHED and record.exit_code not in (0, None):
            error = mask_command_output(record.stderr[:1_000])
        self._audit(
            state,
            event_type,
            command=record.command,
            reason=mask_text(record.reason),
            category=record.category.value,
            rule=record.rule,
            policy_reason=record.policy_reason,
            success=record.succeeded if event_type is AuditEventType.COMMAND_EXECUTED else None,
            exit_code=record.exit_code,
            duration_ms=record.duration_ms if event_type is AuditEventType.COMMAND_EXECUTED else None,
            error=error,
            approval_id=approval_id or record.approval_id,
            approver=approver,
        )

    def _audit(self, state: SessionState, event_type: AuditEventType, **fields: Any) -> None:
        audit_outbox.audit(state, event_type, **fields)
