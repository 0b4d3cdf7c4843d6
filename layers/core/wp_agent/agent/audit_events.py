"""Audit records: what they say, and the id that makes writing one twice harmless."""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from wp_agent import clock


class AuditEventType(StrEnum):
    COMMAND_EXECUTED = "command_executed"
    COMMAND_BLOCKED = "command_blocked"
    COMMAND_OUTCOME_UNKNOWN = "command_outcome_unknown"
    APPROVAL_REQUESTED = "approval_requested"
    APPROVAL_APPROVED = "approval_approved"
    APPROVAL_REJECTED = "approval_rejected"
    APPROVAL_EXPIRED = "approval_expired"
    # Approved, but the site changed before it ran: the approved text no longer said what would
    # happen, so nothing ran and the person was asked again (a new approval).
    APPROVAL_SUPERSEDED = "approval_superseded"
    # A run begins: its instruction (masked), so a run that never ends (a process that died) still
    # says what it was asked.
    RUN_STARTED = "run_started"
    RUN_CANCELLED = "run_cancelled"
    # The run may not go on and had no command waiting (e.g. the requester is no longer an owner).
    RUN_REFUSED = "run_refused"
    # Written by the CLI when a run stops (ended, held or interrupted): the instruction and the
    # answer (both masked), for `wp-agent history` / `show`.
    RUN_SUMMARY = "run_summary"
    # An undo (`wp-agent undo`, POST …/runs/{runId}/undo) is a run of its own, linked by reverts_run_id.
    RUN_REVERT_STARTED = "run_revert_started"
    RUN_REVERT_FINISHED = "run_revert_finished"
    # The target lifecycle over the API (service/targets.py): who changed, removed or checked a target.
    TARGET_REGISTERED = "target_registered"
    TARGET_UPDATED = "target_updated"
    TARGET_DELETED = "target_deleted"
    TARGET_CHECKED = "target_checked"
    # A fleet run's result on one site (status: the fleet report's; details: the fleet run's id), in the
    # site's own trail beside the records of its run.
    FLEET_SITE_RESULT = "fleet_site_result"


class AuditEvent(BaseModel):
    """One append-only audit record; `command` is always masked. `record_id` is derived from the
    content (time included), so a retried write of the same record is recognised as the same."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: AuditEventType
    timestamp: str = Field(default_factory=clock.now_iso)
    record_id: str = ""
    user_id: str
    session_id: str
    target_id: str
    run_id: str | None = None
    command: str | None = None
    reason: str | None = None
    category: str | None = None
    rule: str | None = None
    policy_reason: str | None = None
    success: bool | None = None
    exit_code: int | None = None
    duration_ms: int | None = None
    error: str | None = None
    approval_id: str | None = None
    approver: str | None = None
    comment: str | None = None
    instruction: str | None = None
    answer: str | None = None
    status: str | None = None
    reverts_run_id: str | None = None
    channel: str | None = None  # the front door that drove the record, e.g. "mcp:claude-code"
    origin: str | None = None  # "system": a read the agent made itself (agent/command_outcomes.py)
    time_zone: str | None = None  # run records: the site's time zone (its runs are shown in it)
    details: dict[str, str] | None = None  # target records: what changed (keys as fingerprints only)

    @model_validator(mode="before")
    @classmethod
    def _derive_record_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("record_id"):
            content = {k: v for k, v in data.items() if v is not None}
            content.setdefault("timestamp", clock.now_iso())
            canonical = repr(sorted((k, str(v)) for k, v in content.items()))
            content["record_id"] = hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:32]
            return content
        return data

    @property
    def long_retention(self) -> bool:
        """Destructive commands, approval and target records are kept 1 year, the rest 90 days (spec §10.1)."""
        return self.type.value.startswith(("approval_", "target_")) or self.category == "destructive"
