"""The events the Argo Note backend subscribes to (EventBridge): source, detail-types and the detail
of each, as models. Part of the contract like the API: the services choose them, the EventBridge
adapter sends them, and `event_schemas/` holds each detail-type's JSON Schema (generated from these
models, registered in the stack's schema registry; a test keeps the files equal to the models).

Delivery is EventBridge's: at least once and in no particular order. Every detail carries `eventId`,
the same for every delivery of the same announcement (derived from what is announced: one approval
request, the end of one run, the outcome of one article job), so a consumer de-duplicates on it.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from typing import Any, Final, Literal

from pydantic import Field

from wp_agent.errors import AgentErrorCode
from wp_agent.models.base import CamelModel
from wp_agent.models.run_status import RunStatus

SOURCE: Final = "argo.wp-agent"
APPROVAL_REQUESTED: Final = "Approval Requested"
RUN_COMPLETED: Final = "Run Completed"
RUN_FAILED: Final = "Run Failed"
ARTICLE_PUBLISHED: Final = "Article Published"
ARTICLE_FAILED: Final = "Article Failed"
APPROVAL_DECIDED: Final = "Approval Decided"
RUN_CANCELLED: Final = "Run Cancelled"
RUN_UNDONE: Final = "Run Undone"
FLEET_PLAN_READY: Final = "Fleet Plan Ready"
FLEET_RUN_FINISHED: Final = "Fleet Run Finished"
DETAIL_TYPES: Final = (
    APPROVAL_REQUESTED,
    APPROVAL_DECIDED,
    RUN_COMPLETED,
    RUN_FAILED,
    RUN_CANCELLED,
    RUN_UNDONE,
    ARTICLE_PUBLISHED,
    ARTICLE_FAILED,
    FLEET_PLAN_READY,
    FLEET_RUN_FINISHED,
)

# The session statuses as events carry them (the agent's SessionStatus; a test keeps them equal).
SessionStatusName = Literal[
    "Idle", "Planning", "Executing", "AwaitingApproval", "Completed", "Failed", "Cancelled"
]
# A fleet's and its sites' statuses (models/fleet.py; a test keeps them equal).
FleetStatusName = Literal[
    "planning",
    "awaitingApproval",
    "running",
    "completed",
    "partialFailure",
    "stopped",
    "declined",
    "failed",
    "nothingToDo",
]
FleetSiteStatusName = Literal[
    "running",
    "awaitingApproval",
    "completed",
    "declined",
    "partialFailure",
    "failed",
    "cancelled",
    "expired",
    "undone",
    "rolledBack",
    "skipped",
]
_RUN_STATUS = (
    "how the run stands or ended (models/run_status.py): the one vocabulary of the CLI, the API and events"
)


class EventDetail(CamelModel):
    event_id: str = Field(
        pattern=r"^[0-9a-f]{32}$",
        description="the same for every delivery of this announcement: de-duplicate on it",
    )


class HeldCommand(CamelModel):
    command: str = Field(description="the WP-CLI command, secrets masked")
    summary: str = Field(description="what it does, in Japanese")
    impact: str = Field(description="what it changes and whether it can be undone, in Japanese")


class ApprovalRequestedDetail(EventDetail):
    """A run holds destructive commands until its requester approves or rejects them."""

    session_id: str
    run_id: str
    user_id: str = Field(description="the requester: the only one who may decide")
    target_id: str
    status: SessionStatusName
    run_status: RunStatus | None = Field(default=None, description=_RUN_STATUS)
    approval_id: str
    approval_status: Literal["pending", "approved", "rejected", "expired", "cancelled"] = Field(
        description="pending, or the decision when the requester answered before the wait began"
    )
    expires_at: str
    commands: list[HeldCommand]


class ApprovalDecidedDetail(EventDetail):
    """An approval closed: the requester approved or rejected it, nobody answered in time (expired),
    or its run ended while it waited (cancelled). Once per approval and status: a decision the run never
    took (it ended first) is followed by the status it ended in, the later one being what happened."""

    session_id: str
    run_id: str
    user_id: str = Field(description="the requester")
    target_id: str
    approval_id: str
    approval_status: Literal["approved", "rejected", "expired", "cancelled"]
    decided_by: str | None = Field(
        default=None,
        description="who answered (the requester); absent when the approval expired or was cancelled",
    )
    decided_at: str = Field(description="when it closed (UTC, ISO 8601)")


class RunMetadata(CamelModel):
    total_iterations: int = Field(ge=0)
    total_commands_executed: int = Field(ge=0)
    execution_time_ms: int = Field(ge=0)


class RunFinishedDetail(EventDetail):
    """A run ended. Run Completed: everything asked was done (`runStatus` completed, or declined when
    the requester declined a held command); Run Cancelled: on the requester's word (`runStatus`
    cancelled, `errorCode` CANCELLED); Run Failed: anything else (`runStatus` says which)."""

    session_id: str
    run_id: str
    user_id: str
    target_id: str
    status: SessionStatusName
    run_status: RunStatus | None = Field(default=None, description=_RUN_STATUS)
    success: bool | None = None
    response: str | None = Field(default=None, description="the answer, at most 2,000 characters")
    error_code: AgentErrorCode | None = None
    error_message: str | None = None
    metadata: RunMetadata | None = None


class RunUndoneDetail(EventDetail):
    """An undo run put back everything the run changed: the run now stands as `undone`."""

    session_id: str
    run_id: str = Field(description="the run that was undone")
    undo_run_id: str = Field(description="the undo run that put its changes back")
    user_id: str
    target_id: str
    run_status: Literal["undone"]


class ArticleOutcomeDetail(EventDetail):
    """A publishArticle job ended (Article Published, or Article Failed with its error)."""

    article_id: str
    user_id: str
    target_id: str
    success: bool
    post_id: int | None = None
    post_url: str | None = None
    edit_url: str | None = None
    error_code: str | None = None
    error_message: str | None = None


class FleetStepDetail(CamelModel):
    command: str = Field(description="the WP-CLI command; `{name}` where a per-site value is looked up")
    lookups: dict[str, str] = Field(default_factory=dict, description="name -> the read that finds its value")
    summary: str = Field(description="what it does, in Japanese (looked-up values as {name})")
    impact: str = Field(description="what it changes, in Japanese")


class FleetSiteDetail(CamelModel):
    target_id: str
    status: FleetSiteStatusName
    canary: bool
    session_id: str | None = None
    run_id: str | None = None
    approval_id: str | None = Field(default=None, description="awaitingApproval: the site's own approval")
    detail: str = Field(default="", description="why, in Japanese")


class FleetPlanReadyDetail(EventDetail):
    """A fleet run's plan, made on its canary, waits for the one approval that covers every site
    (POST /v1/fleet-runs/{fleetRunId}/decision)."""

    fleet_run_id: str
    user_id: str = Field(description="the requester: the only one who may decide")
    target_ids: list[str]
    canary: list[str]
    plan: list[FleetStepDetail]


class FleetRunFinishedDetail(EventDetail):
    """A fleet run ended: every site's result (each site's own run also sent its Run Completed / Failed)."""

    fleet_run_id: str
    user_id: str
    status: FleetStatusName
    sites: list[FleetSiteDetail]
    detail: str = ""


DETAIL_MODELS: Final[dict[str, type[EventDetail]]] = {
    APPROVAL_REQUESTED: ApprovalRequestedDetail,
    APPROVAL_DECIDED: ApprovalDecidedDetail,
    RUN_COMPLETED: RunFinishedDetail,
    RUN_FAILED: RunFinishedDetail,
    RUN_CANCELLED: RunFinishedDetail,
    RUN_UNDONE: RunUndoneDetail,
    ARTICLE_PUBLISHED: ArticleOutcomeDetail,
    ARTICLE_FAILED: ArticleOutcomeDetail,
    FLEET_PLAN_READY: FleetPlanReadyDetail,
    FLEET_RUN_FINISHED: FleetRunFinishedDetail,
}
# What one announcement is about: its event id is derived from these fields of the detail.
_ANNOUNCES: Final[dict[str, tuple[str, ...]]] = {
    APPROVAL_REQUESTED: ("approvalId",),
    # An approval approved whose run ended before taking the decision closes again (expired or
    # cancelled): each status is its own announcement.
    APPROVAL_DECIDED: ("approvalId", "approvalStatus"),
    RUN_COMPLETED: ("runId",),
    RUN_FAILED: ("runId",),
    RUN_CANCELLED: ("runId",),
    RUN_UNDONE: ("runId", "undoRunId"),
    ARTICLE_PUBLISHED: ("articleId",),
    ARTICLE_FAILED: ("articleId",),
    FLEET_PLAN_READY: ("fleetRunId",),
    FLEET_RUN_FINISHED: ("fleetRunId",),
}


def event_id(detail_type: str, detail: dict[str, Any]) -> str:
    """The de-duplication id of an announcement: a retried publish of the same one gets the same id."""
    subject = [detail_type, *(str(detail.get(name, "")) for name in _ANNOUNCES[detail_type])]
    return hashlib.sha256("\x1f".join(subject).encode("utf-8")).hexdigest()[:32]


def schema_file_name(detail_type: str) -> str:
    return detail_type.lower().replace(" ", "-") + ".json"


def event_schema(detail_type: str) -> dict[str, Any]:
    """The JSON Schema (draft 4, as EventBridge's schema registry takes it) of a whole event of this
    detail-type: the EventBridge envelope with the detail."""
    detail = DETAIL_MODELS[detail_type].model_json_schema(
        by_alias=True, ref_template="#/definitions/{model}", mode="serialization"
    )
    definitions = detail.pop("$defs", {})
    schema: dict[str, Any] = _draft4(
        {
            "$schema": "http://json-schema.org/draft-04/schema#",
            "title": detail_type,
            "description": detail.get("description", ""),
            "type": "object",
            "required": ["id", "detail-type", "source", "time", "detail"],
            "properties": {
                "version": {"type": "string"},
                "id": {
                    "type": "string",
                    "description": "EventBridge's own id: a new one each time the event is published (de-duplicate on detail.eventId)",
                },
                "detail-type": {"type": "string", "enum": [detail_type]},
                "source": {"type": "string", "enum": [SOURCE]},
                "account": {"type": "string"},
                "time": {"type": "string"},
                "region": {"type": "string"},
                "resources": {"type": "array", "items": {"type": "string"}},
                "detail": detail,
            },
            "definitions": definitions,
        }
    )
    return schema


def _draft4(node: Any) -> Any:
    """pydantic writes JSON Schema 2020-12; the registry takes draft 4: `const` becomes a one-value
    enum and `null` alternatives stay as anyOf branches of type null (both read the same in draft 4)."""
    if isinstance(node, dict):
        converted = {key: _draft4(value) for key, value in node.items()}
        if "const" in converted:
            converted["enum"] = [converted.pop("const")]
        return converted
    if isinstance(node, list):
        return [_draft4(item) for item in node]
    return node


def committed_schema(detail_type: str) -> dict[str, Any]:
    """The schema file shipped with the package (what the stack registers)."""
    text = resources.files("wp_agent.models").joinpath("event_schemas", schema_file_name(detail_type))
    loaded: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return loaded
