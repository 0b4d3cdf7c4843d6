"""Fleet runs over the API and in the workflow (fleet/runs.py holds the rules the CLI's engine shares):

POST /v1/fleet-runs          the targets (named, or every one with a tag the caller may use), the
                             canary's planning session, the fleet record, the workflow started
(workflow) planned           the plan from the planning session → awaiting the one approval
(workflow) wait_for_approval the wait's task token kept (a decision that came first answered at once)
POST …/{fleetRunId}/decision the requester's approve/reject handed to that wait
(workflow) sites             the canary's batch for the map (one at a time, none tolerated)
(workflow) site_start        one site's session for the plan (or skipped: no rights, or the fleet stopped)
(workflow) site_ended        its result recorded; a failure fails the map's item (the tolerance counts it)
(workflow) batch_done        after the canary's batch, the rest's — only when every canary ended healthy
(workflow) finished          sites that never ran said as skipped, the fleet's end, its event
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from wp_agent import clock
from wp_agent.agent import lifecycle
from wp_agent.agent.ledger import Moment, commit
from wp_agent.fleet import runs
from wp_agent.fleet.runs import SiteAccess
from wp_agent.models import field_rules
from wp_agent.models.events import FLEET_PLAN_READY, FLEET_RUN_FINISHED
from wp_agent.models.fleet import (
    FleetDecisionRequest,
    FleetRecord,
    FleetReport,
    FleetRunAccepted,
    FleetRunRequest,
    FleetStatus,
    SiteResult,
    SiteStatus,
    planned,
)
from wp_agent.models.target import Target
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.runtime import AwsRuntime, FleetChangedError
from wp_agent.telemetry import FLEET_SITES_FAILED_TOTAL, FLEET_SITES_ROLLED_BACK_TOTAL

logger = logging.getLogger(__name__)

_DECLINED_JA = "計画は却下されました。どのサイトでも何も実行していません。"
_EXPIRED_JA = "計画が期限内に承認されなかったため、どのサイトでも何も実行していません。"


def _access(target: Target, user_id: str) -> SiteAccess:
    return SiteAccess(
        role=target.role_of(user_id),
        network_admin=target.multisite and target.network_admin(user_id),
        update_allowance=target.update_allowance,
    )


def site_session_id(fleet_run_id: str, target_id: str) -> str:
    """The session of one site's run, known before it exists (a retried start finds it)."""
    digest = hashlib.sha256(f"{fleet_run_id}\n{target_id}".encode()).hexdigest()[:12]
    return f"ses_{fleet_run_id.removeprefix('flt_')}_{digest}"


class FleetService:
    def __init__(self, runtime: AwsRuntime) -> None:
        self._rt = runtime

    # -- the API ----------------------------------------------------------------------------------

    def start(self, user_id: str, body: FleetRunRequest) -> FleetRunAccepted:
        targets = self._targets(user_id, body)
        if body.canary > len(targets):
            raise ApiError(
                ApiErrorCode.VALIDATION_ERROR,
                f"canary は対象サイトの数（{len(targets)}）以下にしてください。",
                fields=["canary"],
            )
        fleet_run_id = runs.new_fleet_run_id()
        canary = targets[0]
        access = _access(canary, user_id)
        state = runs.planning_session(
            fleet_run_id, body.message, len(targets), session_id=f"ses_{fleet_run_id.removeprefix('flt_')}",
            user_id=user_id, target_id=canary.target_id, access=access,
        )  # fmt: skip
        lifecycle.start_run(
            state,
            site_url=None,
            network_admin=access.network_admin,
            role=access.role,
            update_allowance=access.update_allowance,
            execution_arn=self._rt.workflow.execution_arn(fleet_run_id),
        )
        now = clock.now_iso()
        ids = [t.target_id for t in targets]
        report = FleetReport(
            fleet_run_id=fleet_run_id, status=FleetStatus.PLANNING, message=body.message, sites=ids,
            canary=ids[: body.canary], concurrency=min(body.concurrency, self._rt.settings.wp_agent_ssh_slots_per_target),
            tolerated_failures=body.tolerated(len(ids)),
            tolerated_failure_percentage=body.tolerated_failure_percentage, plan_session_id=state.session_id,
        )  # fmt: skip
        record = FleetRecord(report=report, user_id=user_id, plan_session_id=state.session_id,
                             plan_run_id=state.run_id, created_at=now, updated_at=now)  # fmt: skip
        commit(self._rt.sessions, self._rt.audit, state, Moment.RUN_STARTED)
        self._rt.fleets.create(record)
        try:
            self._rt.workflow.start_fleet(fleet_run_id, state.session_id, state.run_id)
        except Exception as exc:
            logger.exception("could not start the fleet run", extra={"fleet_run_id": fleet_run_id})
            lifecycle.fail_run(state, "workflow_start_failed")
            commit(self._rt.sessions, self._rt.audit, state, Moment.RUN_ENDED)
            self._rt.fleets.change(fleet_run_id, _ended(FleetStatus.FAILED, "処理を開始できませんでした。"))
            raise ApiError(ApiErrorCode.WORKFLOW_UNAVAILABLE) from exc
        logger.info("fleet run requested", extra={"fleet_run_id": fleet_run_id, "sites": len(ids)})
        return FleetRunAccepted(fleet_run_id=fleet_run_id, status=report.status, sites=ids, canary=report.canary,
                                status_url=f"/v1/fleet-runs/{fleet_run_id}")  # fmt: skip

    def _targets(self, user_id: str, body: FleetRunRequest) -> list[Target]:
        """The fleet's targets the caller may use, in order (a tag: by id); a named one the caller may
        not use is 404 as if it did not exist."""
        if body.tag is not None:
            found = [
                t for t in self._rt.registry.list() if body.tag in t.tags and t.role_of(user_id) is not None
            ]
            if not found:
                raise ApiError(ApiErrorCode.FLEET_NO_TARGETS, fields=["tag"])
            return found
        targets = []
        for target_id in body.target_ids or []:
            target = self._rt.registry.get(target_id)
            if target is None or target.role_of(user_id) is None:
                raise ApiError(ApiErrorCode.TARGET_NOT_FOUND, f"対象サイト {target_id} が見つかりません。",
                               fields=["targetIds"])  # fmt: skip
            targets.append(target)
        return targets

    def view(self, user_id: str, fleet_run_id: str) -> FleetReport:
        return self._owned(user_id, fleet_run_id).report

    def _owned(self, user_id: str, fleet_run_id: str) -> FleetRecord:
        if not field_rules.matches(field_rules.FLEET_RUN_ID, fleet_run_id):
            raise ApiError(ApiErrorCode.FLEET_RUN_NOT_FOUND)
        record = self._rt.fleets.get(fleet_run_id)
        if record is None or record.user_id != user_id:
            raise ApiError(ApiErrorCode.FLEET_RUN_NOT_FOUND)
        return record

    def decide(self, user_id: str, fleet_run_id: str, body: FleetDecisionRequest) -> FleetReport:
        """The requester's one decision on the plan, handed to the workflow's wait (when it is waiting;
        otherwise the wait answers itself when it begins)."""
        self._owned(user_id, fleet_run_id)

        def store(record: FleetRecord) -> str | None:
            if record.report.status is not FleetStatus.AWAITING_APPROVAL or record.decision is not None:
                raise ApiError(ApiErrorCode.FLEET_NOT_AWAITING_APPROVAL)
            record.decision, record.decided_by = body.decision, user_id
            return record.task_token

        try:
            record, token = self._rt.fleets.change(fleet_run_id, store)
        except FleetChangedError:
            raise ApiError(ApiErrorCode.SESSION_CHANGED) from None
        if token is not None:
            _hand_over(self._rt, token, record)
        return record.report


def _hand_over(runtime: AwsRuntime, token: str, record: FleetRecord) -> None:
    runtime.approval_waits.resume(
        token, {"approved": record.decision == "approve", "decidedBy": record.decided_by}
    )


def _batch(record: FleetRecord, phase: str) -> dict[str, Any]:
    """One batch of sites for the workflow's map: its items, how many at once, how many may fail."""
    report = record.report
    count = len(report.canary)
    canary = phase == "canary"
    sites = report.sites[:count] if canary else report.sites[count:]
    return {
        "next": "run",
        "phase": phase,
        "items": [{"fleetRunId": report.fleet_run_id, "targetId": site} for site in sites],
        "concurrency": 1 if canary else report.concurrency,
        "toleratedFailures": 0 if canary else report.tolerated_failures,
    }


def _ended(status: FleetStatus, detail_ja: str = "") -> Any:
    def end(record: FleetRecord) -> None:
        record.report.status = status
        record.report.detail_ja = detail_ja or record.report.detail_ja

    return end


class FleetTasks:
    """The fleet branch's tasks of the workflow (service/task_handlers.py routes them here)."""

    def __init__(self, runtime: AwsRuntime) -> None:
        self._rt = runtime

    def planned(self, fleet_run_id: str) -> dict[str, Any]:
        """The canary's planning run ended: its plan waits for the one approval (or the fleet ends)."""
        record = self._record(fleet_run_id)
        made = runs.plan_outcome(self._rt.sessions.load(record.plan_session_id))

        def plan(current: FleetRecord) -> str:
            if current.report.status is not FleetStatus.PLANNING:
                return "approval" if current.report.status is FleetStatus.AWAITING_APPROVAL else "end"
            current.report.plan_answer_ja = made.answer_ja
            current.report.status = made.status
            current.report.detail_ja = made.detail_ja or current.report.detail_ja
            if made.status is not FleetStatus.AWAITING_APPROVAL:
                return "end"
            current.steps, current.report.plan = made.steps, planned(made.steps)
            return "approval"

        _, following = self._rt.fleets.change(fleet_run_id, plan)
        return {"fleetRunId": fleet_run_id, "next": following}

    def wait_for_approval(self, fleet_run_id: str, task_token: str) -> None:
        def keep(record: FleetRecord) -> bool:
            first = record.task_token is None
            record.task_token = task_token
            return first

        record, first = self._rt.fleets.change(fleet_run_id, keep)
        if record.decision is not None:  # decided before the wait began: answered now
            _hand_over(self._rt, task_token, record)
        elif first:
            report = record.report
            detail = {
                "fleetRunId": fleet_run_id, "userId": record.user_id, "targetIds": report.sites,
                "canary": report.canary,
                "plan": [{"command": s.command, "lookups": s.lookups, "summary": s.summary_ja, "impact": s.impact_ja}
                         for s in record.steps],
            }  # fmt: skip
            self._rt.events.publish(FLEET_PLAN_READY, detail)

    def sites(self, fleet_run_id: str) -> dict[str, Any]:
        """The approved plan runs: the canary's batch first (one at a time, no failure tolerated)."""

        def running(record: FleetRecord) -> None:
            record.report.status = FleetStatus.RUNNING
            record.report.approved_by = record.decided_by

        record, _ = self._rt.fleets.change(fleet_run_id, running)
        return _batch(record, "canary")

    def site_start(self, fleet_run_id: str, target_id: str) -> dict[str, Any]:
        """One site's session for the approved plan, or why it is skipped."""
        record = self._record(fleet_run_id)
        report = record.report
        canary = target_id in report.canary
        session_id = site_session_id(fleet_run_id, target_id)
        existing = self._rt.sessions.load(session_id)
        ours = (
            existing is not None
            and existing.fleet is not None
            and existing.fleet.fleet_run_id == fleet_run_id
        )
        if existing is not None and not (ours and existing.user_id == record.user_id):
            # (a session of that id that is not this fleet's run on this site: never taken for it)
            self._record_result(fleet_run_id, SiteResult(site=target_id, status=SiteStatus.FAILED, canary=canary,
                                                          detail_ja="このサイトの実行記録を作れませんでした。"))  # fmt: skip
            return {"route": "skip", "fleetRunId": fleet_run_id, "targetId": target_id}
        if existing is not None:  # a retried start: the run is under way
            return {"route": "run", "fleetRunId": fleet_run_id, "sessionId": session_id, "runId": existing.run_id,
                    "targetId": target_id}  # fmt: skip
        target = self._rt.registry.get(target_id)
        access = _access(target, record.user_id) if target is not None else SiteAccess(role=None)
        why = runs.not_allowed(access, record.steps)
        if not canary and runs.over_tolerance(report.results, report.tolerated_failures):
            why = runs.STOPPED_BY_FAILURES_JA
        earlier = [r for r in report.results if r.canary and r.site != target_id]
        if canary and not runs.canary_healthy(earlier):  # (one by one: after one that did not end healthy)
            why = runs.canary_stop_reason(earlier)
        if why is not None or target is None or record.decided_by is None:
            self._record_result(fleet_run_id, runs.skipped(target_id, why or "", canary=canary))
            return {"route": "skip", "fleetRunId": fleet_run_id, "targetId": target_id}
        state = runs.site_session(
            fleet_run_id, report.message, record.steps, record.decided_by, session_id=session_id, user_id=record.user_id,
            target_id=target_id, access=access,
        )  # fmt: skip
        lifecycle.start_run(
            state, site_url=None, network_admin=access.network_admin, role=access.role,
            update_allowance=access.update_allowance, execution_arn=self._rt.workflow.execution_arn(fleet_run_id),
        )  # fmt: skip
        commit(self._rt.sessions, self._rt.audit, state, Moment.RUN_STARTED)
        running = SiteResult(site=target_id, status=SiteStatus.RUNNING, canary=canary, session_id=session_id,
                             run_id=state.run_id)  # fmt: skip
        self._record_result(fleet_run_id, running)
        return {"route": "run", "fleetRunId": fleet_run_id, "sessionId": session_id, "runId": state.run_id,
                "targetId": target_id}  # fmt: skip

    def site_ended(self, fleet_run_id: str, target_id: str, session_id: str) -> dict[str, Any]:
        """The site's run ended: its result in the fleet report and in the site's audit; `failed` makes
        the map's item fail (what the tolerated failure count counts)."""
        record = self._record(fleet_run_id)
        state = self._rt.sessions.load(session_id)
        canary = target_id in record.report.canary
        if state is None:
            result = SiteResult(site=target_id, status=SiteStatus.FAILED, canary=canary,
                                detail_ja="このサイトの実行記録が見つかりません。")  # fmt: skip
        else:
            result = runs.site_result(target_id, state, canary=canary)
            self._rt.audit.append(runs.result_record(fleet_run_id, state, result))
        self._record_result(fleet_run_id, result)
        if result.status is SiteStatus.ROLLED_BACK:
            self._rt.telemetry.count(FLEET_SITES_ROLLED_BACK_TOTAL)
        if result.status.counts_as_failure:
            self._rt.telemetry.count(FLEET_SITES_FAILED_TOTAL)
        return {"fleetRunId": fleet_run_id, "targetId": target_id, "failed": result.status.counts_as_failure,
                "status": result.status.value}  # fmt: skip

    def batch_done(self, fleet_run_id: str, phase: str) -> dict[str, Any]:
        """After the canary's batch: the rest's, when every canary ended healthy (else they are skipped);
        after the rest's: the end."""
        record = self._record(fleet_run_id)
        report = record.report
        if phase != "canary" or len(report.sites) == len(report.canary):
            return {"next": "end", "phase": phase}
        results = [r for r in report.results if r.site in report.canary]
        if len(results) == len(report.canary) and runs.canary_healthy(results):
            return _batch(record, "rest")
        why = runs.canary_stop_reason(results)
        for site in report.sites[len(report.canary) :]:
            self._record_result(fleet_run_id, runs.skipped(site, why))
        return {"next": "end", "phase": phase}

    def finished(self, fleet_run_id: str, *, declined: bool = False, expired: bool = False) -> dict[str, Any]:
        """The fleet ends: a site that never ran is said as skipped (the fleet stopped), the status from
        the results, one Fleet Run Finished event."""

        def end(record: FleetRecord) -> bool:
            report = record.report
            if record.announced:
                return False  # a retried task: ended and told already
            record.announced = True
            if report.status is FleetStatus.AWAITING_APPROVAL or declined or expired:
                report.status = FleetStatus.DECLINED
                report.detail_ja = _EXPIRED_JA if expired and record.decision is None else _DECLINED_JA
            elif report.status is FleetStatus.RUNNING:
                report.results, report.status = runs.concluded(report.sites, report.canary, report.results)
            return True  # (no plan, nothing to do: as `planned` left it)

        record, ended = self._rt.fleets.change(fleet_run_id, end)
        report = record.report
        if ended:
            detail = {
                "fleetRunId": fleet_run_id, "userId": record.user_id, "status": report.status.value,
                "sites": [{"targetId": r.site, "status": r.status.value, "canary": r.canary, "sessionId": r.session_id,
                           "runId": r.run_id, "approvalId": r.approval_id, "detail": r.detail_ja[:1_000]}
                          for r in report.results],
                "detail": report.detail_ja,
            }  # fmt: skip
            self._rt.events.publish(FLEET_RUN_FINISHED, {k: v for k, v in detail.items() if v is not None})
        return {"fleetRunId": fleet_run_id, "status": report.status.value}

    # -- inside -------------------------------------------------------------------------------------

    def _record(self, fleet_run_id: str) -> FleetRecord:
        record = self._rt.fleets.get(fleet_run_id)
        if record is None:
            raise KeyError(f"fleet run {fleet_run_id} not found")
        return record

    def _record_result(self, fleet_run_id: str, result: SiteResult) -> None:
        def put(record: FleetRecord) -> None:
            record.report.results = [r for r in record.report.results if r.site != result.site] + [result]
            record.report.results.sort(key=lambda r: record.report.sites.index(r.site))

        self._rt.fleets.change(fleet_run_id, put)
