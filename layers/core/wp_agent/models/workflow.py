"""Step Functions task payloads: ids only (the session store holds everything else)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from wp_agent.models.base import CamelModel

_ID = r"^[A-Za-z0-9_\-]{1,80}$"


class TurnTaskInput(CamelModel):
    model_config = CamelModel.model_config | {"extra": "ignore"}
    session_id: str = Field(pattern=_ID)
    run_id: str = Field(pattern=_ID)


class ApprovalTaskInput(TurnTaskInput):
    approval_id: str = Field(pattern=r"^apr_[0-9a-f]{20}$")
    task_token: str = Field(min_length=1, max_length=8_192)


class WorkflowTaskInput(CamelModel):
    model_config = CamelModel.model_config | {"extra": "ignore"}
    action: Literal["start_scheduled_run", "record_failure", "expire_approval", "record_article_failure"]
    session_id: str | None = Field(default=None, pattern=_ID)
    article_id: str | None = Field(default=None, pattern=_ID)
    run_id: str | None = Field(default=None, pattern=_ID)
    error: Any | None = None
    input: dict[str, Any] | None = None


class PublishArticleTaskInput(CamelModel):
    model_config = CamelModel.model_config | {"extra": "ignore"}
    action: Literal["publish_article"]
    article_id: str = Field(pattern=_ID)
