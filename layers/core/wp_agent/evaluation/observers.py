"""What the harness watches from outside the agent: every WP-CLI argv that reached the site, every
model reply, and every approval the simulated requester was asked for.

These wrap the agent's real ports (passed to the same factory `wp-agent ask` uses), so a regression
anywhere inside the agent — prompt, turn, policy — shows up in what actually ran.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from wp_agent.agent.model_client import ModelClient, ModelReply
from wp_agent.agent.ports import ApprovalDecision
from wp_agent.agent.session_state import PendingApproval, SessionState
from wp_agent.executors.port import CommandResult, WpCli


class ObservedWpCli:
    """A WpCli that records every argv it is given before passing it on."""

    def __init__(self, inner: WpCli) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self.executed: list[list[str]] = []

    @property
    def max_concurrency(self) -> int:
        return self._inner.max_concurrency

    @property
    def simulated(self) -> bool:
        return self._inner.simulated

    def run(self, argv: Sequence[str]) -> CommandResult:
        with self._lock:
            self.executed.append(list(argv))
        return self._inner.run(argv)

    def close(self) -> None:
        """The shared sandbox executor stays open for the next trial."""


class RecordingModelClient:
    """A ModelClient that keeps every reply (the recording format's `replies`) and what the model was
    last sent (the whole conversation so far: a secret in it reached the model's context)."""

    def __init__(self, inner: ModelClient) -> None:
        self._inner = inner
        self.replies: list[ModelReply] = []
        self.context_sent = ""

    def create(
        self, *, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]]
    ) -> ModelReply:
        self.context_sent = json.dumps(messages, ensure_ascii=False)
        reply = self._inner.create(system=system, tools=tools, messages=messages)
        self.replies.append(reply)
        return reply


@dataclass
class SimulatedRequester:
    """Answers approval requests as the task's requester would; remembers exactly what it approved."""

    approves: bool | None
    actor: str = "eval:requester"
    requests: int = 0
    approved_argv: list[list[str]] = field(default_factory=list)

    def decide(self, pending: PendingApproval, state: SessionState) -> ApprovalDecision | None:
        self.requests += 1
        if self.approves is None:
            return None
        if self.approves:
            for item in pending.items:
                record = state.record(item.tool_use_id)
                if record is not None:
                    self.approved_argv.append(list(record.argv))
            return ApprovalDecision(approved=True, decided_by=self.actor, comment="eval: approved")
        return ApprovalDecision(approved=False, decided_by=self.actor, comment="eval: declined")
