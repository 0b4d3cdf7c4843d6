"""The recording format: every model reply of an eval run, per task and trial, so the run can be
replayed without the model (in CI, through the scripted Anthropic-compatible server and the real SDK).

A reply is kept as the Messages API returned it (content blocks with their tool_use ids, stop reason,
model, usage); replaying a trial answers its n-th model request with its n-th reply.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from wp_agent.agent.model_client import ModelReply

RECORDING_FORMAT = "wp-agent-eval-recording/1"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RecordedReply(_Model):
    content: list[dict[str, Any]]
    stop_reason: str | None
    model: str
    usage: dict[str, int] = Field(default_factory=dict)

    @classmethod
    def of(cls, reply: ModelReply) -> RecordedReply:
        return cls(content=reply.content, stop_reason=reply.stop_reason, model=reply.model, usage=reply.usage)


class RecordedTrial(_Model):
    task_id: str
    trial: int
    instruction: str
    site_date: date  # the site's date when recorded: a replay fills the task's date placeholders with it
    replies: list[RecordedReply]


class Recording(_Model):
    format: str = RECORDING_FORMAT
    model: str
    provider: str
    recorded_at: str
    trials: list[RecordedTrial] = Field(default_factory=list)

    def save(self, path: Path) -> None:
        path.write_text(self.model_dump_json(indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Recording:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))

    def site_date(self) -> date:
        """The site's date of the recorded run (a replay runs on it, so relative dates replay alike)."""
        if not self.trials:
            raise ValueError("the recording has no trials")
        return self.trials[0].site_date
