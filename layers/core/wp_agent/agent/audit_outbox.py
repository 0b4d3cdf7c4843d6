"""Audit records travel with the session they describe, and this is the one home of "save the session,
then deliver its audit records": each record is put in the session's outbox, saved with the checkpoint
that makes it true, and delivered to the audit log after that save. A record the log could not take
(throttled, unreachable, the process died) stays in the outbox; every later checkpoint, turn and
failure path delivers it again, and the log stores each record once."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.ports import AuditLog, SessionStore
from wp_agent.agent.session_state import CommandRecord, CommandStatus, SessionState
from wp_agent.masking import mask_command_output, mask_text

logger = logging.getLogger(__name__)

# Commands of one response run in threads that add records while a checkpoint delivers others.
_lock = threading.Lock()


def new_event(event_type: AuditEventType, about: Mapping[str, Any], **fields: Any) -> AuditEvent:
    """A record about a run (`about`: SessionState.audit_about()), written as an `audit` log line (spec §10.1); it reaches the
    audit log once it is in the session's outbox and the session is saved."""
    event = AuditEvent(type=event_type, **about, **fields)
    details = event.model_dump(mode="json", exclude_none=True, exclude={"type"})
    logger.info("audit record", extra={"type": "audit", "event": event_type.value, **details})
    return event


def audit(state: SessionState, event_type: AuditEventType, **fields: Any) -> AuditEvent:
    """Put a new record in the session's outbox."""
    event = new_event(event_type, state.audit_about(), **fields)
    put(state, [event])
    return event


def command_fields(
    record: CommandRecord,
    event_type: AuditEventType,
    *,
    approval_id: str | None = None,
    approver: str | None = None,
) -> dict[str, Any]:
    """What an audit record says about a command (masked)."""
    error = None
    if record.error_code is not None:
        error = record.error_code.value
    elif record.status is CommandStatus.FINISHED and record.exit_code not in (0, None):
        error = mask_command_output(record.stderr[:1_000])
    executed = event_type is AuditEventType.COMMAND_EXECUTED
    return {
        "command": record.command,
        "reason": mask_text(record.reason),
        "category": record.category.value,
        "rule": record.rule,
        "policy_reason": record.policy_reason,
        "success": record.succeeded if executed else None,
        "exit_code": record.exit_code,
        "duration_ms": record.duration_ms if executed else None,
        "error": error,
        "approval_id": approval_id or record.approval_id,
        "approver": approver,
    }


def put(state: SessionState, events: Iterable[AuditEvent]) -> None:
    with _lock:
        state.audit_outbox.extend(events)


def save_and_deliver(store: SessionStore, log: AuditLog, state: SessionState) -> bool:
    """The checkpoint: save, then deliver the outbox; False when some audit record still waits in the
    session. StaleSessionError (nothing saved, nothing delivered) when another writer got there first."""
    store.save(state)
    return deliver(state, log)


def deliver(state: SessionState, log: AuditLog) -> bool:
    """Write the outbox to the audit log; what was written leaves the outbox (the next save makes
    that permanent). False when something is still waiting."""
    with _lock:
        waiting = list(state.audit_outbox)
    if not waiting:
        return True
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
