"""The fleet branch's tasks (service/fleets.py) with in-memory stores: a site's session is the fleet's own
or none — a session of the same id someone else made is never taken for the site's run — and a site
the requester may not change is skipped before anything is made for it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from wp_agent.agent.lifecycle import new_session
from wp_agent.agent.ports import InMemorySessionStore, MemoryAuditLog
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.fleet import FleetRecord, FleetReport, FleetStatus, FleetStep
from wp_agent.models.target import Target
from wp_agent.service.fleets import FleetTasks, site_session_id
from wp_agent.service.runtime import AwsRuntime
from wp_agent.telemetry import NoTelemetry

T = TypeVar("T")
FLEET = "flt_0123456789abcdef0123"
STEP = FleetStep(
    tool_use_id="t", command="plugin update --all", category="destructive", summary_ja="s", impact_ja="i"
)


class Fleets:
    def __init__(self, record: FleetRecord) -> None:
        self.record = record

    def get(self, fleet_run_id: str) -> FleetRecord | None:
        return self.record.model_copy(deep=True) if fleet_run_id == FLEET else None

    def change(self, fleet_run_id: str, change: Callable[[FleetRecord], T]) -> tuple[FleetRecord, T]:
        record = self.record.model_copy(deep=True)
        outcome = change(record)
        self.record = record
        return record, outcome


@dataclass
class Runtime:
    fleets: Fleets
    registry: dict[str, Target]
    sessions: InMemorySessionStore = field(default_factory=InMemorySessionStore)
    audit: MemoryAuditLog = field(default_factory=MemoryAuditLog)
    telemetry: NoTelemetry = field(default_factory=NoTelemetry)

    class workflow:  # noqa: N801 - stands in for the runtime's attribute
        @staticmethod
        def execution_arn(name: str) -> str:
            return f"arn:aws:states:us-east-1:123456789012:execution:wp-agent-runs:{name}"


def _target(target_id: str, **roles: Any) -> Target:
    return Target(target_id=target_id, host="wp.example.com", owners=roles.get("owners", ["u1"]),
                  members=roles.get("members", {}),
                  secret_arn="arn:aws:secretsmanager:us-east-1:123456789012:secret:wp-agent/targets/x")  # fmt: skip


def _tasks(*targets: Target) -> tuple[FleetTasks, Runtime]:
    ids = [t.target_id for t in targets]
    report = FleetReport(fleet_run_id=FLEET, status=FleetStatus.RUNNING, message="更新", sites=ids, canary=ids[:1],
                         concurrency=5, tolerated_failures=0)  # fmt: skip
    record = FleetRecord(report=report, user_id="u1", steps=[STEP], plan_session_id="ses_plan0001",
                         plan_run_id="run_0123456789abcdef0123", decided_by="u1", created_at="x", updated_at="x")  # fmt: skip
    runtime = Runtime(Fleets(record), {t.target_id: t for t in targets})
    return FleetTasks(cast(AwsRuntime, runtime)), runtime


def test_a_sites_session_is_made_for_the_fleet_and_found_again_by_a_retried_start() -> None:
    tasks, runtime = _tasks(_target("site-a"))
    started = tasks.site_start(FLEET, "site-a")
    assert started["route"] == "run"
    state = runtime.sessions.load(started["sessionId"])
    assert state is not None
    assert state.fleet is not None
    assert state.fleet.fleet_run_id == FLEET
    assert tasks.site_start(FLEET, "site-a") == started  # the same run, not a second one


def test_a_session_of_that_id_made_by_someone_else_is_never_taken_for_the_site() -> None:
    tasks, runtime = _tasks(_target("site-a", members={"u2": "admin"}))
    foreign = new_session(AgentInput(message="私のセッション"), session_id=site_session_id(FLEET, "site-a"),
                          user_id="u2", target_id="site-a")  # fmt: skip
    runtime.sessions.save(foreign)
    started = tasks.site_start(FLEET, "site-a")
    assert started["route"] == "skip"
    [result] = runtime.fleets.record.report.results
    assert result.status.value == "failed"
    kept = runtime.sessions.load(foreign.session_id)
    assert kept is not None
    assert (kept.user_id, kept.fleet) == ("u2", None)  # untouched


def test_a_site_the_requester_may_only_view_is_skipped_before_anything_is_made() -> None:
    tasks, runtime = _tasks(_target("site-a"), _target("site-b", owners=["u9"], members={"u1": "viewer"}))
    assert tasks.site_start(FLEET, "site-b")["route"] == "skip"
    assert runtime.sessions.load(site_session_id(FLEET, "site-b")) is None
    [result] = runtime.fleets.record.report.results
    assert (result.site, result.status.value) == ("site-b", "skipped")


def test_a_canary_does_not_start_after_one_that_did_not_end_healthy() -> None:
    from wp_agent.models.fleet import SiteResult, SiteStatus

    tasks, runtime = _tasks(_target("site-a"), _target("site-b"), _target("site-c"))
    runtime.fleets.record.report.canary = ["site-a", "site-b"]
    runtime.fleets.record.report.results = [
        SiteResult(site="site-a", status=SiteStatus.ROLLED_BACK, canary=True)
    ]
    assert tasks.site_start(FLEET, "site-b")["route"] == "skip"
    assert runtime.sessions.load(site_session_id(FLEET, "site-b")) is None
