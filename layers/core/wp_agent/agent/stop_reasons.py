"""What a model reply's `stop_reason` means for the run, and how a run that loops is stopped.

A reply the API marks `refusal`, or one cut off at `max_tokens` while a tool call was being
written, must never be executed (the last tool call's input may be half-written) nor shown as an
empty answer: the run ends with a stable code (API_ERROR; the error types in errors.py) and a Japanese
message. A text answer cut off at `max_tokens` is kept, marked as cut off.
"""

from __future__ import annotations

from typing import Any

from wp_agent.agent.model_client import ModelReply
from wp_agent.agent.session_state import SessionState
from wp_agent.config import AgentSettings
from wp_agent.errors import AgentErrorCode, ModelOutputTruncatedError, ModelRefusalError, WpAgentError

REFUSAL = ModelRefusalError.reason
TRUNCATED_TOOL_CALL = ModelOutputTruncatedError.reason
TRUNCATION_NOTE = "（AIの回答が長さの上限に達したため、途中で切れています）"


def reply_problem(reply: ModelReply) -> WpAgentError | None:
    """The error that ends the run for this reply, or None when its content can be used."""
    if reply.stop_reason == "refusal":
        return ModelRefusalError(stopReason=reply.stop_reason)
    if reply.stop_reason == "max_tokens" and reply.tool_uses:
        return ModelOutputTruncatedError(stopReason=reply.stop_reason)
    return None


def mark_truncated_text(reply: ModelReply, content: list[dict[str, Any]]) -> None:
    """A text-only answer cut off at max_tokens says so at its end (never passed off as complete)."""
    if reply.stop_reason != "max_tokens":
        return
    for block in reversed(content):
        if block.get("type") == "text":
            block["text"] = f"{block['text']}\n\n{TRUNCATION_NOTE}"
            return
    content.append({"type": "text", "text": TRUNCATION_NOTE})


def loop_stop_error(state: SessionState, settings: AgentSettings) -> WpAgentError:
    """MAX_ITERATIONS_EXCEEDED for the run's stop reason (the iteration cap, a repeated command, the
    command cap), keeping the results so far."""
    reason = state.stop_reason or "iteration_cap"
    iteration_cap = state.input.max_iterations or settings.agent_max_iterations
    messages = {
        "iteration_cap": f"処理回数の上限（{iteration_cap}回）に達したため中断しました。",
        "repeated_command": "同じコマンドが繰り返されたため、暴走を防ぐために中断しました。",
        "command_cap": f"実行コマンド数の上限（{settings.agent_max_commands}件）に達したため中断しました。",
    }
    return WpAgentError(
        AgentErrorCode.MAX_ITERATIONS_EXCEEDED,
        messages[reason] + "ここまでの結果を返します。",
        details={"reason": reason, "iterations": state.iterations},
    )
