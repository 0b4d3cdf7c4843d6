"""Fleet runs: one instruction over many sites, planned once on a canary site and approved once.

A plan is the ordered writes the model proposed on the canary (none of them ran there while planning),
each with the reads that fill in what differs per site (`lookups`: a name written `{name}` in the
command, and the read whose one-word answer it becomes on each site) and the approval text it read on
the canary, with the looked-up values written back as `{name}` (the template every site's own text must
equal for the one approval to cover it there)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from wp_agent.models import field_rules
from wp_agent.models.agent_io import MAX_MESSAGE_CHARS
from wp_agent.models.base import WHOLE_NUMBER, CamelModel, RequestModel

MAX_FLEET_SITES = 200
MAX_FLEET_CONCURRENCY = 20
DEFAULT_FLEET_CONCURRENCY = 5


def tolerated_count(percentage: int, sites: int) -> int:
    """A tolerated failure percentage of all the fleet's sites (its canaries included) as the count it
    allows: the rest stop once failures exceed `percentage`% of the sites, i.e. exceed this count (the
    largest whole number of sites within it: the line Step Functions' ToleratedFailurePercentage draws, here
    over the whole fleet, not over the items of one map run — the canary's batch tolerates none anyway)."""
    return percentage * sites // 100


class FleetStep(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    tool_use_id: str  # the canary's tool call it was planned from
    command: str  # as the model wrote it: `{name}` where a looked-up value goes
    lookups: dict[str, str] = Field(default_factory=dict)  # name -> read command (its answer: one word)
    reason: str = ""
    category: str  # the policy's category on the canary (write | destructive)
    # The approval text read on the canary, looked-up values as `{name}` (templates)
    summary_ja: str
    impact_ja: str


class FleetRole(BaseModel):
    """What a session is to a fleet run: the canary's planning run, or one site's run of the approved plan."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    fleet_run_id: str
    mode: Literal["plan", "apply"]
    # plan: the steps recorded so far; apply: the approved plan
    steps: list[FleetStep] = Field(default_factory=list)
    approved_by: str | None = None  # apply: who approved the plan for every site of the fleet
    values: dict[str, str] = Field(default_factory=dict)  # apply: this site's looked-up values
    # apply: why this site has nothing to do (a lookup found nothing), so its run did nothing
    skipped_ja: str | None = None
    # apply: why the plan could not be filled in here (a lookup's answer not one plain word, or the read
    # failed): nothing ran, and the site counts as failed
    failed_ja: str | None = None


class SiteStatus(StrEnum):
    """One site's result in a fleet report: the run-status vocabulary (models/run_status.py) and two more."""

    RUNNING = "running"
    AWAITING_APPROVAL = "awaitingApproval"
    COMPLETED = "completed"
    DECLINED = "declined"
    PARTIAL_FAILURE = "partialFailure"
    FAILED = "failed"
    CANCELLED = "cancelled"
    EXPIRED = "expired"
    UNDONE = "undone"
    ROLLED_BACK = "rolledBack"  # a guarded change made the site worse and was taken back
    SKIPPED = "skipped"  # not run: the requester may not change it, nothing to do there, or the fleet stopped

    @property
    def counts_as_failure(self) -> bool:
        """What the tolerated failure count counts."""
        return self in {SiteStatus.FAILED, SiteStatus.PARTIAL_FAILURE, SiteStatus.ROLLED_BACK}


class FleetStatus(StrEnum):
    PLANNING = "planning"
    AWAITING_APPROVAL = "awaitingApproval"  # the plan waits for the one approval
    RUNNING = "running"
    COMPLETED = "completed"  # every site completed (or had nothing to do)
    PARTIAL_FAILURE = "partialFailure"  # some sites did not complete; within the tolerated failures
    STOPPED = "stopped"  # the canary did not end healthy, or failures went over the tolerated count
    DECLINED = "declined"  # the plan was declined: nothing ran
    FAILED = "failed"  # no plan could be made (the canary's planning run failed)
    NOTHING_TO_DO = "nothingToDo"  # the plan has no change


class SiteResult(CamelModel):
    site: str  # the target id (API) or the named site (CLI)
    status: SiteStatus
    canary: bool = False
    session_id: str | None = None
    run_id: str | None = None
    approval_id: str | None = None  # awaitingApproval: the site's own approval
    detail_ja: str = ""


class PlannedStep(CamelModel):
    """A step as the plan shows it (API, CLI --json)."""

    command: str
    lookups: dict[str, str] = Field(default_factory=dict)
    category: str
    summary_ja: str
    impact_ja: str


class FleetReport(CamelModel):
    fleet_run_id: str
    status: FleetStatus
    message: str
    sites: list[str]
    canary: list[str]
    concurrency: int
    tolerated_failures: int
    tolerated_failure_percentage: int | None = None  # as asked; `tolerated_failures` is what it came to
    plan: list[PlannedStep] = Field(default_factory=list)
    plan_answer_ja: str = ""  # what the model said when it finished planning
    approved_by: str | None = None
    results: list[SiteResult] = Field(default_factory=list)
    detail_ja: str = ""
    plan_session_id: str | None = None  # the canary's planning run (its conversation: GET /v1/sessions/{id})


def planned(steps: list[FleetStep]) -> list[PlannedStep]:
    return [
        PlannedStep(
            command=s.command,
            lookups=s.lookups,
            category=s.category,
            summary_ja=s.summary_ja,
            impact_ja=s.impact_ja,
        )
        for s in steps
    ]


# -- over the API ---------------------------------------------------------------------------------------

TargetRef = Annotated[str, Field(pattern=field_rules.TARGET_ID)]


class FleetRunRequest(RequestModel):
    """POST /v1/fleet-runs: one instruction over the targets named, or every target with the tag the caller
    may use; the first `canary` of them (in the order given, or by id for a tag) run first."""

    model_config = RequestModel.model_config | {
        "json_schema_extra": {
            "oneOf": [{"required": ["targetIds"]}, {"required": ["tag"]}],
            "not": {"required": ["toleratedFailures", "toleratedFailurePercentage"]},
        }
    }

    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS, pattern=field_rules.VISIBLE_TEXT)
    target_ids: (
        Annotated[list[TargetRef], Field(min_length=1, max_length=MAX_FLEET_SITES)] | SkipJsonSchema[None]
    ) = None
    tag: Annotated[str, Field(pattern=field_rules.TAG)] | SkipJsonSchema[None] = None
    concurrency: Annotated[int, Field(ge=1, le=MAX_FLEET_CONCURRENCY), WHOLE_NUMBER] = (
        DEFAULT_FLEET_CONCURRENCY
    )
    canary: Annotated[int, Field(ge=1, le=MAX_FLEET_SITES), WHOLE_NUMBER] = 1
    tolerated_failures: Annotated[int, Field(ge=0, le=MAX_FLEET_SITES), WHOLE_NUMBER] = 0
    # Instead of a count: a percentage of the fleet's sites (rounded down to whole sites).
    tolerated_failure_percentage: Annotated[int, Field(ge=0, le=100), WHOLE_NUMBER] | SkipJsonSchema[None] = (
        None
    )

    @model_validator(mode="after")
    def _one_way_to_choose(self) -> FleetRunRequest:
        if (
            "tolerated_failures" in self.model_fields_set
            and "tolerated_failure_percentage" in self.model_fields_set
        ):
            raise ValueError("give toleratedFailures or toleratedFailurePercentage, not both")
        for name in ("target_ids", "tag", "tolerated_failure_percentage"):
            if name in self.model_fields_set and getattr(self, name) is None:
                raise ValueError(f"{name} cannot be null (leave it out)")
        if (self.target_ids is None) == (self.tag is None):
            raise ValueError("give either targetIds or tag")
        if self.target_ids is not None:
            self.target_ids = list(dict.fromkeys(self.target_ids))
        return self

    def tolerated(self, sites: int) -> int:
        """The tolerated failure count for a fleet of `sites`: as given, or from the percentage."""
        if self.tolerated_failure_percentage is None:
            return self.tolerated_failures
        return tolerated_count(self.tolerated_failure_percentage, sites)


class FleetDecisionRequest(RequestModel):
    decision: Literal["approve", "reject"]
    comment: str | None = Field(default=None, max_length=1_000, pattern=field_rules.NO_NUL)


class FleetRunAccepted(CamelModel):
    fleet_run_id: str
    status: FleetStatus
    sites: list[str]
    canary: list[str]
    status_url: str


class FleetRecord(BaseModel):
    """A fleet run as stored (the API's and the workflow's): its report, who asked, the plan's steps, the
    planning run, and the approval wait's task token (a capability: never in a view or a log)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    report: FleetReport
    user_id: str
    steps: list[FleetStep] = Field(default_factory=list)
    plan_session_id: str
    plan_run_id: str
    task_token: str | None = None
    decision: Literal["approve", "reject"] | None = None
    decided_by: str | None = None
    announced: bool = False  # its end was told (Fleet Run Finished): a retried last task tells it once
    created_at: str
    updated_at: str
    version: int = 0
