"""Which undo run stands for a run: the latest that completed and was not itself undone (undoing the
undo brings the run's changes back). Shared by the API and `wp-agent undo` (the session's records) and
by `wp-agent history` (the audit file); no imports beyond the standard library, for the CLI's start."""

from __future__ import annotations

from collections.abc import Callable, Mapping


def latest_standing_undo(
    run_id: str, reverts: Mapping[str, str | None], completed: Callable[[str], bool]
) -> str | None:
    """`reverts` maps each run to the run it reverts (None: not an undo); `completed(undo)` says
    whether that undo run put back everything it planned."""
    undos = [undo for undo, reverted in reverts.items() if reverted == run_id]
    for undo in reversed(undos):
        if completed(undo) and not latest_standing_undo(undo, reverts, completed):
            return undo
    return None
