"""What a model reply's `stop_reason` means for the run.

A reply the API marks `refusal`, or one cut off at `max_tokens` while a tool call was being
written, must never be executed (the last tool call's input may be half-written) nor shown as an
empty answer: the run ends with a stable code (API_ERROR; the error types in errors.py) and a Japanese
message. A text answer cut off at `max_tokens` is kept, marked as cut off.
"""

from __future__ import annotations

from typing import Any

from wp_agent.agent.model_client import ModelReply
from wp_agent.errors import ModelOutputTruncatedError, ModelRefusalError, WpAgentError

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
