"""Typed Messages API content blocks at the agent's edge.

Session messages are stored as the API's JSON (role + content: a string or a list of blocks); this
is the one place that reads a block's `type`. Everything else asks for `tool_uses(content)`,
`text_of(content)` or builds blocks with these types and `to_param()`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

Content = str | list[dict[str, Any]]


@dataclass(frozen=True)
class TextBlock:
    text: str

    def to_param(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class ToolUseBlock:
    id: str
    name: str
    input: dict[str, Any] = field(default_factory=dict)

    def to_param(self) -> dict[str, Any]:
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": self.input}


@dataclass(frozen=True)
class ToolResultBlock:
    tool_use_id: str
    content: str
    is_error: bool = False

    def to_param(self) -> dict[str, Any]:
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": self.tool_use_id,
            "content": self.content,
        }
        if self.is_error:
            block["is_error"] = True
        return block


@dataclass(frozen=True)
class ThinkingBlock:
    thinking: str
    signature: str

    def to_param(self) -> dict[str, Any]:
        return {"type": "thinking", "thinking": self.thinking, "signature": self.signature}


@dataclass(frozen=True)
class RedactedThinkingBlock:
    data: str

    def to_param(self) -> dict[str, Any]:
        return {"type": "redacted_thinking", "data": self.data}


Block = TextBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock


def parse_block(raw: dict[str, Any]) -> Block | None:
    """The block as a type, keeping only the fields the Messages API accepts back; None for a kind
    the agent does not send back (e.g. server tool blocks)."""
    match raw.get("type"):
        case "text":
            return TextBlock(str(raw.get("text", "")))
        case "tool_use":
            return ToolUseBlock(str(raw["id"]), str(raw["name"]), dict(raw.get("input") or {}))
        case "tool_result":
            return ToolResultBlock(str(raw["tool_use_id"]), raw.get("content", ""), bool(raw.get("is_error")))
        case "thinking":
            return ThinkingBlock(raw.get("thinking", ""), raw.get("signature", ""))
        case "redacted_thinking":
            return RedactedThinkingBlock(raw.get("data", ""))
    return None


def parse_content(content: Content) -> list[Block]:
    if isinstance(content, str):
        return [TextBlock(content)]
    return [block for block in map(parse_block, content) if block is not None]


def tool_uses(content: Content) -> list[ToolUseBlock]:
    return [block for block in parse_content(content) if isinstance(block, ToolUseBlock)]


def text_of(content: Content) -> str:
    return "\n".join(block.text for block in parse_content(content) if isinstance(block, TextBlock)).strip()


def to_params(blocks: Iterable[Block]) -> list[dict[str, Any]]:
    return [block.to_param() for block in blocks]


def assistant_content(content: Content) -> list[dict[str, Any]]:
    """An assistant reply as sent back to the API: known blocks only, no empty text."""
    kept = (
        block
        for block in parse_content(content)
        if (block.text if isinstance(block, TextBlock) else not isinstance(block, ToolResultBlock))
    )
    return to_params(kept)
