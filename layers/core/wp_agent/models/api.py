"""Bodies and views of the HTTP API (camelCase JSON); every field validated at the boundary."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Strict, model_validator
from pydantic.json_schema import SkipJsonSchema

from wp_agent.errors import AgentErrorCode
from wp_agent.models import field_rules
from wp_agent.models.agent_io import AgentInput, AgentOutput, ExecutedCommand
from wp_agent.models.article import PublishArticleInput, PublishArticleOutput
from wp_agent.models.base import CamelModel, RequestModel
from wp_agent.models.run_status import CommandDecision, CommandOrigin, CommandOutcome, RunStatus
from wp_agent.models.target import MAX_TAGS, Role, Tag, Target, UpdateAllowance, UserId

# Documented limits (README): request bodies, and how much command output a view carries.
MAX_BODY_BYTES = 1_048_576
VIEW_OUTPUT_LIMIT_CHARS = 65_536


class SessionMessageRequest(AgentInput):
    """POST /v1/sessions/{sessionId}/messages — AgentInput plus the target (required on the first message)."""

    target_id: str | None = Field(default=None, pattern=field_rules.TARGET_ID)


class ApprovalDecisionRequest(RequestModel):
    decision: Literal["approve", "reject"]
    comment: str | None = Field(default=None, max_length=1_000, pattern=field_rules.NO_NUL)


class UndoRequest(RequestModel):
    """POST /v1/sessions/{sessionId}/runs/{runId}/undo — dryRun: only say what can be undone."""

    dry_run: bool = False


class UndoCommandView(CamelModel):
    command: str
    undo_available: bool
    reason: str | None = None  # why not, when it cannot be undone


class UndoPreview(CamelModel):
    """What the run changed and whether each can be undone (the plan itself is built against the
    site's current state when the undo runs: things changed since are skipped and reported)."""

    session_id: str
    run_id: str
    undo_available: bool
    commands: list[UndoCommandView]


class RunAccepted(CamelModel):
    session_id: str
    run_id: str
    status: str
    run_status: RunStatus = RunStatus.RUNNING
    status_url: str
    run_url: str | None = None  # the run's own view (GET …/runs/{runId})
    reverts_run_id: str | None = None  # an undo run: the run it puts back


class ApprovalCommandView(CamelModel):
    command: str
    summary: str
    impact: str


class PendingApprovalView(CamelModel):
    approval_id: str
    requested_by: str
    requested_at: str
    expires_at: str
    commands: list[ApprovalCommandView]


class SessionView(CamelModel):
    session_id: str
    run_id: str
    target_id: str
    status: str
    # The current run's status (models/run_status.py); `status` is the session's (deprecated for runs).
    run_status: RunStatus
    pending_approval: PendingApprovalView | None = None
    result: AgentOutput | None = None
    executed_commands: list[ExecutedCommand] = Field(default_factory=list)
    iterations: int = 0
    started_at: str


class ApprovalDecided(CamelModel):
    session_id: str
    approval_id: str
    decision: Literal["approve", "reject"]
    status: str


class TargetRegistration(Target):
    """POST /v1/targets body (createdBy/createdAt are set by the server)."""


class TargetList(CamelModel):
    targets: list[Target]


# -- members and their roles ----------------------------------------------------------------------


class MemberRoleRequest(RequestModel):
    """PUT /v1/targets/{targetId}/members/{userId} body."""

    role: Annotated[Role, Strict(False)] = Field(
        description="viewer: read-only; editor: content (posts, pages, media, terms, comments, menus); "
        "admin: everything the policy allows (`wp-agent check --role ROLE` shows which commands)"
    )


class MemberView(CamelModel):
    user_id: str
    role: Role
    owner: bool = Field(description="owners are admins; change them with PATCH /v1/targets/{targetId}")


class MemberList(CamelModel):
    target_id: str
    members: list[MemberView] = Field(description="owners first, then members by user id")


class MemberRemoved(CamelModel):
    target_id: str
    user_id: str
    removed: bool = Field(description="false: the user was not a member (a repeat after a lost answer)")
    schedules_disabled: int = Field(ge=0, description="the user's schedules for the target, now disabled")


# -- the target lifecycle -------------------------------------------------------------------------

# An OpenSSH private key in PEM/OpenSSH armour: what `ssh-keygen` writes (the server checks it parses).
_PRIVATE_KEY = r"^-----BEGIN [A-Z ]*PRIVATE KEY-----[\sA-Za-z0-9+/=:,\-]*-----END [A-Z ]*PRIVATE KEY-----\s*$"
# One public key as a known_hosts line has it after the host: "<type> <base64>".
_HOST_KEY = r"^(?:ssh-ed25519|ecdsa-sha2-nistp(?:256|384|521)|ssh-rsa) [A-Za-z0-9+/]+={0,3}$"


class SshKeyRotation(RequestModel):
    """A new SSH key pair for the target: its public key must already be authorised on the server."""

    private_key: str = Field(min_length=100, max_length=16_384, pattern=_PRIVATE_KEY)
    passphrase: str | None = Field(default=None, min_length=1, max_length=1_024, pattern=field_rules.NO_NUL)


class TargetUpdate(RequestModel):
    """PATCH /v1/targets/{targetId}: only the fields given change (at least one)."""

    model_config = RequestModel.model_config | {"json_schema_extra": {"minProperties": 1}}

    wp_user: str | None = Field(default=None, pattern=field_rules.WP_USER)
    # Absent: unchanged (null is not a value for these; wpUser and description may be null: cleared).
    owners: Annotated[list[UserId], Field(min_length=1, max_length=1_000)] | SkipJsonSchema[None] = None
    network_admins: Annotated[list[UserId], Field(max_length=1_000)] | SkipJsonSchema[None] = None
    description: str | None = Field(default=None, max_length=500, pattern=field_rules.NO_NUL)
    # Updates that run without a per-change approval, always guarded (null: none allowed any more).
    update_allowance: UpdateAllowance | None = None
    tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] | SkipJsonSchema[None] = None
    ssh_key: SshKeyRotation | SkipJsonSchema[None] = None
    host_key: (
        Annotated[
            str, Field(max_length=8_192, pattern=_HOST_KEY, description="the server's new pinned host key")
        ]
        | SkipJsonSchema[None]
    ) = None

    @model_validator(mode="after")
    def _something(self) -> TargetUpdate:
        if not self.model_fields_set:
            raise ValueError("give at least one field to change")
        for name in ("owners", "network_admins", "tags", "ssh_key", "host_key"):
            if name in self.model_fields_set and getattr(self, name) is None:
                raise ValueError(f"{name} cannot be null (leave it out to keep it)")
        return self


class TargetChange(CamelModel):
    field: str
    old: str | None = None
    new: str | None = None


class TargetUpdated(CamelModel):
    target: Target
    changes: list[TargetChange] = Field(description="what changed; keys as their SHA256 fingerprints")


class TargetDeleted(CamelModel):
    target_id: str
    deleted_at: str
    schedules_disabled: int = Field(ge=0, description="the target's schedules, now disabled")
    secret_deletion_date: str | None = Field(
        default=None, description="when Secrets Manager deletes the SSH secret (restorable until then)"
    )
    secret_recovery_window_days: int = Field(ge=0)
    message: str


class TargetCheckView(CamelModel):
    name: str = Field(description="stable id, e.g. ssh.host_key")
    label: str = Field(description="what was checked, in Japanese")
    ok: bool
    detail: str = ""
    fix: str = Field(default="", description="what to do when not ok, in Japanese")


class TargetCheckResult(CamelModel):
    target_id: str
    ok: bool
    checked_at: str
    summary: str = Field(description="one Japanese line for a person")
    checks: list[TargetCheckView]


# -- history --------------------------------------------------------------------------------------

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 20


class SessionSummary(CamelModel):
    session_id: str
    target_id: str
    status: str
    run_id: str
    title: str = Field(description="the latest instruction, masked, at most 200 characters")
    started_at: str
    updated_at: str | None = None


class SessionPage(CamelModel):
    sessions: list[SessionSummary]
    next_cursor: str | None = Field(default=None, description="pass as `cursor` for the next page")


class RunErrorView(CamelModel):
    code: AgentErrorCode


class RunCommandView(CamelModel):
    command: str = Field(description="as run, secrets masked")
    decision: CommandDecision = Field(description="the policy's decision")
    reason: str | None = Field(default=None, description="why the agent ran it")
    policy_reason: str | None = None
    rule: str | None = None
    approval_id: str | None = None
    approver: str | None = None
    outcome: CommandOutcome
    success: bool | None = None
    exit_code: int | None = None
    duration_ms: int | None = None
    error: str | None = None
    executed_at: str | None = None
    undo_available: bool | None = Field(default=None, description="writes only: whether undo can revert it")
    origin: CommandOrigin = Field(
        default="model",
        description="who asked for it: the model (what the requester asked for), or the agent itself "
        "(site facts at the run's start, the reads an approval summary needs, undo's before-images)",
    )


class RunView(CamelModel):
    session_id: str
    run_id: str
    target_id: str
    requested_by: str
    status: Literal["running", "awaiting_approval", "completed", "failed", "cancelled", "expired"]
    run_status: RunStatus  # models/run_status.py; `status` is kept (deprecated) until 2027-06-30
    error: RunErrorView | None = None
    instruction: str
    answer: str | None = None
    started_at: str
    ended_at: str | None = None
    reverts_run_id: str | None = None
    commands: list[RunCommandView]


class ActivityRecord(CamelModel):
    """One audit record of a target (masked like every record)."""

    record_id: str
    type: str
    timestamp: str
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
    channel: str | None = None
    origin: Literal["system"] | None = Field(
        default=None, description="system: a read the agent made itself, not one the model asked for"
    )
    time_zone: str | None = Field(
        default=None, description="run records: the site's time zone as the run's site facts said it"
    )
    details: dict[str, str] | None = None


class ActivityPage(CamelModel):
    records: list[ActivityRecord]
    next_cursor: str | None = None


ViolatedRule = Literal[
    "required",
    "type",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "pattern",
    "enum",
    "unknownField",
    "value",
]


class FieldViolation(CamelModel):
    """One broken rule of a refused request: the field as the document names it, the rule (its JSON
    Schema keyword where it has one) with its limit or allowed values, and what to send, in Japanese."""

    field: str
    rule: ViolatedRule
    limit: int | float | None = None
    allowed: list[str] | None = None
    message: str


class ApiErrorBody(CamelModel):
    code: str
    message: str
    fields: list[str] | None = None
    violations: list[FieldViolation] | None = Field(
        default=None, description="VALIDATION_ERROR and the field codes: each rule the request broke"
    )


class ApiErrorResponse(CamelModel):
    error: ApiErrorBody


class ArticlePublishRequest(PublishArticleInput):
    """POST /v1/articles — spec §4.4 PublishArticleInput plus the target to publish on."""

    target_id: str = Field(pattern=field_rules.TARGET_ID)


class ArticleAccepted(CamelModel):
    article_id: str
    status: str
    status_url: str


class ArticleJobView(CamelModel):
    article_id: str
    target_id: str
    status: Literal["Queued", "Running", "Completed", "Failed"]
    created_at: str
    updated_at: str
    result: PublishArticleOutput | None = None
