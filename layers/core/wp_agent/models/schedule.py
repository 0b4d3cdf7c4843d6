"""Scheduled runs (spec §11.2 Stream05: AgentInput + cron)."""

from __future__ import annotations

import re
from datetime import datetime

from pydantic import Field, field_validator

from wp_agent.models.agent_io import AgentInput
from wp_agent.models.base import CamelModel

SCHEDULE_ID = r"^sch_[0-9a-f]{20}$"


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
