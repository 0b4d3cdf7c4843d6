"""Revert plan: from the before-images a run recorded to the WP-CLI commands that restore them.

Everything the run touched is grouped per thing (a post, an option…): its state before the run's
first command that touched it and after the last. The current state must still equal that
after-image — if anyone changed it since, the thing is skipped and reported, never overwritten.
Things are restored in the reverse order of the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from wp_agent.models.undo import (
    EntityRef,
    PlanTarget,
    SkippedItem,
    UndoCapture,
    UndoItem,
    UndoPlan,
)
from wp_agent.undo import sections
from wp_agent.undo.capture import snapshots
from wp_agent.undo.entities import KINDS, CaptureError, Read, scoped


@dataclass(frozen=True)
class RunCommand:
    """One command of the run to revert: its masked text and what was captured for it."""

    command: str
    capture: UndoCapture | None
    ran: bool = True  # False: blocked, rejected or never started (nothing to revert)


@dataclass
class _Group:
    ref: EntityRef
    before: Any
    after: Any = None
    after_recorded: bool = True
    always: bool = False
    commands: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.always = self.ref.always

    def add(self, item: UndoItem) -> None:
        """A later command's images of the same thing: the run's before-image stays the first one
        (section by section when the commands read different parts of it), the after-image the last."""
        self.always = self.always or item.entity.always
        if not KINDS[self.ref.kind].sectioned:
            self.after = item.after
            return
        self.before = sections.earliest(self.before, item.before)
        self.after = sections.latest(self.after, item.after)
        self.ref = self.ref.model_copy(update={"parts": sections.covering(self.ref.parts, item.entity.parts)})


def _groups(commands: Sequence[RunCommand], plan: UndoPlan) -> list[_Group]:
    groups: list[_Group] = []
    for command in commands:
        capture = command.capture
        if not command.ran:
            continue
        if capture is None:
            plan.skipped.append(
                SkippedItem(entity_ja=f"wp {command.command}", reason_ja="実行前の状態が記録されていません。")
            )
            continue
        if not capture.revertible:
            plan.skipped.append(SkippedItem(entity_ja=f"wp {command.command}", reason_ja=capture.reason_ja))
            if not capture.recreatable:
                continue
        for item in capture.items:
            group = next((g for g in groups if g.ref.same_as(item.entity)), None)
            if group is None:
                group = _Group(item.entity, item.before, item.after)
                groups.append(group)
            else:
                group.add(item)
            group.after_recorded = group.after_recorded and item.after_recorded
            group.commands.append(command.command)
    return groups


def build_plan(run_id: str, commands: Sequence[RunCommand], read: Read, *, workers: int = 1) -> UndoPlan:
    """The commands that put back what the run changed, reading the site's current state first."""
    plan = UndoPlan(run_id=run_id)
    groups = _groups(commands, plan)
    current_states = snapshots([g.ref for g in groups], read, workers=workers) if groups else []
    for group, current in reversed(list(zip(groups, current_states, strict=True))):
        kind = KINDS[group.ref.kind]
        label = kind.label(group.ref.key)
        if not group.after_recorded:
            plan.skipped.append(
                SkippedItem(entity_ja=label, reason_ja="実行後の状態が記録されていないため、元に戻しません。")
            )
            continue
        if current == group.before:
            # As it was (unchanged by the run, or put back by an earlier, partial undo): no step, nothing
            # to approve. A thing the revert itself may write (`always`: `recently_activated` when a
            # plugin is deactivated again, `post_count` recounted when a post is restored) stays a
            # target: read once the steps before it ran, only what they changed is set back (execute.py).
            if group.always:
                plan.targets.append(
                    PlanTarget(entity=group.ref, before=group.before, label_ja=label, planned=current)
                )
            continue
        if current != group.after:
            plan.skipped.append(
                SkippedItem(
                    entity_ja=label,
                    reason_ja="実行後に別の変更が加えられているため、上書きせずにそのままにしました。",
                )
            )
            continue
        try:
            steps = kind.restore(group.ref.key, group.before, current)
        except CaptureError as exc:
            plan.skipped.append(SkippedItem(entity_ja=label, reason_ja=exc.reason_ja))
            continue
        if not steps:
            continue
        target = len(plan.targets)
        plan.targets.append(
            PlanTarget(entity=group.ref, before=group.before, label_ja=label, planned=current)
        )
        plan.steps.extend(
            s.model_copy(update={"argv": scoped(s.argv, group.ref), "target": target}) for s in steps
        )
        if group.ref.kind == "post" and current is None:
            plan.notes_ja.append(
                f"{label} は完全に削除されていたため、記録した内容から新しい投稿として作り直します（IDが変わる場合があります）。"
            )
    return plan
