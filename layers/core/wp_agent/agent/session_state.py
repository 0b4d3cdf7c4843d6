"""Everything a session needs between turns; persisted by a SessionStore after every step."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from wp_agent.agent.audit_events import AuditEvent
from wp_agent.errors import AgentErrorCode
from wp_agent.models.agent_io import AgentInput, AgentOutput
from wp_agent.models.fleet import FleetRole
from wp_agent.models.target import Role, UpdateAllowance
from wp_agent.models.undo import UndoCapture
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.site_scope import SiteScope, network_commands_allowed


class SessionStatus(StrEnum):
    """Seed 003's status enum, as the API shows it."""

    IDLE = "Idle"
    PLANNING = "Planning"
    EXECUTING = "Executing"
    AWAITING_APPROVAL = "AwaitingApproval"
    COMPLETED = "Completed"
    FAILED = "Failed"
    CANCELLED = "Cancelled"

    @property
    def terminal(self) -> bool:
        return self in {SessionStatus.COMPLETED, SessionStatus.FAILED, SessionStatus.CANCELLED}


class CommandStatus(StrEnum):
    QUEUED = "queued"  # allowed and about to run; never started, so safe to run after a retry
    STARTED = "started"  # intent recorded; no result yet (a crash here means "outcome unknown")
    FINISHED = "finished"
    BLOCKED = "blocked"
    HELD = "held"  # destructive; waiting for approval
    REJECTED = "rejected"
    UNKNOWN = "unknown"  # started before a crash/retry; never re-run silently

    @property
    def may_have_run(self) -> bool:
        """Finished, or started without a recorded result (it may have run)."""
        return self in {CommandStatus.FINISHED, CommandStatus.UNKNOWN, CommandStatus.STARTED}


class StateModel(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False, defer_build=True)


class CommandRecord(StateModel):
    """One tool call and what became of it. `command` is masked; `argv` is what runs."""

    tool_use_id: str
    run_id: str = ""
    command: str
    argv: list[str] = Field(default_factory=list)
    reason: str = ""
    category: PolicyCategory
    rule: str
    policy_reason: str
    command_path: list[str] = Field(default_factory=list)
    pattern: str | None = None
    status: CommandStatus
    iteration: int
    started_at: str | None = None
    finished_at: str | None = None
    duration_ms: int = 0
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    truncated: bool = False
    rolled_back: bool = False  # a guarded change taken back because the site got worse
    error_code: AgentErrorCode | None = None
    approval_id: str | None = None
    # Before/after images for `wp-agent undo` (write and destructive commands; masked).
    undo: UndoCapture | None = None

    @property
    def succeeded(self) -> bool:
        return self.status is CommandStatus.FINISHED and self.exit_code == 0 and self.error_code is None


class ApprovalItem(StateModel):
    tool_use_id: str
    command: str  # masked, for people
    summary_ja: str
    impact_ja: str
    rule: str
    model_reason: str = ""


class ApprovalStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    CANCELLED = "cancelled"  # the run ended (cancel, failure) while it waited


class DecisionDelivery(StrEnum):
    """Where a decision is on its way to the run (see agent/approval_protocol.py)."""

    NONE = "none"  # no decision yet, or the approval ended without one
    STORED = "stored"  # saved; not known to have reached the run's wait
    HANDED_OVER = "handed_over"  # the wait took it (or the turn acted on it)
    HANDOVER_FAILED = "handover_failed"  # the wait could not be reached: the decision may be resent


class PendingApproval(StateModel):
    approval_id: str
    run_id: str | None = None  # the run that asked (None: stored before runs were named here)
    requested_by: str
    requested_at: str
    expires_at: str
    items: list[ApprovalItem]
    status: ApprovalStatus = ApprovalStatus.PENDING
    decided_by: str | None = None
    decided_at: str | None = None
    comment: str | None = None
    # Step Functions task token of the approval wait; a capability, never shown in views or logs.
    task_token: str | None = None
    delivery: DecisionDelivery = DecisionDelivery.NONE


class ModelUsage(StateModel):
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class SessionState(StateModel):
    session_id: str
    run_id: str = ""
    user_id: str
    target_id: str
    status: SessionStatus = SessionStatus.IDLE
    input: AgentInput
    messages: list[dict[str, Any]] = Field(default_factory=list)
    commands: list[CommandRecord] = Field(default_factory=list)
    # tool_results for the last assistant message, kept while some of its calls wait for approval
    held_results: list[dict[str, Any]] = Field(default_factory=list)
    pending_approval: PendingApproval | None = None
    approval_history: list[PendingApproval] = Field(default_factory=list)
    execution_arn: str | None = None
    iterations: int = 0
    started_at: str
    elapsed_ms: int = 0
    usage: ModelUsage = Field(default_factory=ModelUsage)
    site_url: str | None = None
    # May run network-level commands when no site is chosen (set from the target's network admins).
    network_admin: bool = False
    # The requester's role on the target (wp_agent/policy/roles.py), refreshed from the registry every
    # turn as network_admin is; None (not a member, or a session stored before roles) refuses everything.
    role: Role | None = None
    # Updates the target's owner allows without a per-change approval (policy/update_allowance.py),
    # refreshed from the registry every turn as the role is.
    update_allowance: UpdateAllowance | None = None
    # Set on an undo run: the run whose changes it reverts (wp_agent/undo/agent_turn.py plans it).
    reverts_run_id: str | None = None
    # An undo run's steps its plan approved itself (tool-use id -> exact argv; see ports.Opening),
    # written with its opening step; read only while the run is an undo run.
    plan_approved_steps: dict[str, list[str]] = Field(default_factory=dict)
    # Set on a fleet run's session (wp_agent/fleet): the canary's planning run (writes become the plan's
    # steps, none runs) or one site's run of the approved plan (models/fleet.py).
    fleet: FleetRole | None = None
    # The run whose first user message carries the site's facts (agent/site_facts.py), once saved: a
    # retried turn sends the same facts and reads nothing again.
    site_facts_run_id: str | None = None
    # The site's time zone as its facts said (`+09:00` when only the offset is known): runs are shown in it.
    site_time_zone: str | None = None
    # Every run the API started in this session, oldest first, with the run it reverts (undo runs).
    runs: dict[str, str | None] = Field(default_factory=dict)
    stop_reason: Literal["repeated_command", "command_cap", "iteration_cap"] | None = None
    result: AgentOutput | None = None
    # Audit records saved with the state they describe and not yet known to be in the audit log;
    # every later checkpoint, turn and failure path delivers them (the log stores each once).
    audit_outbox: list[AuditEvent] = Field(default_factory=list)
    version: int = 0

    def record(self, tool_use_id: str) -> CommandRecord | None:
        return next((c for c in self.commands if c.tool_use_id == tool_use_id), None)

    def intent_id(self, record: CommandRecord) -> str:
        """The id of a command's recorded intent, unique across sessions and runs: its rate-limit count
        is tied to it (wp_agent.agent.ports.RateLimiter.before_command)."""
        return f"{self.session_id}/{record.run_id or self.run_id}/{record.tool_use_id}"

    def find_approval(self, approval_id: str) -> PendingApproval | None:
        if self.pending_approval is not None and self.pending_approval.approval_id == approval_id:
            return self.pending_approval
        return next((a for a in self.approval_history if a.approval_id == approval_id), None)

    @property
    def fleet_planning(self) -> bool:
        return self.fleet is not None and self.fleet.mode == "plan"

    @property
    def fleet_applying(self) -> bool:
        return self.fleet is not None and self.fleet.mode == "apply"

    def site_scope(self) -> SiteScope:
        """Where this run's commands may go and the requester's rights, as the policy reads them."""
        network = network_commands_allowed(self.input.multisite, self.network_admin)
        return SiteScope(self.site_url, network, self.role, self.update_allowance)

    def audit_about(self) -> dict[str, Any]:
        """Whom and which run an audit record about the current run names."""
        return {
            "user_id": self.user_id,
            "session_id": self.session_id,
            "target_id": self.target_id,
            "run_id": self.run_id or None,
        }

    def run_commands(self) -> list[CommandRecord]:
        """Commands of the current run (a session may hold several runs)."""
        return [c for c in self.commands if c.run_id == self.run_id]
