"""What the undo package stores with a command record and what a revert plan is made of."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class EntityRef(_Model):
    """One thing a command changes: a post, an option, a menu's items… on one site (`url`)."""

    kind: str
    key: list[str]
    url: str | None = None
    # Set back to its before-image even when it looks unchanged (written as a side effect of the
    # revert itself, e.g. `recently_activated` when a plugin is deactivated again).
    always: bool = False
    # The sections of it the command changes and reads (a post's "fields", "terms", "meta:<key>"…;
    # see undo/sections.py); None: all of it.
    parts: list[str] | None = None

    def same_as(self, other: EntityRef) -> bool:
        return (self.kind, self.key, self.url) == (other.kind, other.key, other.url)


class UndoItem(_Model):
    entity: EntityRef
    # The entity's state: None when it did not exist. `after` is None too until recorded.
    before: Any = None
    after: Any = None
    after_recorded: bool = False


class UndoCapture(_Model):
    """Before- and after-images of what one command changes, stored masked with its record."""

    revertible: bool
    reason_ja: str = ""  # why not, when not revertible
    # Not revertible, but what it deleted for good can be created again from the before-image
    # (with a new ID when WordPress cannot keep the old one): `post delete --force`, or of a trashed post.
    recreatable: bool = False
    items: list[UndoItem] = Field(default_factory=list)
    capture_ms: int = 0


class PlanStep(_Model):
    """One WP-CLI command of a revert plan, with what it restores (Japanese, for people)."""

    argv: list[str]
    restores_ja: str
    # May fail without stopping the plan (e.g. deleting an option that is already gone).
    optional: bool = False
    # Deletes what the reverted run itself added (a meta key absent before it, holding only what the
    # run left when planned and when the step runs): the plan approves it, nobody else is asked.
    takes_back_addition: bool = False
    target: int = -1  # index into UndoPlan.targets: what this step restores


class PlanTarget(_Model):
    """A thing the plan restores, with the state it is restored to (checked after its steps ran)."""

    entity: EntityRef
    before: Any = None
    label_ja: str
    # Its state when the plan was made: an execution after a wait for approval finds it still so
    # before it writes anything to it (else the thing is left as someone else made it).
    planned: Any = None


class SkippedItem(_Model):
    entity_ja: str
    reason_ja: str


class UndoPlan(_Model):
    run_id: str
    targets: list[PlanTarget] = Field(default_factory=list)
    steps: list[PlanStep] = Field(default_factory=list)
    skipped: list[SkippedItem] = Field(default_factory=list)
    notes_ja: list[str] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.steps
