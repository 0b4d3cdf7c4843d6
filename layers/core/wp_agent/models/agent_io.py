"""Spec §4.1 / §4.2 interfaces: AgentInput, AgentOutput, ExecutedCommand (camelCase JSON)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from wp_agent.errors import DEFAULT_MESSAGES_JA, AgentErrorCode, WpAgentError
from wp_agent.models.base import CamelModel, RequestModel

MAX_MESSAGE_CHARS = 8_000
MAX_HISTORY_MESSAGES = 100
MAX_ITERATIONS_LIMIT = 50


class MultisiteOptions(RequestModel):
    site_id: int | None = Field(default=None, ge=1)
    site_url: str | None = Field(default=None, min_length=1, max_length=2_048)
    network_wide: bool = False

    @field_validator("site_url")
    @classmethod
    def _url_is_http(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("siteUrl must start with http:// or https://")
        return value

    @model_validator(mode="after")
    def _one_site_selector(self) -> MultisiteOptions:
        if self.site_id is not None and self.site_url is not None:
            raise ValueError("give either siteId or siteUrl, not both")
        if self.network_wide and (self.site_id is not None or self.site_url is not None):
            raise ValueError("networkWide cannot be combined with siteId or siteUrl")
        return self


class HistoryMessage(RequestModel):
    """One prior turn of a conversation, in the Anthropic Messages shape."""

    role: Literal["user", "assistant"]
    content: str | list[dict[str, Any]]

    @field_validator("content")
    @classmethod
    def _not_empty(cls, value: str | list[dict[str, Any]]) -> str | list[dict[str, Any]]:
        if not value:
            raise ValueError("content must not be empty")
        return value


class AgentInput(RequestModel):
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    multisite: MultisiteOptions | None = None
    conversation_history: list[HistoryMessage] | None = Field(default=None, max_length=MAX_HISTORY_MESSAGES)
    max_iterations: int | None = Field(default=None, ge=1, le=MAX_ITERATIONS_LIMIT)
    skip_destructive_confirmation: bool = False

    @field_validator("message")
    @classmethod
    def _has_text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("message must contain non-whitespace text")
        if "\x00" in value:
            raise ValueError("message must not contain NUL characters")
        return value


class ExecutedCommand(CamelModel):
    command: str
    success: bool
    output: str | None = None
    error: str | None = None
    executed_at: str
    duration_ms: int = Field(ge=0)


class PartialSuccessDetail(CamelModel):
    operation: str
    success: bool
    error: str | None = None


class PartialSuccess(CamelModel):
    succeeded: int = Field(ge=0)
    failed: int = Field(ge=0)
    details: list[PartialSuccessDetail]


class AgentErrorInfo(CamelModel):
    code: AgentErrorCode
    message: str
    details: Any | None = None


class AgentMetadata(CamelModel):
    total_iterations: int = Field(ge=0)
    total_commands_executed: int = Field(ge=0)
    execution_time_ms: int = Field(ge=0)


class AgentOutput(CamelModel):
    success: bool
    response: str
    executed_commands: list[ExecutedCommand] = Field(default_factory=list)
    partial_success: PartialSuccess | None = None
    error: AgentErrorInfo | None = None
    metadata: AgentMetadata | None = None

    @classmethod
    def failure(
        cls,
        error: WpAgentError,
        *,
        response: str = "",
        executed_commands: list[ExecutedCommand] | None = None,
        metadata: AgentMetadata | None = None,
    ) -> AgentOutput:
        return cls(
            success=False,
            response=response,
            executed_commands=executed_commands or [],
            error=AgentErrorInfo(code=error.code, message=error.message_ja, details=error.details or None),
            metadata=metadata,
        )


def error_info(
    code: AgentErrorCode, message: str | None = None, details: Any | None = None
) -> AgentErrorInfo:
    return AgentErrorInfo(code=code, message=message or DEFAULT_MESSAGES_JA[code], details=details)


def utc_now_iso() -> str:
    """ISO 8601 UTC timestamp with milliseconds and a Z suffix, as in the spec's log example."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
