"""Spec §4.1 / §4.2 interfaces: AgentInput, AgentOutput, ExecutedCommand (camelCase JSON)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, model_validator
from pydantic.config import JsonDict

from wp_agent.errors import DEFAULT_MESSAGES_JA, AgentErrorCode, WpAgentError
from wp_agent.models import field_rules
from wp_agent.models.base import WHOLE_NUMBER, CamelModel, RequestModel
from wp_agent.models.run_status import RunStatus

MAX_MESSAGE_CHARS = 8_000
MAX_HISTORY_MESSAGES = 100
MAX_ITERATIONS_LIMIT = 50


# Exclusivity of the site selectors, stated for the OpenAPI document (a validator below enforces it):
# not (siteId and siteUrl), not (networkWide and either).
_ONE_SITE_SELECTOR: JsonDict = {
    "not": {
        "anyOf": [
            {
                "required": ["siteId", "siteUrl"],
                "properties": {"siteId": {"type": "integer"}, "siteUrl": {"type": "string"}},
            },
            {
                "required": ["networkWide", "siteId"],
                "properties": {"networkWide": {"const": True}, "siteId": {"type": "integer"}},
            },
            {
                "required": ["networkWide", "siteUrl"],
                "properties": {"networkWide": {"const": True}, "siteUrl": {"type": "string"}},
            },
        ]
    }
}
MAX_SITE_ID = 2**63 - 1  # WordPress blog_id is a BIGINT


class MultisiteOptions(RequestModel):
    """One site of a multisite network (siteId or siteUrl), or the whole network — never two."""

    model_config = ConfigDict(json_schema_extra=_ONE_SITE_SELECTOR)
    site_id: Annotated[int, Field(ge=1, le=MAX_SITE_ID), WHOLE_NUMBER] | None = None
    site_url: str | None = Field(default=None, min_length=1, max_length=2_048, pattern=field_rules.HTTP_URL)
    network_wide: bool = False

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
    content: Annotated[str, Field(min_length=1)] | Annotated[list[dict[str, Any]], Field(min_length=1)]


class AgentInput(RequestModel):
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS, pattern=field_rules.VISIBLE_TEXT)
    multisite: MultisiteOptions | None = None
    conversation_history: list[HistoryMessage] | None = Field(default=None, max_length=MAX_HISTORY_MESSAGES)
    max_iterations: Annotated[int, Field(ge=1, le=MAX_ITERATIONS_LIMIT), WHOLE_NUMBER] | None = None
    skip_destructive_confirmation: bool = False


class ExecutedCommand(CamelModel):
    command: str
    success: bool
    output: str | None = None
    error: str | None = None
    executed_at: str
    duration_ms: int = Field(ge=0)
    # Write/destructive commands: whether `wp-agent undo` (POST …/runs/{runId}/undo) can revert it.
    undo_available: bool | None = None


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
    # How the run stands or ended (models/run_status.py); None only in outputs made without a run.
    run_status: RunStatus | None = None

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
