"""One MCP connection's view of the agent: every wp_cli call goes through the agent's own turn.

The MCP client has already chosen the command, so each call is one run of `AgentTurn` whose
"model" answers with exactly that `wp_cli` tool use (and ends the turn afterwards). The policy,
the session's site scope, rate limits, output capping, masking, the untrusted-output wrapping, the
approval protocol and the audit are therefore the agent's, not a copy of them.
"""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wp_agent.agent.approval_protocol import ApprovalRefusedError
from wp_agent.agent.lifecycle import held_summary, new_session
from wp_agent.agent.model_client import ModelReply
from wp_agent.agent.ports import AgentDeps, ApprovalDecision
from wp_agent.agent.prompt import TOOL_NAME
from wp_agent.agent.session_state import CommandRecord, PendingApproval, SessionState
from wp_agent.agent.turn import AgentTurn
from wp_agent.masking import mask_command
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.workflow import Route
from wp_agent.policy import PolicyCategory, PolicyDecision
from wp_agent.policy.decide import explained
from wp_agent.policy.site_scope import apply_site_scope

# Held approvals one connection may keep open; past it the oldest one expires (audited, never run).
MAX_HELD_APPROVALS = 20
_END_OF_CALL = "（MCPクライアントからの呼び出しを処理しました）"
UNKNOWN_APPROVAL_JA = (
    "この承認IDの保留中の操作は、このMCPセッションにはありません（別のセッションのID、処理済み、"
    "または存在しないIDです）。何も実行していません。"
)


class ClientToolCall:
    """ModelClient for one MCP tool call: the first model call of the run answers with the client's
    `wp_cli` tool use, every later one (after the result or an approval decision) ends the turn."""

    def __init__(self, tool_use_id: str, command: str, reason: str) -> None:
        self._tool_use = {
            "type": "tool_use",
            "id": tool_use_id,
            "name": TOOL_NAME,
            "input": {"command": command, "reason": reason},
        }
        self._answered = False
        self._lock = threading.Lock()

    def create(
        self, *, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]]
    ) -> ModelReply:
        with self._lock:
            first, self._answered = not self._answered, True
        if first:
            return ModelReply(content=[self._tool_use], stop_reason="tool_use", model="mcp-client")
        return ClientCallEnded().create(system=system, tools=tools, messages=messages)


class ClientCallEnded:
    """ModelClient of an MCP client's call that was already made: every model call ends the turn. A
    held call resumed elsewhere (the person's `wp-agent approve`) runs with it — nothing is planned."""

    def create(
        self, *, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]]
    ) -> ModelReply:
        return ModelReply(
            content=[{"type": "text", "text": _END_OF_CALL}], stop_reason="end_turn", model="mcp-client"
        )


@dataclass(frozen=True)
class CallOutcome:
    """What one wp_cli / approve / reject call came to, for the MCP client."""

    text: str  # Japanese; command output inside the untrusted-data wrapper
    is_error: bool
    record: CommandRecord | None = None
    pending: PendingApproval | None = None  # set while the command waits for the person's decision


@dataclass
class _Held:
    state: SessionState
    turn: AgentTurn
    tool_use_id: str


class McpSession:
    """The wp_cli runs and held approvals of one MCP connection (approvals never leave it)."""

    def __init__(
        self,
        deps: AgentDeps,
        *,
        channel: str,
        user_id: str,
        site_url: str | None = None,
        network_admin: bool = True,
    ) -> None:
        self.channel = channel
        self.session_id = f"mcp_{uuid.uuid4().hex[:20]}"
        self._deps = deps
        self._user_id = user_id
        self._site_url = site_url
        self._network_admin = network_admin
        self._held: dict[str, _Held] = {}
        self._lock = threading.Lock()
        # A client may call wp_cli several times at once; its changes run one at a time, so each one
        # is decided on the site as the one before left it (a post an update just saved a revision
        # as is seen, not taken for a missing ID: policy/post_targets.py).
        self._one_change_at_a_time = threading.Lock()

    @property
    def simulated(self) -> bool:
        return self._deps.wp_cli.simulated

    @property
    def site_url(self) -> str | None:
        return self._site_url

    # -- the tools ------------------------------------------------------------------------------

    def run_command(self, command: str, reason: str) -> CallOutcome:
        """Classify and run (read/write), refuse (blocked) or hold (destructive) one command."""
        if not self._deps.policy.classify(command).may_change_site:
            return self._run_command(command, reason)
        with self._one_change_at_a_time:
            return self._run_command(command, reason)

    def _run_command(self, command: str, reason: str) -> CallOutcome:
        tool_use_id = f"mcp_{uuid.uuid4().hex[:20]}"
        state = self._new_state(command, reason)
        # The client's own model plans: no request of ours carries the site's facts.
        call = ClientToolCall(tool_use_id, command, reason)
        turn = AgentTurn(dataclasses.replace(self._deps, model=call, site_facts=None))
        result = turn.advance(state)
        pending = state.pending_approval
        if result is Route.AWAITING_APPROVAL and pending is not None:
            with self._lock:
                self._held[pending.approval_id] = _Held(state, turn, tool_use_id)
                overflow = list(self._held)[:-MAX_HELD_APPROVALS]
                dropped = [self._held.pop(approval_id) for approval_id in overflow]
            for held in dropped:
                held.turn.expire_approval(held.state)
            return CallOutcome(text="", is_error=False, record=state.record(tool_use_id), pending=pending)
        if result is Route.CONTINUE:
            turn.advance(state)  # the "model" ends the run: the run is finished and recorded
        return _outcome(state, tool_use_id)

    def pending(self, approval_id: str) -> PendingApproval | None:
        with self._lock:
            held = self._held.get(approval_id)
        return held.state.pending_approval if held is not None else None

    def decide(
        self, approval_id: str, *, approved: bool, decided_by: str, comment: str | None = None
    ) -> CallOutcome:
        """Approve (run exactly the held argv, after the policy checks it again) or reject a command
        this session holds. Any other id — another session's, a decided one, a made-up one — is refused."""
        with self._lock:
            held = self._held.pop(approval_id, None)
        if held is None:
            return CallOutcome(text=UNKNOWN_APPROVAL_JA, is_error=True)
        decision = ApprovalDecision(approved=approved, decided_by=decided_by, comment=comment)
        try:
            held.turn.decide(held.state, decision)
        except ApprovalRefusedError:
            held.turn.expire_approval(held.state)  # the only refusal left for a live approval
            return CallOutcome(
                text="承認の期限が切れたため、この操作は実行しませんでした。必要なら改めて wp_cli から依頼してください。",
                is_error=True,
            )
        result = held.turn.advance(held.state)
        if result is Route.CONTINUE:
            held.turn.advance(held.state)
        return _outcome(held.state, held.tool_use_id)

    def hand_over(self, approval_id: str, keep: Callable[[SessionState, str], str | None]) -> bool:
        """Give a held run to whoever `keep` stores it for (the person's terminal); this session
        forgets it, so nothing here can decide it any more. Not kept (it holds a secret, or the write
        failed): it expires now, audited, and never runs."""
        with self._lock:
            held = self._held.pop(approval_id, None)
        if held is None:
            return False
        try:
            kept = keep(held.state, self.channel) is not None
        except (OSError, ValueError):  # could not be written: it must not stay half-held
            kept = False
        if not kept:
            held.turn.expire_approval(held.state)
        elif (summary := held_summary(held.state)) is not None:
            self._deps.audit.append(summary)  # history: 承認待ち until the person decides
        return kept

    def close(self) -> None:
        """The connection ended: what is still held expires (audited per command) and never runs."""
        with self._lock:
            held, self._held = list(self._held.values()), {}
        for item in held:
            item.turn.expire_approval(item.state)

    def check(self, command: str) -> PolicyDecision:
        """The decision wp_cli would meet in this session (policy, then the session's site scope)."""
        return apply_site_scope(self._deps.policy.classify(command), self._new_state().site_scope())

    def explain(self, command: str) -> list[dict[str, Any]]:
        """`decide`'s steps for `command` in this session, as `wp-agent check --explain` shows them: the
        checks that read the site say which reads decide when wp_cli runs it (check reads nothing)."""
        return explained(self._deps.policy, command, self._new_state().site_scope())

    def read(self, command: str, reason: str) -> str | None:
        """Masked stdout of a read-only command run through the same pipeline; None when the policy
        does not class it as a read or it failed."""
        if self.check(command).category is not PolicyCategory.READ:
            return None
        outcome = self.run_command(command, reason)
        record = outcome.record
        if record is None or outcome.is_error or record.exit_code != 0:
            return None
        return record.stdout

    # -- plumbing -------------------------------------------------------------------------------

    def _new_state(self, command: str = "", reason: str = "") -> SessionState:
        return new_session(
            AgentInput(message=call_instruction(self.channel, command, reason)),
            session_id=self.session_id,
            user_id=self._user_id,
            target_id="local",
            site_url=self._site_url,
            network_admin=self._network_admin,
        )


def call_instruction(channel: str, command: str, reason: str) -> str:
    """What the MCP client asked, as the run's instruction (`history`): the command (masked) and
    its reason, on one bounded line."""
    said = f"MCP（{channel.removeprefix('mcp:')}）"
    if command.strip():
        said += f": wp {mask_command(command.strip().removeprefix('wp ').strip())}"
    if reason.strip():
        said += f" — {reason}"
    line = " ".join(said.replace("\x00", " ").split())
    return line if len(line) <= _INSTRUCTION_CHARS else line[: _INSTRUCTION_CHARS - 1] + "…"


_INSTRUCTION_CHARS = 500


def _outcome(state: SessionState, tool_use_id: str) -> CallOutcome:
    """The tool_result the turn produced for the call (capped, masked, wrapped), else the run's error."""
    record = state.record(tool_use_id)
    for message in state.messages:
        if message["role"] != "user" or not isinstance(message["content"], list):
            continue
        for block in message["content"]:
            if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id:
                return CallOutcome(
                    text=_text_of(block.get("content")), is_error=bool(block.get("is_error")), record=record
                )
    error = state.result.error if state.result is not None else None
    text = error.message if error is not None else "コマンドを実行できませんでした。"
    return CallOutcome(text=text, is_error=True, record=record)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""
