"""Audit records travel with the session they describe: each is put in the session's outbox, saved
with the checkpoint that makes it true, and delivered to the audit log after that save. A record
the log could not take (throttled, unreachable, the process died) stays in the outbox; every later
checkpoint, turn and failure path delivers it again, and the log stores each record once."""

from __future__ import annotations

import logging
import threading
from typing import Any

from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.ports import AuditLog
from wp_agent.agent.session_state import SessionState

logger = logging.getLogger(__name__)

# Commands of one response run in threads that add records while a checkpoint delivers others.
_lock = threading.Lock()


def audit(state: SessionState, event_type: AuditEventType, **fields: Any) -> AuditEvent:
    """Put a record in the session's outbox and write it as an `audit` log line (spec §10.1)."""
    event = AuditEvent(
        type=event_type,
        user_id=state.user_id,
        session_id=state.session_id,
        target_id=state.target_id,
        run_id=state.run_id or None,
        **fields,
    )
    with _lock:
        state.audit_outbox.append(event)
    details = event.model_dump(mode="json", exclude_none=True, exclude={"type"})
    logger.info("audit record", extra={"type": "audit", "event": event_type.value, **details})
    return event


def deliver(state: SessionState, log: AuditLog) -> bool:
    """Write the outbox to the audit log; what was written leaves the outbox (the next save makes
    that permanent). False when something is still waiting."""
    with _lock:
        waiting = list(state.audit_outbox)
    written: set[str] = set()
    try:
        for event in waiting:
            log.append(event)
            written.add(event.record_id)
    except Exception:
        logger.warning(
            "audit records kept in the session's outbox for a later delivery",
            exc_info=True,
            extra={"session_id": state.session_id, "waiting": len(waiting) - len(written)},
        )
    with _lock:
        state.audit_outbox = [e for e in state.audit_outbox if e.record_id not in written]
        return not state.audit_outbox
