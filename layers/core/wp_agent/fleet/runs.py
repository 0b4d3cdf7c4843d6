"""The sessions of a fleet run and what each came to — the same for the CLI's engine and the workflow's
tasks: the canary's planning session, one session per site for the approved plan, a site's result from
its session, and the fleet's progress rules (the canary gates the rest; above the tolerated failure count
the rest stop)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.audit_outbox import new_event
from wp_agent.agent.lifecycle import new_session
from wp_agent.agent.outcome import current_run_status
from wp_agent.agent.prompt import FLEET_PLAN_NOTE_JA
from wp_agent.agent.session_state import SessionState, SessionStatus
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.fleet import FleetRole, FleetStatus, FleetStep, SiteResult, SiteStatus
from wp_agent.models.target import Role, UpdateAllowance


def new_fleet_run_id() -> str:
    return f"flt_{uuid.uuid4().hex[:20]}"


@dataclass(frozen=True)
class SiteAccess:
    """What the requester may do on one site (the registry's answer, or the CLI's: the operator)."""

    role: Role | None
    network_admin: bool = False
    update_allowance: UpdateAllowance | None = None


def planning_session(
    fleet_run_id: str, message: str, site_count: int, *, session_id: str, user_id: str, target_id: str,
    access: SiteAccess,
) -> SessionState:  # fmt: skip
    """The canary's planning run: the instruction with the fleet note; its writes become the plan."""
    note = FLEET_PLAN_NOTE_JA.format(count=site_count)
    role = FleetRole(fleet_run_id=fleet_run_id, mode="plan")
    return _session(f"{message}\n\n{note}", role, session_id, user_id, target_id, access)


def site_session(
    fleet_run_id: str, message: str, steps: Sequence[FleetStep], approved_by: str, *, session_id: str,
    user_id: str, target_id: str, access: SiteAccess,
) -> SessionState:  # fmt: skip
    """One site's run of the approved plan (its opening: fleet/opening.py)."""
    role = FleetRole(fleet_run_id=fleet_run_id, mode="apply", steps=list(steps), approved_by=approved_by)
    return _session(f"フリート実行 {fleet_run_id}: {message}", role, session_id, user_id, target_id, access)


def _session(
    message: str, role: FleetRole, session_id: str, user_id: str, target_id: str, access: SiteAccess
) -> SessionState:
    state = new_session(
        AgentInput(message=message),
        session_id=session_id,
        user_id=user_id,
        target_id=target_id,
        network_admin=access.network_admin,
        role=access.role or Role.VIEWER,
        update_allowance=access.update_allowance,
    )
    state.fleet = role
    return state


@dataclass(frozen=True)
class PlanOutcome:
    """What the canary's planning run came to: a plan to approve, nothing to do, or no plan (and why)."""

    status: FleetStatus  # AWAITING_APPROVAL, NOTHING_TO_DO or FAILED
    steps: list[FleetStep]
    answer_ja: str  # what the model said when it ended
    detail_ja: str = ""


def plan_outcome(state: SessionState | None) -> PlanOutcome:
    steps = list(state.fleet.steps) if state is not None and state.fleet is not None else []
    result = state.result if state is not None else None
    answer = result.response if result is not None else ""
    if state is None or state.status is not SessionStatus.COMPLETED:
        error = result.error.message if result is not None and result.error else ""
        return PlanOutcome(
            FleetStatus.FAILED, steps, answer, f"計画を立てられませんでした: {error or answer}"
        )
    if not steps:
        return PlanOutcome(FleetStatus.NOTHING_TO_DO, steps, answer)
    return PlanOutcome(FleetStatus.AWAITING_APPROVAL, steps, answer)


def not_allowed(access: SiteAccess, steps: Sequence[FleetStep]) -> str | None:
    """Why the requester may not run the plan on a site at all (skipped, reported), or None. Finer
    rights (which objects a role may change) are the policy's, decided on the site for each step."""
    if access.role is None:
        return "このサイトのメンバーではないため、実行しませんでした。"
    if access.role is Role.VIEWER and steps:
        return "このサイトでは閲覧のみの権限のため、変更を実行しませんでした。"
    return None


def site_result(site: str, state: SessionState, *, canary: bool = False) -> SiteResult:
    """What a site's run came to, in the fleet report's vocabulary."""
    role = state.fleet
    about = {"site": site, "canary": canary, "session_id": state.session_id, "run_id": state.run_id}
    if role is not None and role.skipped_ja:
        return SiteResult(status=SiteStatus.SKIPPED, detail_ja=role.skipped_ja, **about)
    if role is not None and role.failed_ja:
        return SiteResult(status=SiteStatus.FAILED, detail_ja=role.failed_ja, **about)
    mine = state.run_commands()
    taken_back = [c for c in mine if c.rolled_back]
    result = state.result
    detail = (result.response or (result.error.message if result.error else "")) if result else ""
    if taken_back:
        reason = (taken_back[0].stderr.strip().splitlines() or [""])[0]
        return SiteResult(status=SiteStatus.ROLLED_BACK, detail_ja=reason[:400] or detail, **about)
    status = SiteStatus(current_run_status(state).value)
    approval = (
        state.pending_approval.approval_id
        if status is SiteStatus.AWAITING_APPROVAL and state.pending_approval
        else None
    )
    return SiteResult(status=status, detail_ja=detail[:1000], approval_id=approval, **about)


def result_record(fleet_run_id: str, state: SessionState, result: SiteResult) -> AuditEvent:
    """The audit record of a site's result in a fleet run, in the site's own trail."""
    said = {"status": result.status.value, "answer": result.detail_ja[:2_000]}
    return new_event(
        AuditEventType.FLEET_SITE_RESULT, state.audit_about(), **said, details={"fleetRunId": fleet_run_id}
    )


def skipped(site: str, reason_ja: str, *, canary: bool = False) -> SiteResult:
    return SiteResult(site=site, status=SiteStatus.SKIPPED, canary=canary, detail_ja=reason_ja)


def failures(results: Sequence[SiteResult]) -> int:
    return sum(1 for r in results if r.status.counts_as_failure)


def over_tolerance(results: Sequence[SiteResult], tolerated: int) -> bool:
    """The rest stop once more sites failed than tolerated."""
    return failures(results) > tolerated


def canary_healthy(results: Sequence[SiteResult]) -> bool:
    """The rest run only when every canary ended healthy: completed (the guard's probe found the site no
    worse after each code change; a canary with nothing to do proved nothing)."""
    return all(r.status is SiteStatus.COMPLETED for r in results)


STOPPED_BY_CANARY_JA = "カナリアのサイトが正常に終わらなかったため、実行しませんでした。"
STOPPED_BY_CANARY_WAITING_JA = "カナリアのサイトが自身の承認を待っているため、実行しませんでした（承認して終わったら、もう一度フリート実行してください）。"
STOPPED_BY_FAILURES_JA = "失敗したサイトが許容数を超えたため、実行しませんでした。"
_STOPPED = frozenset({STOPPED_BY_CANARY_JA, STOPPED_BY_CANARY_WAITING_JA, STOPPED_BY_FAILURES_JA})


def canary_stop_reason(canary: Sequence[SiteResult]) -> str:
    """Why the rest did not run after these canary results (they did not all end healthy)."""
    waiting = any(r.status is SiteStatus.AWAITING_APPROVAL for r in canary)
    return STOPPED_BY_CANARY_WAITING_JA if waiting else STOPPED_BY_CANARY_JA


def concluded(
    sites: Sequence[str], canary: Sequence[str], results: Sequence[SiteResult]
) -> tuple[list[SiteResult], FleetStatus]:
    """The fleet's end: every site's result in the fleet's order (a site that never started was stopped:
    skipped), and the fleet's status — stopped when some site did not run because of the rule."""
    found = {r.site: r for r in results}
    ordered = [
        found.get(site) or skipped(site, STOPPED_BY_FAILURES_JA, canary=site in canary) for site in sites
    ]
    halted = any(r.detail_ja in _STOPPED for r in ordered)
    return ordered, fleet_status(ordered, stopped=halted)


def fleet_status(results: Sequence[SiteResult], *, stopped: bool) -> FleetStatus:
    """The fleet's end from its sites' results."""
    if stopped:
        return FleetStatus.STOPPED
    done = {SiteStatus.COMPLETED, SiteStatus.SKIPPED}
    if all(r.status in done for r in results):
        return FleetStatus.COMPLETED
    if any(r.status is SiteStatus.AWAITING_APPROVAL for r in results) and not failures(results):
        return FleetStatus.AWAITING_APPROVAL
    return FleetStatus.PARTIAL_FAILURE
