"""The undo package as the agent sees it, wired in by the CLI and the Lambda runtime, so the agent never
imports undo (the package sits above the agent): a ChangeRecorder (agent/ports.py: before/after images,
and why a command cannot be undone) and an OpeningStep (an undo run's first step is its revert plan)."""

from __future__ import annotations

from collections.abc import Sequence

from wp_agent.agent.ports import Opening, RateLimiter
from wp_agent.agent.session_state import CommandRecord, SessionState
from wp_agent.executors.port import WpCli
from wp_agent.models.undo import UndoCapture
from wp_agent.policy import CommandPolicy, PolicyDecision
from wp_agent.policy.site_scope import SiteScope
from wp_agent.undo import recorder
from wp_agent.undo.agent_turn import closing_text, plan_message
from wp_agent.undo.capture import cannot_undo
from wp_agent.undo.entities import Read


class UndoRecorder:
    """Before/after images through policy-checked, site-scoped reads on the agent's own executor."""

    def __init__(self, policy: CommandPolicy, wp_cli: WpCli, limiter: RateLimiter) -> None:
        self.policy = policy
        self.wp_cli = wp_cli
        self.limiter = limiter

    def _read(self, scope: SiteScope, target_id: str) -> Read:
        return recorder.site_reader(scope, target_id, self.policy, self.wp_cli, self.limiter)

    def before(
        self, records: Sequence[CommandRecord], scope: SiteScope, target_id: str
    ) -> dict[str, UndoCapture]:
        read = self._read(scope, target_id)
        return recorder.capture_records(records, read, workers=self.wp_cli.max_concurrency)

    def after(
        self, records: Sequence[CommandRecord], scope: SiteScope, target_id: str
    ) -> dict[str, UndoCapture]:
        read = self._read(scope, target_id)
        return recorder.record_records(records, read, workers=self.wp_cli.max_concurrency)

    def cannot_undo(self, decision: PolicyDecision) -> str | None:
        return cannot_undo(decision.command_path, decision.argv)


class UndoRunOpening:
    """An undo run (`state.reverts_run_id`) starts with its revert plan instead of a model call."""

    def __init__(self, policy: CommandPolicy, wp_cli: WpCli, limiter: RateLimiter) -> None:
        self.policy = policy
        self.wp_cli = wp_cli
        self.limiter = limiter

    def first_step(self, state: SessionState) -> Opening | None:
        if not state.reverts_run_id:
            return None
        return plan_message(state, self)

    def last_step(self, state: SessionState) -> str | None:
        return closing_text(state) if state.reverts_run_id else None
