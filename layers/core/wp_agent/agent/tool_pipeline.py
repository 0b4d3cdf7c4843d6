"""One tool call of the model, decided: validate → policy → site scope → loop guard → hold or run.

`ToolCallPipeline.decide` returns a typed outcome and records what it decided on the session
(blocked commands are audited there); it runs nothing. The turn runs the `Run` outcomes together,
holds the `Hold` outcomes for one approval, and answers the `Answer` outcomes as they are.

A retried turn meets calls it already decided: their record is reused (never run twice) — a
queued one runs, a held one stays held, a started one is reported as of unknown outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.messages import ToolUseBlock
from wp_agent.agent.post_targets import guard_post_targets
from wp_agent.agent.prompt import TOOL_NAME
from wp_agent.agent.session_state import CommandRecord, CommandStatus, SessionState
from wp_agent.agent.site_scope import apply_site_scope, as_run
from wp_agent.agent.tool_results import tool_result
from wp_agent.agent.turn_io import TurnIO
from wp_agent.config import Settings
from wp_agent.masking import mask_command
from wp_agent.models.agent_io import utc_now_iso
from wp_agent.policy import PolicyDecision
from wp_agent.telemetry import COMMANDS_BLOCKED_TOTAL

MAX_TOOL_CALLS_PER_RESPONSE = 10
REPEAT_LIMIT = 2  # the same argv may run twice (e.g. check before and after); a third time is a loop
_COUNTED = {CommandStatus.QUEUED, CommandStatus.STARTED, CommandStatus.FINISHED, CommandStatus.UNKNOWN}


class WpCliToolInput(BaseModel):
    model_config = ConfigDict(extra="ignore")
    command: str = Field(min_length=1, max_length=200_000)
    reason: str = Field(default="", max_length=2_000)


@dataclass(frozen=True)
class Answer:
    """Answered without running anything now (refused, blocked, or settled by an earlier attempt)."""

    result: dict[str, Any]


@dataclass(frozen=True)
class Run:
    record: CommandRecord


@dataclass(frozen=True)
class Hold:
    """Waits for the requester's approval."""

    record: CommandRecord


ToolCallOutcome = Answer | Run | Hold


def _refused(tool_use_id: str, message_ja: str) -> Answer:
    return Answer(tool_result(tool_use_id, message_ja, is_error=True))


_POST_TYPE_REASON = "更新する投稿の種類を確認（読み取りのみ）"


class ToolCallPipeline:
    def __init__(self, io: TurnIO) -> None:
        self._io = io

    def decide(self, state: SessionState, index: int, call: ToolUseBlock) -> ToolCallOutcome:
        tool_use_id = call.id
        existing = state.record(tool_use_id)
        if existing is not None:
            return self._resume(state, existing)
        if index >= MAX_TOOL_CALLS_PER_RESPONSE:
            return _refused(
                tool_use_id,
                f"一度に実行できるコマンドは{MAX_TOOL_CALLS_PER_RESPONSE}件までです。実行していません。",
            )
        if call.name != TOOL_NAME:
            return _refused(tool_use_id, f"不明なツール「{call.name}」です。wp_cli だけが使えます。")
        try:
            tool_input = WpCliToolInput.model_validate(call.input)
        except ValidationError:
            return _refused(
                tool_use_id, "wp_cli の入力が不正です。command（文字列）と reason を指定してください。"
            )
        decision = apply_site_scope(self._io.deps.policy.classify(tool_input.command), state)
        decision = guard_post_targets(decision, self._io.state_reader(state, _POST_TYPE_REASON))
        record = new_record(state, tool_use_id, tool_input, decision)
        if decision.blocked:
            return self._block(state, record, decision)
        loop_reason = loop_guard(state, record, self._io.deps.settings)
        if loop_reason:
            record.status = CommandStatus.BLOCKED
            record.policy_reason = loop_reason
            state.commands.append(record)
            return _refused(tool_use_id, f"{loop_reason}（実行していません）")
        state.commands.append(record)
        if not decision.needs_approval:
            return Run(record)
        if not self._skip_confirmation(state):
            record.status = CommandStatus.HELD
            return Hold(record)
        approver = "system:skipDestructiveConfirmation"
        self._io.audit_record(state, AuditEventType.APPROVAL_APPROVED, record, approver=approver)
        return Run(record)

    def _resume(self, state: SessionState, record: CommandRecord) -> ToolCallOutcome:
        """A retried turn meets a tool call it already handled: reuse its outcome, never re-run it."""
        if record.status is CommandStatus.QUEUED:
            return Run(record)
        if record.status is CommandStatus.STARTED:
            record.status = CommandStatus.UNKNOWN
            record.finished_at = utc_now_iso()
            self._io.audit_record(state, AuditEventType.COMMAND_OUTCOME_UNKNOWN, record)
        if record.status is CommandStatus.HELD:
            return Hold(record)
        return Answer(self._io.result_for(record))

    def _block(self, state: SessionState, record: CommandRecord, decision: PolicyDecision) -> Answer:
        record.status = CommandStatus.BLOCKED
        state.commands.append(record)
        self._io.audit_record(state, AuditEventType.COMMAND_BLOCKED, record)
        self._io.deps.telemetry.count(COMMANDS_BLOCKED_TOTAL)
        self._io.emit("command_blocked", f"ブロック: {decision.reason_ja}", record.command)
        return _refused(
            record.tool_use_id, f"このコマンドはブロックされました（実行していません）: {decision.reason_ja}"
        )

    def _skip_confirmation(self, state: SessionState) -> bool:
        allowed = self._io.deps.settings.agent_allow_skip_confirmation
        return state.input.skip_destructive_confirmation and allowed


def loop_guard(state: SessionState, record: CommandRecord, settings: Settings) -> str | None:
    """Why this command would make the run a loop (and the run's stop reason, set), or None."""
    same = sum(
        1 for r in state.run_commands() if r.argv == record.argv and r.status is not CommandStatus.BLOCKED
    )
    if same >= REPEAT_LIMIT:
        state.stop_reason = "repeated_command"
        return "同じコマンドが繰り返し呼び出されたため、処理を中止しました"
    ran = sum(1 for r in state.run_commands() if r.status in _COUNTED)
    if ran >= settings.agent_max_commands:
        state.stop_reason = "command_cap"
        return f"1回の依頼で実行できるコマンド数の上限（{settings.agent_max_commands}件）に達したため、処理を中止しました"
    return None


def new_record(
    state: SessionState, tool_use_id: str, tool_input: WpCliToolInput, decision: PolicyDecision
) -> CommandRecord:
    return CommandRecord(
        tool_use_id=tool_use_id,
        run_id=state.run_id,
        command=mask_command(as_run(tool_input.command.strip(), decision.argv)),
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
