"""Read-change-write of a session that another writer (a turn, the API, the workflow) may be changing
at the same time: the session store's version check refuses a stale save, so the change is applied
again to a fresh load. Its audit events are written only once its save succeeded: a retried change
must not leave its trail twice, and a refused one none."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from wp_agent.adapters.aws.session_store import DynamoSessionStore, StaleSessionError
from wp_agent.agent.ports import AuditLog, MemoryAuditLog
from wp_agent.agent.session_state import SessionState

T = TypeVar("T")

SAVE_ATTEMPTS = 3


def update_session(
    store: DynamoSessionStore,
    audit: AuditLog,
    load: Callable[[], SessionState],
    change: Callable[[SessionState, AuditLog], T],
    *,
    unchanged: Callable[[T], bool] = lambda result: result is False,
    attempts: int = SAVE_ATTEMPTS,
) -> tuple[SessionState, T]:
    """Apply `change` and save. A change whose result is `unchanged` (by default: False) changed
    nothing and is not saved; one that raises is not saved either. StaleSessionError when every
    attempt lost the race."""
    for attempt in range(attempts):
        state = load()
        trail = MemoryAuditLog()
        result = change(state, trail)
        if unchanged(result):
            return state, result
        try:
            store.save(state)
        except StaleSessionError:
            if attempt + 1 < attempts:
                continue
            raise
        for event in trail.events:
            audit.append(event)
        return state, result
    raise AssertionError("unreachable")  # pragma: no cover
