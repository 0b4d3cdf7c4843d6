"""The fleet engine on one machine (the CLI): plan on the canary, one approval, the canary's runs, then the
rest side by side (bounded), each site over its own SSH pool; stopped when the canary does not end healthy
or more sites failed than tolerated. On AWS the workflow does the same with the same pieces (fleet/runs.py)
as a Step Functions Distributed Map."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

from wp_agent.agent.session_state import SessionState
from wp_agent.fleet import runs
from wp_agent.fleet.runs import SiteAccess
from wp_agent.masking import mask_text
from wp_agent.models.fleet import (
    DEFAULT_FLEET_CONCURRENCY,
    FleetReport,
    FleetStatus,
    FleetStep,
    SiteResult,
    SiteStatus,
    planned,
)


class SiteDriver(Protocol):
    """How the engine reaches one site: the requester's rights there, and a session run to its end (or
    until it waits for a person nobody here can be)."""

    def access(self, site: str) -> SiteAccess: ...

    def target_id(self, site: str) -> str: ...

    def run(self, site: str, state: SessionState) -> SessionState: ...

    def record(self, state: SessionState, result: SiteResult) -> None:
        """The site's result, kept beside its run's records (its audit trail)."""


# Asked once with the plan: who approved it (an actor id), or None (declined, or nobody can answer here).
PlanApproval = Callable[[FleetReport], str | None]
Progress = Callable[[str], None]


@dataclass(frozen=True)
class FleetRequest:
    message: str
    sites: Sequence[str]  # in order: the first `canary` are the canary sites
    user_id: str
    canary: int = 1
    concurrency: int = DEFAULT_FLEET_CONCURRENCY
    tolerated_failures: int = 0
    tolerated_failure_percentage: int | None = None  # as asked; `tolerated_failures` is what it came to
    fleet_run_id: str = field(default_factory=runs.new_fleet_run_id)

    def report(self, status: FleetStatus, **fields: object) -> FleetReport:
        return FleetReport(
            fleet_run_id=self.fleet_run_id,
            status=status,
            message=self.message,
            sites=list(self.sites),
            canary=list(self.sites[: self.canary]),
            concurrency=self.concurrency,
            tolerated_failures=self.tolerated_failures,
            tolerated_failure_percentage=self.tolerated_failure_percentage,
            **fields,
        )


class FleetEngine:
    def __init__(self, driver: SiteDriver, progress: Progress | None = None) -> None:
        self._driver = driver
        self._say = progress or (lambda _text: None)

    def plan(self, request: FleetRequest) -> tuple[FleetReport, list[FleetStep]]:
        """The plan made on the first canary site (nothing of it runs there yet)."""
        canary = request.sites[0]
        access = self._driver.access(canary)
        refused = runs.not_allowed(access, [])
        if refused is not None:
            return request.report(
                FleetStatus.FAILED, detail_ja=f"カナリアのサイト「{canary}」: {refused}"
            ), []
        self._say(f"カナリアのサイト「{canary}」で計画を立てています…")
        state = runs.planning_session(
            request.fleet_run_id, request.message, len(request.sites), session_id=_session_id(),
            user_id=request.user_id, target_id=self._driver.target_id(canary), access=access,
        )  # fmt: skip
        try:
            state = self._driver.run(canary, state)
        except Exception as exc:  # noqa: BLE001 - the canary unreachable or misconfigured: no plan, said why
            detail = f"カナリアのサイト「{canary}」で計画を立てられませんでした: {mask_text(str(exc))[:300]}"
            return request.report(FleetStatus.FAILED, detail_ja=detail), []
        made = runs.plan_outcome(state)
        plan = planned(made.steps) if made.status is FleetStatus.AWAITING_APPROVAL else []
        shown = request.report(
            made.status, plan=plan, plan_answer_ja=made.answer_ja, detail_ja=made.detail_ja
        )
        return shown, made.steps

    def run(self, request: FleetRequest, approve: PlanApproval) -> FleetReport:
        """Plan, ask once, then run: the canary first, the rest side by side; one report."""
        shown, steps = self.plan(request)
        if shown.status is not FleetStatus.AWAITING_APPROVAL:
            return shown
        approver = approve(shown)
        if approver is None:
            return shown
        return self.apply(request, steps, approver, plan_answer=shown.plan_answer_ja)

    def apply(
        self, request: FleetRequest, steps: Sequence[FleetStep], approver: str, *, plan_answer: str = ""
    ) -> FleetReport:
        """The approved plan on every site: the canary ones one by one, then (when they ended healthy)
        the rest up to `concurrency` at once, none started once failures went over the tolerated count."""
        results: dict[str, SiteResult] = {}
        lock = threading.Lock()
        stopped = threading.Event()
        canary = list(request.sites[: request.canary])
        for site in canary:  # one by one; after one that did not end healthy, no other starts
            done = [results[s] for s in canary if s in results]
            healthy = runs.canary_healthy(done)
            results[site] = (
                self._one(request, site, steps, approver, canary=True)
                if healthy
                else runs.skipped(site, runs.canary_stop_reason(done), canary=True)
            )
        rest = list(request.sites[request.canary :])
        if not runs.canary_healthy([results[s] for s in canary]):
            stopped.set()
            why = runs.canary_stop_reason([results[s] for s in canary])
            for site in rest:
                results[site] = runs.skipped(site, why)
        else:

            def one(site: str) -> None:
                if stopped.is_set():
                    result = runs.skipped(site, runs.STOPPED_BY_FAILURES_JA)
                else:
                    result = self._one(request, site, steps, approver, canary=False)
                with lock:
                    results[site] = result
                    if runs.over_tolerance(list(results.values()), request.tolerated_failures):
                        stopped.set()

            workers = max(1, min(request.concurrency, len(rest) or 1))
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fleet") as pool:
                list(pool.map(one, rest))
        ordered, status = runs.concluded(request.sites, canary, list(results.values()))
        return request.report(
            status,
            plan=planned(list(steps)),
            plan_answer_ja=plan_answer,
            approved_by=approver,
            results=ordered,
        )

    def _one(
        self, request: FleetRequest, site: str, steps: Sequence[FleetStep], approver: str, *, canary: bool
    ) -> SiteResult:
        access = self._driver.access(site)
        refused = runs.not_allowed(access, steps)
        if refused is not None:
            return runs.skipped(site, refused, canary=canary)
        self._say(f"サイト「{site}」で実行しています…")
        state = runs.site_session(
            request.fleet_run_id, request.message, steps, approver, session_id=_session_id(),
            user_id=request.user_id, target_id=self._driver.target_id(site), access=access,
        )  # fmt: skip
        try:
            state = self._driver.run(site, state)
        except Exception as exc:  # noqa: BLE001 - one site's failure (its connection, its settings) is its own
            return SiteResult(site=site, status=SiteStatus.FAILED, canary=canary, session_id=state.session_id,
                              run_id=state.run_id, detail_ja=f"実行できませんでした: {mask_text(str(exc))[:300]}")  # fmt: skip
        result = runs.site_result(site, state, canary=canary)
        self._driver.record(state, result)
        self._say(f"サイト「{site}」: {result.status.value}")
        return result


def _session_id() -> str:
    return f"ses_{runs.new_fleet_run_id()[4:]}"
