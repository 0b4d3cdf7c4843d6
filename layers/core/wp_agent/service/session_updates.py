"""Read-change-write of a session that another writer (a turn, the API, the workflow) may be changing
at the same time: the session store's version check refuses a stale save, so the change is applied
again to a fresh load. The audit records a change makes go into the session's outbox and are
delivered after the save that makes them true: a retried change leaves its trail once, a refused
one none, and a record the audit log could not take waits in the session for the next delivery
(agent/ledger.commit, the same save the turn makes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from wp_agent.agent import audit_outbox
from wp_agent.agent.ledger import Moment, commit
from wp_agent.agent.ports import AuditLog, SessionStore
from wp_agent.agent.session_state import SessionState
from wp_agent.errors import StaleSessionError

T = TypeVar("T")

SAVE_ATTEMPTS = 3


def update_session(
    store: SessionStore,
    audit: AuditLog,
    load: Callable[[], SessionState],
    change: Callable[[SessionState], T],
    *,
    unchanged: Callable[[T], bool] = lambda result: result is False,
    attempts: int = SAVE_ATTEMPTS,
) -> tuple[SessionState, T]:
    """Apply `change` and save. A change whose result is `unchanged` (by default: False) changed
    nothing and is not saved (what waits in the outbox is still delivered); one that raises is not
    saved either. StaleSessionError when every attempt lost the race."""
    for attempt in range(attempts):
        state = load()
        result = change(state)
        if unchanged(result):
            audit_outbox.deliver(state, audit)
            return state, result
        try:
            commit(store, audit, state, Moment.UPDATED)
        except StaleSessionError:
            if attempt + 1 < attempts:
                continue
            raise
        return state, result
    raise AssertionError("unreachable")  # pragma: no cover
