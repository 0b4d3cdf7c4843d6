"""Run a revert plan's commands in order; stop at the first one that fails (nothing is guessed).

After the steps of one thing ran, the thing is read again: WordPress writes side effects of its own
while restoring (untrashing a post records its `__trashed` slug as an old slug, for example), so
what still differs from the before-image is restored once more, then checked a last time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from wp_agent.executors.port import CommandResult
from wp_agent.models.undo import PlanStep, PlanTarget, UndoPlan
from wp_agent.undo.capture import snapshots
from wp_agent.undo.entities import KINDS, CaptureError, Read, scoped
from wp_agent.whole_values import whole

NEW_ID = "{new}"  # in steps after a re-created post: its ID, known once `post create --porcelain` ran
_PORCELAIN_ID = whole(r"\d+", "45")  # the ID --porcelain prints (its line end stripped)
_SETTLE_ROUNDS = 2


@dataclass(frozen=True)
class StepOutcome:
    step: PlanStep
    argv: list[str]
    result: CommandResult | None  # None: not run (an earlier step failed)

    @property
    def ok(self) -> bool:
        return self.result is not None and (self.result.ok or self.step.optional)


@dataclass
class PlanOutcome:
    steps: list[StepOutcome] = field(default_factory=list)
    new_ids: dict[str, str] = field(default_factory=dict)  # re-created post: old ID -> new ID
    unsettled_ja: list[str] = field(default_factory=list)  # restored, but still not as before

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.steps) and not self.unsettled_ja


def execute_plan(
    plan: UndoPlan,
    run: Callable[[list[str]], CommandResult],
    read: Read | None = None,
    *,
    workers: int = 1,
    recheck: bool = False,
) -> PlanOutcome:
    """`recheck`: every thing is read again before the first step (a person may have been asked since
    the plan was made), and one that changed meanwhile is left as it is and reported — its restore
    never overwrites, nor settles onto, someone else's change. (Read before any step: what the undo's
    own steps then change on other things, e.g. `recently_activated`, is theirs to settle.)"""
    outcome = PlanOutcome()
    left = _changed_since_planned(plan.targets, read, workers) if recheck and read is not None else {}
    outcome.unsettled_ja.extend(left.values())
    failed = False
    for index, target in enumerate(plan.targets):
        if index in left:
            continue
        steps = [s for s in plan.steps if s.target == index]
        failed = _run_steps(steps, run, outcome, failed)
        if failed or read is None or any("--porcelain" in s.argv for s in steps):
            continue
        kind = KINDS[target.entity.kind]
        for round_ in range(_SETTLE_ROUNDS + 1):
            try:
                (now,) = snapshots([target.entity], read, workers=workers)
                more = [] if now == target.before else kind.restore(target.entity.key, target.before, now)
            except CaptureError as exc:
                outcome.unsettled_ja.append(f"{target.label_ja}: {exc.reason_ja}")
                break
            if now == target.before:
                break
            if round_ == _SETTLE_ROUNDS or not more:
                outcome.unsettled_ja.append(f"{target.label_ja}は完全には元に戻りませんでした。")
                break
            extra = [
                s.model_copy(update={"argv": scoped(s.argv, target.entity), "target": index}) for s in more
            ]
            failed = _run_steps(extra, run, outcome, failed)
            if failed:
                break
    return outcome


def _changed_since_planned(targets: list[PlanTarget], read: Read, workers: int) -> dict[int, str]:
    """The things to leave as they are (changed since the plan), by index, with why; all of them when
    the site cannot be read now."""
    try:
        now = snapshots([t.entity for t in targets], read, workers=workers)
    except CaptureError as exc:
        return {index: f"{t.label_ja}: {exc.reason_ja}" for index, t in enumerate(targets)}
    return {
        index: f"{t.label_ja}は計画の後に別の変更が加えられたため、上書きせずにそのままにしました。"
        for index, (t, state) in enumerate(zip(targets, now, strict=True))
        if state != t.planned
    }


def _run_steps(
    steps: list[PlanStep], run: Callable[[list[str]], CommandResult], outcome: PlanOutcome, failed: bool
) -> bool:
    new_id: str | None = None
    for step in steps:
        argv = [a.replace(NEW_ID, new_id) if new_id else a for a in step.argv]
        if failed or NEW_ID in " ".join(argv):
            outcome.steps.append(StepOutcome(step, argv, None))
            failed = True
            continue
        result = run(argv)
        outcome.steps.append(StepOutcome(step, argv, result))
        if not result.ok and not step.optional:
            failed = True
            continue
        printed = result.stdout.strip()
        if "--porcelain" in argv and _PORCELAIN_ID.fits(printed):
            new_id = printed
            old = next((a.split("=", 1)[1] for a in argv if a.startswith("--import_id=")), "")
            outcome.new_ids[old] = new_id
    return failed
