"""The undo package as the agent sees it: a ChangeRecorder (agent/ports.py) wired in by the CLI and
the Lambda runtime, so the agent never imports undo (the package sits above the agent)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wp_agent.agent.ports import RateLimiter
from wp_agent.agent.session_state import CommandRecord, SessionState
from wp_agent.executors.port import WpCli
from wp_agent.policy import CommandPolicy, PolicyDecision
from wp_agent.undo import recorder
from wp_agent.undo.agent_turn import plan_message
from wp_agent.undo.capture import with_undo_note
from wp_agent.undo.entities import Read


class UndoRecorder:
    """Before/after images through policy-checked, site-scoped reads on the agent's own executor."""

    def __init__(self, policy: CommandPolicy, wp_cli: WpCli, limiter: RateLimiter) -> None:
        self.policy = policy
        self.wp_cli = wp_cli
        self.limiter = limiter

    def _read(self, state: SessionState) -> Read:
        return recorder.site_reader(state, self.policy, self.wp_cli, self.limiter)

    def before(self, state: SessionState, records: Sequence[CommandRecord]) -> None:
        recorder.capture_records(records, self._read(state), workers=self.wp_cli.max_concurrency)

    def after(self, state: SessionState, records: Sequence[CommandRecord]) -> None:
        recorder.record_records(records, self._read(state), workers=self.wp_cli.max_concurrency)

    def opening_step(self, state: SessionState) -> list[dict[str, Any]] | None:
        if not state.reverts_run_id:
            return None
        return plan_message(state, self)

    def approval_impact(self, decision: PolicyDecision, impact_ja: str) -> str:
        return with_undo_note(decision.command_path, decision.argv, impact_ja)
