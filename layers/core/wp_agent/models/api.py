"""Bodies and views of the HTTP API (camelCase JSON); every field validated at the boundary."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from wp_agent.models import field_rules
from wp_agent.models.agent_io import AgentInput, AgentOutput, ExecutedCommand
from wp_agent.models.article import PublishArticleInput, PublishArticleOutput
from wp_agent.models.base import CamelModel, RequestModel
from wp_agent.models.target import Target

# Documented limits (README): request bodies, and how much command output a view carries.
MAX_BODY_BYTES = 1_048_576
VIEW_OUTPUT_LIMIT_CHARS = 65_536


class SessionMessageRequest(AgentInput):
    """POST /v1/sessions/{sessionId}/messages — AgentInput plus the target (required on the first message)."""

    target_id: str | None = Field(default=None, pattern=field_rules.TARGET_ID)


class ApprovalDecisionRequest(RequestModel):
    decision: Literal["approve", "reject"]
    comment: str | None = Field(default=None, max_length=1_000, pattern=field_rules.NO_NUL)


class UndoRequest(RequestModel):
    """POST /v1/sessions/{sessionId}/runs/{runId}/undo — dryRun: only say what can be undone."""

    dry_run: bool = False


class UndoCommandView(CamelModel):
    command: str
    undo_available: bool
    reason: str | None = None  # why not, when it cannot be undone


class UndoPreview(CamelModel):
    """What the run changed and whether each can be undone (the plan itself is built against the
    site's current state when the undo runs: things changed since are skipped and reported)."""

    session_id: str
    run_id: str
    undo_available: bool
    commands: list[UndoCommandView]


class RunAccepted(CamelModel):
    session_id: str
    run_id: str
    status: str
    status_url: str


class ApprovalCommandView(CamelModel):
    command: str
    summary: str
    impact: str


class PendingApprovalView(CamelModel):
    approval_id: str
    requested_by: str
    requested_at: str
    expires_at: str
    commands: list[ApprovalCommandView]


class SessionView(CamelModel):
    session_id: str
    run_id: str
    target_id: str
    status: str
    pending_approval: PendingApprovalView | None = None
    result: AgentOutput | None = None
    executed_commands: list[ExecutedCommand] = Field(default_factory=list)
    iterations: int = 0
    started_at: str


class ApprovalDecided(CamelModel):
    session_id: str
    approval_id: str
    decision: Literal["approve", "reject"]
    status: str


class TargetRegistration(Target):
    """POST /v1/targets body (createdBy/createdAt are set by the server)."""


class TargetList(CamelModel):
    targets: list[Target]


class ApiErrorBody(CamelModel):
    code: str
    message: str
    fields: list[str] | None = None


class ApiErrorResponse(CamelModel):
    error: ApiErrorBody


class ArticlePublishRequest(PublishArticleInput):
    """POST /v1/articles — spec §4.4 PublishArticleInput plus the target to publish on."""

    target_id: str = Field(pattern=field_rules.TARGET_ID)


class ArticleAccepted(CamelModel):
    article_id: str
    status: str
    status_url: str


class ArticleJobView(CamelModel):
    article_id: str
    target_id: str
    status: Literal["Queued", "Running", "Completed", "Failed"]
    created_at: str
    updated_at: str
    result: PublishArticleOutput | None = None
