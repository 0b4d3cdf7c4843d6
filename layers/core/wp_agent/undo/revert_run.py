"""An undo is a run of its own: it gets a run ID, its plan goes through the policy (a blocked step
stops the whole plan before anything runs) and, when a step is destructive, the requester's
approval; every command it runs is audited with the run it reverts (`revertsRunId`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Literal

from wp_agent.agent import audit_outbox
from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.ports import RateLimiter
from wp_agent.agent.session_state import ApprovalItem, CommandRecord, SessionState
from wp_agent.agent.site_commands import decided_after_reads
from wp_agent.agent.tool_pipeline import PLAN_APPROVER, plan_may_approve
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.port import CommandResult, WpCli
from wp_agent.masking import mask_command, mask_command_output
from wp_agent.models.undo import PlanStep, SkippedItem, UndoPlan
from wp_agent.policy import CommandPolicy, PolicyCategory, PolicyDecision
from wp_agent.policy.approval_summary import worded
from wp_agent.policy.command_policy import RULE_FAILED
from wp_agent.policy.decide import decide
from wp_agent.policy.meta_spelling import kept_names, key_names_read, other_spellings
from wp_agent.policy.site_reads import StateReader
from wp_agent.policy.site_scope import apply_site_scope
from wp_agent.undo.entities import CaptureError, Read
from wp_agent.undo.execute import PlanOutcome, execute_plan
from wp_agent.undo.plan import RunCommand, build_plan
from wp_agent.undo.recorder import site_reader
from wp_agent.undo.standing import latest_standing_undo


def run_commands(records: Sequence[CommandRecord]) -> list[RunCommand]:
    return [
        RunCommand(command=r.command, capture=r.undo, ran=r.status.may_have_run)
        for r in records
        if r.category.value != "read"
    ]


def undo_available(records: Sequence[CommandRecord]) -> bool:
    return any(c.ran and c.capture is not None and c.capture.revertible for c in run_commands(records))


Restorable = Literal["all", "partly", "none"]


def restorable(records: Sequence[CommandRecord]) -> tuple[Restorable, list[tuple[str, str]]]:
    """How much of what the run changed an undo puts back: all of it as it was, partly (some change
    cannot be reverted, or only re-created: a post deleted for good), or none; with each change that
    will not be as it was (its command, why). The one answer the hint after `ask` and `undo` give."""
    changes = [c for c in run_commands(records) if c.ran]
    short = [
        (c.command, c.capture.reason_ja if c.capture is not None else "実行前の状態が記録されていません。")
        for c in changes
        if c.capture is None or not c.capture.revertible
    ]
    if not _can_put_back(records):
        return "none", short
    return ("partly" if short else "all"), short


def _can_put_back(records: Sequence[CommandRecord]) -> bool:
    """Some change of the run can be put back: reverted, or (deleted for good) created again."""
    return any(
        c.ran and c.capture is not None and (c.capture.revertible or c.capture.recreatable)
        for c in run_commands(records)
    )


@dataclass(frozen=True)
class NothingToUndo:
    """Why undoing a run would change nothing: it changed nothing that can be put back, or an
    earlier undo (`undone_by`) already put back everything it planned."""

    reason: Literal["no_changes", "already_undone"]
    undone_by: str | None = None

    @property
    def message_ja(self) -> str:
        if self.reason == "already_undone":
            return (
                f"この実行はすでに取り消しました（取り消しの実行ID: {self.undone_by}）。"
                "もう一度元に戻す操作は行いません。"
            )
        return "この実行には元に戻せる変更がありません。"


def nothing_to_undo(records: Sequence[CommandRecord], *, undone_by: str | None) -> NothingToUndo | None:
    """The one decision whether an undo of a run is worth starting (API and CLI alike). `records`
    are the run's commands; `undone_by` the earlier undo run that put back everything it planned
    and was not undone itself (see `standing_undo`), or None."""
    if not _can_put_back(records):
        return NothingToUndo("no_changes")
    if undone_by is not None:
        return NothingToUndo("already_undone", undone_by)
    return None


def undo_completed(undo_records: Sequence[CommandRecord]) -> bool:
    """An undo run's command records: it changed something, and every change it made succeeded
    (none blocked, declined, failed or of unknown outcome)."""
    changes = [r for r in undo_records if r.category is not PolicyCategory.READ]
    return bool(changes) and all(r.succeeded for r in changes)


def standing_undo(
    run_id: str, reverts: Mapping[str, str | None], records: Sequence[CommandRecord]
) -> str | None:
    """The latest undo run of `run_id` that completed and was not itself undone (undoing the undo
    brings the run's changes back). `reverts` maps each run of the session to the run it reverts."""
    return latest_standing_undo(
        run_id, reverts, lambda undo: undo_completed([r for r in records if r.run_id == undo])
    )


@dataclass
class CheckedPlan:
    plan: UndoPlan
    decisions: list[PolicyDecision] = field(default_factory=list)
    approval_items: list[ApprovalItem] = field(default_factory=list)

    @property
    def needs_approval(self) -> bool:
        return bool(self.approval_items)


def _without_targets_of(checked: CheckedPlan, why: Mapping[int, str]) -> CheckedPlan:
    """The plan without the things it cannot restore without deleting more (`why` by target), each
    reported instead; steps and their decisions renumbered to the targets that stay."""
    plan = checked.plan
    kept = [i for i in range(len(plan.targets)) if i not in why]
    renumbered = {old: new for new, old in enumerate(kept)}
    pairs = [(s, d) for s, d in zip(plan.steps, checked.decisions, strict=True) if s.target in renumbered]
    smaller = plan.model_copy(
        update={
            "targets": [plan.targets[i] for i in kept],
            "steps": [s.model_copy(update={"target": renumbered[s.target]}) for s, _ in pairs],
            "skipped": [
                *plan.skipped,
                *(SkippedItem(entity_ja=plan.targets[i].label_ja, reason_ja=why[i]) for i in sorted(why)),
            ],
        }
    )
    return CheckedPlan(smaller, [d for _, d in pairs])


def approved_by_plan(step: PlanStep, decision: PolicyDecision) -> bool:
    """A step the policy would hold runs without the person's approval only when it takes back a
    value the run itself added, and the policy read the command as exactly the step (one reading)."""
    return step.takes_back_addition and list(decision.argv) == step.argv and plan_may_approve(step.argv)


@dataclass
class RevertRun:
    """Plans and runs the undo of one run. `state` is the undo run's own state (its run ID, the
    original session, user and site scope), read only; the audit records it makes are kept in `events`
    for the caller to put in the session's outbox (or deliver)."""

    policy: CommandPolicy
    wp_cli: WpCli
    limiter: RateLimiter
    state: SessionState
    reverts_run_id: str
    events: list[AuditEvent] = field(default_factory=list)
    plan_approved: list[list[str]] = field(default_factory=list)  # argv of steps the plan approves itself

    def plan(self, records: Sequence[CommandRecord]) -> CheckedPlan:
        plan = build_plan(
            self.reverts_run_id, run_commands(records), self._reader(), workers=self.wp_cli.max_concurrency
        )
        checked = CheckedPlan(plan)
        for step in plan.steps:
            decision = apply_site_scope(self.policy.classify_argv(step.argv), self.state.site_scope())
            if decision.blocked:
                raise WpAgentError(
                    AgentErrorCode.COMMAND_BLOCKED,
                    f"元に戻すコマンドがポリシーでブロックされたため、何も実行していません: {decision.reason_ja}",
                    details={"command": mask_command(" ".join(step.argv)), "rule": decision.rule},
                )
            checked.decisions.append(decision)
        # Every deletion of one meta key (approved by the plan or by the person) deletes only that key.
        deletions = [s for s in plan.steps if plan_may_approve(s.argv)]
        alone, shared = self._alone_in_their_key(deletions) if deletions else (set(), {})
        if shared:
            checked = _without_targets_of(checked, shared)
            plan = checked.plan
        # What stays is decided as the agent's own commands are (policy/decide.py): the table, the role
        # and the site scope, and the checks that read the site as it is now (the post a step writes
        # may have become another type since the run). After the filter above: a deletion it already
        # leaves alone, with its reason, is not refused again by the meta-spelling check.
        answer, scope = self._answers(), self.state.site_scope()
        for index, step in enumerate(plan.steps):
            decision = decided_after_reads(
                partial(decide, self.policy, step.argv, scope), lambda reads: [answer(list(r)) for r in reads]
            ).decision
            if decision.blocked:
                raise WpAgentError(
                    AgentErrorCode.COMMAND_BLOCKED,
                    f"元に戻すコマンドがポリシーでブロックされたため、何も実行していません: {decision.reason_ja}",
                    details={"command": mask_command(" ".join(step.argv)), "rule": decision.rule},
                )
            checked.decisions[index] = decision
        for index, (step, decision) in enumerate(zip(plan.steps, checked.decisions, strict=True)):
            if decision.needs_approval and approved_by_plan(step, decision) and tuple(step.argv) in alone:
                self.plan_approved.append(list(decision.argv))
            elif decision.needs_approval:
                summary, impact = self._described(step, decision)
                checked.approval_items.append(
                    ApprovalItem(
                        tool_use_id=f"undo-{index}", command=mask_command(" ".join(decision.argv)),
                        summary_ja=f"元に戻す: {step.restores_ja}（{summary}）", impact_ja=impact,
                        rule=decision.rule, model_reason="",
                    )
                )  # fmt: skip
        return checked

    @staticmethod
    def _described(step: PlanStep, decision: PolicyDecision) -> tuple[str, str]:
        """A step's approval text; one that cannot be worded (a fault, logged) refuses the whole undo, as
        a blocked step does: nothing is asked about a text not computed from the command."""
        described = worded(decision)
        if described is None:
            raise WpAgentError(
                AgentErrorCode.COMMAND_BLOCKED,
                "元に戻すコマンドの承認内容（何が起きるか）を作れなかったため、何も実行していません"
                "（不具合として記録しました）",
                details={"command": mask_command(" ".join(step.argv)), "rule": RULE_FAILED},
            )
        return described

    def _alone_in_their_key(self, steps: list[PlanStep]) -> tuple[set[tuple[str, ...]], dict[int, str]]:
        """The meta deletions whose key no other key of the same object equals as the database compares
        names (case, width, accents), each object's keys read once; and, by target, why a deletion
        cannot be made: deleting `Color` deletes a `color` that was there before the run too. A step
        whose object cannot be read is in neither (it waits for the person)."""
        by_object: dict[tuple[str, ...], list[PlanStep]] = {}
        for step in steps:
            obj, _meta, _delete, object_id, _key, *scope = step.argv
            by_object.setdefault((obj, object_id, *scope), []).append(step)
        read, alone, shared = self._reader(), set(), {}
        for (obj, object_id, *scope), group in by_object.items():
            try:
                listed = read(key_names_read(obj, object_id, scope))
            except CaptureError:
                continue
            keys = kept_names(listed.stdout if listed.ok else None)
            if keys is None:
                continue
            for step in group:
                key = step.argv[4]
                same = other_spellings(key, keys)
                if not same:
                    alone.add(tuple(step.argv))
                    continue
                shared[step.target] = (
                    f"メタ「{key}」を削除すると、データベースが同じ名前とみなす「{same[0]}」"
                    "（実行前からあるもの）も消えるため、元に戻しません。"
                )
        return alone, shared

    def execute(self, checked: CheckedPlan, *, approved_by: str | None) -> PlanOutcome:
        if checked.needs_approval and approved_by is None:
            raise WpAgentError(
                AgentErrorCode.CONFIRMATION_REQUIRED,
                "元に戻す操作には確認が必要です。",
                details={"reason": "undo"},
            )
        self.audit_start(approved_by=approved_by)
        outcome = execute_plan(
            checked.plan, self._run, self._reader(), workers=self.wp_cli.max_concurrency, recheck=True
        )  # fmt: skip
        self._audit(
            AuditEventType.RUN_REVERT_FINISHED,
            success=outcome.ok,
            error="; ".join(outcome.unsettled_ja)[:1_000] or None,
        )
        return outcome

    def audit_start(self, *, approved_by: str | None) -> None:
        """The undo run begins: linked to the run it reverts."""
        self._audit(AuditEventType.RUN_REVERT_STARTED, approver=approved_by)

    def _run(self, argv: list[str]) -> CommandResult:
        decision = apply_site_scope(self.policy.classify_argv(argv), self.state.site_scope())
        command = mask_command(" ".join(decision.argv))
        if decision.blocked:  # checked when planned; a re-created post's new ID is checked here
            self._audit(AuditEventType.COMMAND_BLOCKED, command=command, rule=decision.rule,
                        policy_reason=decision.reason_ja)  # fmt: skip
            return CommandResult("", decision.reason_ja, 1, 0)
        if decision.needs_approval and list(decision.argv) in self.plan_approved:
            self._audit(AuditEventType.APPROVAL_APPROVED, command=command, category=decision.category.value,
                        rule=decision.rule, approver=PLAN_APPROVER)  # fmt: skip
        try:
            with self.limiter.command_slot(self.state.target_id):
                result = self.wp_cli.run(list(decision.argv))
        except WpAgentError as exc:
            self._audit(AuditEventType.COMMAND_EXECUTED, command=command, category=decision.category.value,
                        rule=decision.rule, success=False, error=exc.code.value)  # fmt: skip
            return CommandResult("", exc.message_ja, 1, 0)
        error = mask_command_output(result.stderr[:1_000]) if not result.ok else None
        self._audit(AuditEventType.COMMAND_EXECUTED, command=command, category=decision.category.value,
                    rule=decision.rule, success=result.ok, exit_code=result.exit_code,
                    duration_ms=result.duration_ms, error=error)  # fmt: skip
        return result

    def _answers(self) -> StateReader:
        """The undo run's audited reads as the policy's checks ask them: stdout, None when not read."""
        read = self._reader()

        def answer(argv: list[str]) -> str | None:
            try:
                result = read(argv)
            except CaptureError:
                return None
            return result.stdout if result.ok else None

        return answer

    def _reader(self) -> Read:
        """Policy-checked reads on the undo run's scope, each audited."""
        return site_reader(
            self.state.site_scope(), self.state.target_id, self.policy, self.wp_cli, self.limiter,
            on_read=lambda fields: self.events.append(
                audit_outbox.new_event(AuditEventType.COMMAND_EXECUTED, self.state.audit_about(), **fields)
            ),
        )  # fmt: skip

    def _audit(self, event_type: AuditEventType, **fields: object) -> None:
        self.events.append(audit_outbox.new_event(
            event_type, self.state.audit_about(), reason=f"{self.reverts_run_id} を元に戻す", reverts_run_id=self.reverts_run_id,
            **fields,
        ))  # fmt: skip
