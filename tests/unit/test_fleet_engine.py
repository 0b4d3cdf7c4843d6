"""The fleet engine's rules with sites that answer at once (fleet/engine.py, fleet/runs.py): the plan is
made on the first canary only, the canary gates the rest, failures above the tolerated count stop what has
not started, at most `concurrency` sites run at once, a site the requester may not change is skipped."""

from __future__ import annotations

import threading
import time

from wp_agent.agent.session_state import CommandRecord, CommandStatus, SessionState, SessionStatus
from wp_agent.fleet.engine import FleetEngine, FleetRequest
from wp_agent.fleet.runs import SiteAccess
from wp_agent.models.agent_io import AgentOutput
from wp_agent.models.fleet import FleetReport, FleetStatus, FleetStep, SiteResult, SiteStatus
from wp_agent.models.run_status import RunStatus
from wp_agent.models.target import Role
from wp_agent.policy import PolicyCategory

STEP = FleetStep(tool_use_id="toolu_1", command="plugin update --all", category="destructive",
                 summary_ja="更新します", impact_ja="戻します")  # fmt: skip


class Sites:
    """Sites whose runs end as told: `outcome[site]` is completed | failed | rolledBack."""

    def __init__(
        self, outcome: dict[str, str], *, seconds: float = 0.0, roles: dict[str, Role | None] | None = None
    ):
        self.outcome = outcome
        self.seconds = seconds
        self.roles = roles or {}
        self.ran: list[str] = []
        self.recorded: list[tuple[str, SiteStatus]] = []
        self.planned_on: list[str] = []
        self.running = self.most = 0
        self._lock = threading.Lock()

    def access(self, site: str) -> SiteAccess:
        return SiteAccess(role=self.roles.get(site, Role.ADMIN))

    def record(self, state: SessionState, result: SiteResult) -> None:
        self.recorded.append((state.session_id, result.status))

    def target_id(self, site: str) -> str:
        return f"local:{site}"

    def run(self, site: str, state: SessionState) -> SessionState:
        assert state.fleet is not None
        if state.fleet.mode == "plan":
            self.planned_on.append(site)
            state.fleet.steps.append(STEP)
            state.status = SessionStatus.COMPLETED
            state.result = AgentOutput(success=True, response="計画です", run_status=RunStatus.COMPLETED)
            return state
        with self._lock:
            self.ran.append(site)
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(self.seconds)
        with self._lock:
            self.running -= 1
        ends = self.outcome.get(site, "completed")
        record = CommandRecord(tool_use_id="t", run_id=state.run_id, command=STEP.command, category=PolicyCategory.DESTRUCTIVE,
                               rule="r", policy_reason="", status=CommandStatus.FINISHED, iteration=1,
                               exit_code=0 if ends == "completed" else 1, rolled_back=ends == "rolledBack")  # fmt: skip
        state.commands.append(record)
        state.status = SessionStatus.COMPLETED if ends == "completed" else SessionStatus.FAILED
        run_status = RunStatus.COMPLETED if ends == "completed" else RunStatus.FAILED
        state.result = AgentOutput(success=ends == "completed", response=ends, run_status=run_status)
        return state


def _request(
    sites: list[str], *, canary: int = 1, concurrency: int = 5, tolerated_failures: int = 0
) -> FleetRequest:
    return FleetRequest(
        message="更新して", sites=sites, user_id="u1", canary=canary, concurrency=concurrency,
        tolerated_failures=tolerated_failures,
    )  # fmt: skip


def test_the_plan_is_made_once_on_the_first_canary_and_approved_once() -> None:
    sites = Sites({})
    asked: list[FleetReport] = []

    def approve(shown: FleetReport) -> str:
        asked.append(shown)
        return "u1"

    report = FleetEngine(sites).run(_request(["a", "b", "c"], canary=2), approve)
    assert sites.planned_on == ["a"]
    assert len(asked) == 1
    assert [s.command for s in asked[0].plan] == ["plugin update --all"]
    assert report.status is FleetStatus.COMPLETED
    assert [r.canary for r in report.results] == [True, True, False]
    assert report.approved_by == "u1"


def test_a_declined_plan_runs_nowhere() -> None:
    sites = Sites({})
    report = FleetEngine(sites).run(_request(["a", "b"]), lambda shown: None)
    assert report.status is FleetStatus.AWAITING_APPROVAL
    assert sites.ran == []


def test_a_canary_that_does_not_end_healthy_stops_the_rest() -> None:
    sites = Sites({"a": "rolledBack"})
    report = FleetEngine(sites).apply(_request(["a", "b", "c"], tolerated_failures=5), [STEP], "u1")
    assert sites.ran == ["a"]
    assert [r.status for r in report.results] == [
        SiteStatus.ROLLED_BACK,
        SiteStatus.SKIPPED,
        SiteStatus.SKIPPED,
    ]
    assert report.status is FleetStatus.STOPPED
    assert [status for _, status in sites.recorded] == [
        SiteStatus.ROLLED_BACK
    ]  # the sites that ran: recorded


def test_failures_above_the_tolerated_count_stop_what_has_not_started() -> None:
    sites = Sites({"b": "failed", "c": "rolledBack"})
    request = _request(["a", "b", "c", "d", "e"], concurrency=1, tolerated_failures=1)
    report = FleetEngine(sites).apply(request, [STEP], "u1")
    assert sites.ran == ["a", "b", "c"]  # the second failure is one too many: d and e never start
    assert [r.status.value for r in report.results] == [
        "completed",
        "failed",
        "rolledBack",
        "skipped",
        "skipped",
    ]
    assert report.status is FleetStatus.STOPPED


def test_within_the_tolerated_count_every_site_runs() -> None:
    sites = Sites({"b": "failed"})
    report = FleetEngine(sites).apply(_request(["a", "b", "c"], tolerated_failures=1), [STEP], "u1")
    assert sites.ran == ["a", "b", "c"] or sorted(sites.ran) == ["a", "b", "c"]
    assert report.status is FleetStatus.PARTIAL_FAILURE


def test_at_most_concurrency_sites_run_at_once() -> None:
    sites = Sites({}, seconds=0.05)
    FleetEngine(sites).apply(_request([f"s{i}" for i in range(9)], concurrency=3), [STEP], "u1")
    assert sites.most == 3
    assert len(sites.ran) == 9


def test_a_site_the_requester_may_not_change_is_skipped_and_said_why() -> None:
    sites = Sites({}, roles={"b": None, "c": Role.VIEWER})
    report = FleetEngine(sites).apply(_request(["a", "b", "c"]), [STEP], "u1")
    assert sites.ran == ["a"]
    assert [r.status for r in report.results] == [
        SiteStatus.COMPLETED,
        SiteStatus.SKIPPED,
        SiteStatus.SKIPPED,
    ]
    assert "メンバーではない" in report.results[1].detail_ja
    assert "閲覧のみ" in report.results[2].detail_ja
    assert report.status is FleetStatus.COMPLETED


def test_a_canary_waiting_for_its_own_approval_stops_the_rest_and_says_so() -> None:
    class Waiting(Sites):
        def run(self, site: str, state: SessionState) -> SessionState:
            state = super().run(site, state)
            state.status, state.result = SessionStatus.AWAITING_APPROVAL, None
            return state

    sites = Waiting({})
    report = FleetEngine(sites).apply(_request(["a", "b"]), [STEP], "u1")
    assert [r.status for r in report.results] == [SiteStatus.AWAITING_APPROVAL, SiteStatus.SKIPPED]
    assert "承認を待っている" in report.results[1].detail_ja
    assert report.status is FleetStatus.STOPPED


def test_after_a_canary_that_did_not_end_healthy_no_other_canary_starts() -> None:
    sites = Sites({"a": "rolledBack"})
    report = FleetEngine(sites).apply(_request(["a", "b", "c", "d"], canary=3), [STEP], "u1")
    assert sites.ran == ["a"]
    assert [r.status.value for r in report.results] == ["rolledBack", "skipped", "skipped", "skipped"]
    assert [r.canary for r in report.results] == [True, True, True, False]


def test_a_canary_that_cannot_be_reached_makes_no_plan_and_says_why() -> None:
    class Unreachable(Sites):
        def run(self, site: str, state: SessionState) -> SessionState:
            raise ConnectionError("ssh: connect to host a port 22: Connection refused")

    report = FleetEngine(Unreachable({})).run(_request(["a", "b"]), lambda shown: "u1")
    assert report.status is FleetStatus.FAILED
    assert "Connection refused" in report.detail_ja
    assert report.results == []
