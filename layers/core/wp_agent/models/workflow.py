"""The workflow contract, one source for the core, the handlers and infra/ (the state machine):
what a turn answers (`Route`), the actions of the workflow_tasks function (`WorkflowAction`) and the
task payloads (ids only; the session store holds everything else)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from wp_agent.models.base import CamelModel

_ID = r"^[A-Za-z0-9_\-]{1,80}$"


class Route(StrEnum):
    """Where the run goes after one agent turn: the turn function returns it as `route` and the
    state machine's Route choice branches on exactly these values."""

    CONTINUE = "CONTINUE"  # another turn (the model asked for more, or results are pending)
    AWAITING_APPROVAL = "AWAITING_APPROVAL"  # wait for the requester (task token)
    COMPLETED = "COMPLETED"  # the run ended with an answer
    FAILED = "FAILED"  # the run ended with an error (recorded on the session)


class WorkflowAction(StrEnum):
    """`action` of a workflow_tasks invocation (the state machine's small tasks)."""

    START_SCHEDULED_RUN = "start_scheduled_run"
    RECORD_FAILURE = "record_failure"
    EXPIRE_APPROVAL = "expire_approval"
    RECORD_ARTICLE_FAILURE = "record_article_failure"


class TurnTaskInput(CamelModel):
    model_config = CamelModel.model_config | {"extra": "ignore"}
    session_id: str = Field(pattern=_ID)
    run_id: str = Field(pattern=_ID)


class ApprovalTaskInput(TurnTaskInput):
    approval_id: str = Field(pattern=r"^apr_[0-9a-f]{20}$")
    task_token: str = Field(min_length=1, max_length=8_192)


class WorkflowTaskInput(CamelModel):
    model_config = CamelModel.model_config | {"extra": "ignore"}
    action: WorkflowAction
    session_id: str | None = Field(default=None, pattern=_ID)
    article_id: str | None = Field(default=None, pattern=_ID)
    run_id: str | None = Field(default=None, pattern=_ID)
    error: Any | None = None
    input: dict[str, Any] | None = None
    execution: str | None = Field(default=None, pattern=_ID)  # the execution's name (article tasks)


class PublishArticleTaskInput(CamelModel):
    """The publish_article function's input (its own function: it needs the target's SSH access)."""

    model_config = CamelModel.model_config | {"extra": "ignore"}
    article_id: str = Field(pattern=_ID)
    # The execution's own name: only the execution the job names may run it.
    execution: str | None = Field(default=None, pattern=_ID)


class FleetAction(StrEnum):
    """`fleetAction` of a workflow_tasks invocation in the workflow's fleet branch (service/fleets.py)."""

    PLANNED = "planned"
    WAIT_FOR_APPROVAL = "wait_for_approval"
    SITES = "sites"
    SITE_START = "site_start"
    SITE_ENDED = "site_ended"
    BATCH_DONE = "batch_done"
    FINISHED = "finished"


class FleetTaskInput(CamelModel):
    model_config = CamelModel.model_config | {"extra": "ignore"}
    fleet_action: FleetAction
    fleet_run_id: str = Field(pattern=r"^flt_[0-9a-f]{20}$")
    target_id: str | None = Field(default=None, pattern=_ID)
    session_id: str | None = Field(default=None, pattern=_ID)
    task_token: str | None = Field(default=None, min_length=1, max_length=8_192)
    phase: str | None = Field(default=None, pattern=r"^(canary|rest)$")  # batch_done: the batch that ran
    # finished: how the plan's approval wait ended (its decision, or the wait's error)
    decision: dict[str, Any] | None = None
    error: Any | None = None
