"""Fleet runs: one instruction over many sites, planned once on a canary site and approved once.

A plan is the ordered writes the model proposed on the canary (none of them ran there while planning),
each with the reads that fill in what differs per site (`lookups`: a name written `{name}` in the
command, and the read whose one-word answer it becomes on each site) and the approval text it read on
the canary, with the looked-up values written back as `{name}` (the template every site's own text must
equal for the one approval to cover it there)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from wp_agent.models.base import CamelModel


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
    plan: list[PlannedStep] = Field(default_factory=list)
    plan_answer_ja: str = ""  # what the model said when it finished planning
    approved_by: str | None = None
    results: list[SiteResult] = Field(default_factory=list)
    detail_ja: str = ""


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
