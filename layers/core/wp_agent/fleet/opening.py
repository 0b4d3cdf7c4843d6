"""A fleet site's run of the approved plan: its first step is the plan (no model call) — the plan's
lookups read on this site (policy-checked reads, audited) and filled in — and its answer, once the steps
ran or were decided, comes from the records."""

from __future__ import annotations

from wp_agent.agent import audit_outbox
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.ports import Opening, OpeningStep, RateLimiter
from wp_agent.agent.prompt import TOOL_NAME
from wp_agent.agent.session_state import CommandStatus, SessionState
from wp_agent.agent.site_commands import SiteCommands
from wp_agent.executors.port import WpCli
from wp_agent.policy import CommandPolicy
from wp_agent.policy.fleet_plan import PlanStepError, fill, looked_up_value, step_tool_use_id
from wp_agent.telemetry import NoTelemetry

LOOKUP_REASON = "フリート計画: このサイトの値を調べる（読み取りのみ）"


class FleetRunOpening:
    def __init__(self, policy: CommandPolicy, wp_cli: WpCli, limiter: RateLimiter) -> None:
        self._policy = policy
        self._site = SiteCommands(wp_cli, limiter, policy, NoTelemetry())

    def first_step(self, state: SessionState) -> Opening | None:
        role = state.fleet
        if role is None or role.mode != "apply":
            return None
        opening = f"フリート実行 {role.fleet_run_id} の承認された計画（{len(role.steps)}件の手順）をこのサイトで実行します。"
        audit = []
        lookups = {name: read for step in role.steps for name, read in step.lookups.items()}
        for name, read in lookups.items():
            if name in role.values:
                continue  # read by an earlier attempt of this step
            decision = self._policy.classify(read)
            stdout, fields = self._site.read(
                state.site_scope(), state.target_id, LOOKUP_REASON, list(decision.argv)
            )
            if fields is not None:
                audit.append(
                    audit_outbox.new_event(AuditEventType.COMMAND_EXECUTED, state.audit_about(), **fields)
                )
            try:
                role.values[name] = looked_up_value(name, stdout)  # (None: refused as no read, or failed)
            except PlanStepError as unusable:
                said = f"{unusable.message_ja}（wp {read}）このサイトでは何も実行しませんでした。"
                if unusable.absent and stdout is not None:
                    role.skipped_ja = said
                else:
                    role.failed_ja = said
                return Opening([{"type": "text", "text": f"{opening}\n{said}"}], audit)
        content: list[dict[str, object]] = [{"type": "text", "text": opening}]
        for index, step in enumerate(role.steps):
            content.append(
                {
                    "type": "tool_use",
                    "id": step_tool_use_id(state.run_id, index),
                    "name": TOOL_NAME,
                    "input": {"command": fill(step.command, role.values), "reason": step.reason},
                }
            )
        return Opening(content, audit)

    def last_step(self, state: SessionState) -> str | None:
        role = state.fleet
        if role is None or role.mode != "apply":
            return None
        mine = [c for c in state.commands if c.run_id == state.run_id]
        done = [c for c in mine if c.succeeded]
        lines = [
            f"フリート実行 {role.fleet_run_id} の計画のうち {len(done)}/{len(role.steps)} 件の手順を実行しました。"
        ]
        for record in mine:
            if record.succeeded:
                continue
            if record.status is CommandStatus.REJECTED:
                lines.append(f"・見送った手順: wp {record.command}")
                continue
            why = (record.stderr or record.policy_reason).strip().splitlines()
            lines.append(f"・できなかった手順: wp {record.command}（{why[0][:200] if why else '失敗'}）")
        return "\n".join(lines)


class PlannedOpenings:
    """The planned first step of whichever kind of run this is (an undo run, a fleet site's run)."""

    def __init__(self, *kinds: OpeningStep) -> None:
        self._kinds = kinds

    def first_step(self, state: SessionState) -> Opening | None:
        return next((found for kind in self._kinds if (found := kind.first_step(state)) is not None), None)

    def last_step(self, state: SessionState) -> str | None:
        return next((found for kind in self._kinds if (found := kind.last_step(state)) is not None), None)
