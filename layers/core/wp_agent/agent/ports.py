"""Small ports between the agent and the outside; each has a real adapter and a local default."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from wp_agent.agent.audit_events import AuditEvent
from wp_agent.agent.model_client import ModelClient
from wp_agent.agent.session_state import CommandRecord, PendingApproval, SessionState
from wp_agent.agent.site_facts_cache import SiteFactsCache
from wp_agent.clock import now as utc_now
from wp_agent.config import AgentSettings
from wp_agent.executors.port import WpCli
from wp_agent.models.undo import UndoCapture
from wp_agent.policy import CommandPolicy, PolicyDecision
from wp_agent.policy.site_scope import SiteScope
from wp_agent.telemetry import NoTelemetry, Telemetry


class AuditLog(Protocol):
    """Appends audit events; never updates or deletes them. Appending the same record (same
    `record_id`) again is harmless: it is stored once."""

    def append(self, event: AuditEvent) -> None: ...


class RateLimiter(Protocol):
    """Shared limits (spec §3.2): model calls per minute, commands per user per minute, SSH slots per target."""

    def before_model_call(self) -> None:
        """Blocks (bounded) until a model call is allowed."""

    def before_command(self, user_id: str, intent_id: str) -> None:
        """Counts the command whose recorded intent is `intent_id` against the user's quota, once: taking
        it again for the same intent finds it counted and passes. WpAgentError when the quota is used up."""

    def command_slot(self, target_id: str) -> contextlib.AbstractContextManager[None]:
        """Holds one of the target's concurrent SSH slots while a command runs."""


class SessionStore(Protocol):
    """Loads and saves session state; `save` sets the state's `version` to the one it saved and raises
    wp_agent.errors.StaleSessionError on a stale version (one writer at a time). Save through
    audit_outbox.save_and_deliver: the audit records a state holds are delivered after it is saved."""

    def load(self, session_id: str) -> SessionState | None: ...

    def save(self, state: SessionState) -> None: ...


@dataclass(frozen=True)
class ApprovalDecision:
    approved: bool
    decided_by: str
    comment: str | None = None
    # Approving some of the held commands: the tool_use ids of the ones declined (never run).
    declined: frozenset[str] = frozenset()


class Approvals(Protocol):
    """Asks the requester about a pending approval; None means nobody can answer now."""

    def decide(self, pending: PendingApproval, state: SessionState) -> ApprovalDecision | None: ...


class ChangeRecorder(Protocol):
    """What write commands change, kept for undo (wp_agent.undo implements it): the before-images of a
    batch of commands just before it runs and their after-images right after, by tool_use id (the
    turn keeps them on the records), read on the session's site (`scope`, `target_id`'s SSH slots);
    and why a command's change could not be undone, if so."""

    def before(
        self, records: Sequence[CommandRecord], scope: SiteScope, target_id: str
    ) -> dict[str, UndoCapture]: ...

    def after(
        self, records: Sequence[CommandRecord], scope: SiteScope, target_id: str
    ) -> dict[str, UndoCapture]: ...

    def cannot_undo(self, decision: PolicyDecision) -> str | None: ...


@dataclass(frozen=True)
class Opening:
    """The first step of a run that is planned rather than asked of the model (an undo run's revert
    plan): the assistant message that starts it, and the audit records its planning made."""

    content: list[dict[str, Any]]
    audit: list[AuditEvent] = field(default_factory=list)
    # Tool-use id -> the exact argv of each step the plan approves itself (an undo's deletion of a
    # value the reverted run added); every other step goes through the policy and approvals as usual.
    approved_by_plan: dict[str, list[str]] = field(default_factory=dict)


class OpeningStep(Protocol):
    """Plans a run's first step when the run is not the model's to begin (wp_agent.undo: an undo run),
    and then its answer once that step ran (the model is not asked to end it either)."""

    def first_step(self, state: SessionState) -> Opening | None: ...

    def last_step(self, state: SessionState) -> str | None: ...


# -- local defaults ---------------------------------------------------------------------------------


class NoChangeRecorder:
    """Keeps nothing: commands run without before-images (nothing to undo)."""

    def before(
        self, records: Sequence[CommandRecord], scope: SiteScope, target_id: str
    ) -> dict[str, UndoCapture]:
        return {}

    def after(
        self, records: Sequence[CommandRecord], scope: SiteScope, target_id: str
    ) -> dict[str, UndoCapture]:
        return {}

    def cannot_undo(self, decision: PolicyDecision) -> str | None:
        return None


class NoOpeningStep:
    def first_step(self, state: SessionState) -> Opening | None:
        return None

    def last_step(self, state: SessionState) -> str | None:
        return None


class NoRateLimits:
    """Local/CLI use: no shared limits (the single process is its own limit)."""

    def before_model_call(self) -> None:
        return None

    def before_command(self, user_id: str, intent_id: str) -> None:
        return None

    @contextlib.contextmanager
    def command_slot(self, target_id: str) -> Iterator[None]:
        yield


class InMemorySessionStore:
    def __init__(self) -> None:
        self._states: dict[str, str] = {}
        self._lock = threading.Lock()

    def load(self, session_id: str) -> SessionState | None:
        with self._lock:
            raw = self._states.get(session_id)
        return SessionState.model_validate_json(raw) if raw else None

    def save(self, state: SessionState) -> None:
        with self._lock:
            state.version += 1
            self._states[state.session_id] = state.model_dump_json()


class NoApprovals:
    """Nobody can answer (non-interactive, no --yes): destructive commands stay unrun."""

    def decide(self, pending: PendingApproval, state: SessionState) -> ApprovalDecision | None:
        return None


class AutoApprove:
    """`--yes` or an explicitly enabled skipDestructiveConfirmation: approve as the given actor."""

    def __init__(self, actor: str) -> None:
        self._actor = actor

    def decide(self, pending: PendingApproval, state: SessionState) -> ApprovalDecision | None:
        return ApprovalDecision(approved=True, decided_by=self._actor, comment="auto-approved")


class MemoryAuditLog:
    def __init__(self) -> None:
        self.events: list[AuditEvent] = []
        self._lock = threading.Lock()

    def append(self, event: AuditEvent) -> None:
        with self._lock:
            if all(e.record_id != event.record_id for e in self.events):
                self.events.append(event)


# -- what a turn is given -------------------------------------------------------------------------


@dataclass(frozen=True)
class ProgressEvent:
    kind: str  # model_call | command_started | command_finished | command_blocked | approval_needed
    message_ja: str
    command: str | None = None


ProgressListener = Callable[[ProgressEvent], None]


@dataclass
class AgentDeps:
    model: ModelClient
    wp_cli: WpCli
    policy: CommandPolicy
    audit: AuditLog
    limiter: RateLimiter
    store: SessionStore
    settings: AgentSettings
    progress: ProgressListener | None = None
    telemetry: Telemetry = field(default_factory=NoTelemetry)
    changes: ChangeRecorder = field(default_factory=NoChangeRecorder)  # before/after images for undo
    opening: OpeningStep = field(default_factory=NoOpeningStep)  # a planned first step (undo runs)
    # The site's facts for a run's first model request, kept per target for a few minutes (None: no
    # facts — the MCP server's runs, whose plan is the client's)
    site_facts: SiteFactsCache | None = field(default_factory=SiteFactsCache)
    wp_user: str | None = None  # the WordPress user WP-CLI runs as (--user), named in the facts
    clock: Callable[[], datetime] = field(default=utc_now)  # the facts' date and time
