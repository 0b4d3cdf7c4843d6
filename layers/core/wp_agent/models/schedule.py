"""Scheduled runs (spec §11.2 Stream05: AgentInput + cron)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator

from wp_agent.models import field_rules
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.base import CamelModel, RequestModel

SCHEDULE_ID = field_rules.SCHEDULE_ID


class ScheduledRunInput(CamelModel):
    """What EventBridge Scheduler hands the state machine; `scheduledTime` makes the run id stable."""

    model_config = CamelModel.model_config | {"extra": "ignore"}
    schedule_id: str = Field(pattern=SCHEDULE_ID)
    owner_id: str = Field(min_length=1, max_length=128)
    target_id: str = Field(min_length=2, max_length=63)
    agent_input: AgentInput
    scheduled_time: str | None = None

    @field_validator("scheduled_time")
    @classmethod
    def _iso(cls, value: str | None) -> str | None:
        if value is not None:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        return value

    def session_id(self) -> str:
        """One session per firing: the same firing (a retried task) maps to the same session."""
        stamp = re.sub(r"[^0-9]", "", self.scheduled_time or "")[:14] or "manual"
        return f"{self.schedule_id}-{stamp}"


# --- The /v1/schedules API ------------------------------------------------------------------------

DEFAULT_SCHEDULE_TIMEZONE = "Asia/Tokyo"
MAX_SCHEDULE_NAME_CHARS = 64
MAX_PROPOSAL_TEXT_CHARS = 2_000


def _known_zone(name: str) -> str:
    if name not in field_rules.TIME_ZONES:
        raise ValueError("timezone must be an IANA time zone name such as Asia/Tokyo")
    return name


# An IANA time zone name; the document lists them all.
TimeZoneName = Annotated[
    str, AfterValidator(_known_zone), Field(json_schema_extra={"enum": list(field_rules.TIME_ZONES)})
]


class ScheduleCreateRequest(RequestModel):
    """POST /v1/schedules — run `agentInput` on `targetId` whenever `expression` fires."""

    name: str | None = Field(default=None, max_length=MAX_SCHEDULE_NAME_CHARS, pattern=field_rules.LABEL)
    expression: str = Field(max_length=256, pattern=field_rules.SCHEDULE_EXPRESSION)
    timezone: TimeZoneName = DEFAULT_SCHEDULE_TIMEZONE
    target_id: str = Field(pattern=field_rules.TARGET_ID)
    agent_input: AgentInput

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        return None if value is None else value.strip()


class ScheduleView(CamelModel):
    schedule_id: str
    name: str
    expression: str
    timezone: str
    target_id: str
    agent_input: AgentInput
    summary_ja: str
    next_runs: list[str] = Field(description="ISO 8601 with the zone's offset; empty once an at() has run")
    created_at: str


class ScheduleList(CamelModel):
    schedules: list[ScheduleView]


class ScheduleProposalRequest(RequestModel):
    """POST /v1/schedules/proposals — a Japanese request such as 「毎週月曜9時に下書きを一覧して」."""

    text: str = Field(min_length=1, max_length=MAX_PROPOSAL_TEXT_CHARS, pattern=field_rules.VISIBLE_TEXT)
    target_id: str = Field(pattern=field_rules.TARGET_ID)
    timezone: TimeZoneName = DEFAULT_SCHEDULE_TIMEZONE


class ScheduleProposal(CamelModel):
    """A schedule the model proposed and we validated; nothing exists until it is created."""

    name: str
    expression: str
    timezone: str
    instruction: str
    summary_ja: str
    next_runs: list[str]


class ScheduleProposalView(CamelModel):
    """Either a proposal (with the body to POST to /v1/schedules once the person agrees) or a question."""

    status: Literal["PROPOSED", "NEEDS_CLARIFICATION"]
    proposal: ScheduleProposal | None = None
    create_request: ScheduleCreateRequest | None = None
    question: str | None = None
