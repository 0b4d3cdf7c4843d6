"""Starting and continuing a session's conversation: the messages the model sees first."""

from __future__ import annotations

import uuid
from typing import Any

from wp_agent.agent import approval_protocol
from wp_agent.agent.prompt import multisite_note
from wp_agent.agent.session_state import SessionState, SessionStatus
from wp_agent.agent.tool_results import close_open_tool_calls
from wp_agent.errors import SessionBusyError
from wp_agent.models.agent_io import AgentInput, utc_now_iso


def new_run_id() -> str:
    return f"run_{uuid.uuid4().hex[:20]}"


def _as_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def new_session(
    agent_input: AgentInput,
    *,
    session_id: str,
    user_id: str,
    target_id: str,
    site_url: str | None = None,
    run_id: str | None = None,
) -> SessionState:
    """Initial state: conversation history (text only) + the new instruction as the last user message."""
    messages: list[dict[str, Any]] = []
    for item in agent_input.conversation_history or []:
        content = (
            item.content
            if isinstance(item.content, str)
            else [b for b in item.content if b.get("type") == "text"]
        )
        if not content:
            continue
        if messages and messages[-1]["role"] == item.role:
            previous = messages[-1]["content"]
            messages[-1]["content"] = (
                f"{previous}\n\n{content}"
                if isinstance(previous, str) and isinstance(content, str)
                else [*_as_blocks(previous), *_as_blocks(content)]
            )
        else:
            messages.append({"role": item.role, "content": content})
    text = agent_input.message
    network_wide = bool(agent_input.multisite and agent_input.multisite.network_wide)
    note = multisite_note(site_url, network_wide)
    if note:
        text = f"{text}\n\n{note}"
    if messages and messages[-1]["role"] == "user":
        messages.append({"role": "assistant", "content": "承知しました。続きの指示をどうぞ。"})
    messages.append({"role": "user", "content": text})
    return SessionState(
        session_id=session_id,
        run_id=run_id or new_run_id(),
        user_id=user_id,
        target_id=target_id,
        input=agent_input,
        messages=messages,
        started_at=utc_now_iso(),
        site_url=site_url,
    )


def continue_session(
    state: SessionState, agent_input: AgentInput, *, run_id: str | None = None, timeout_ms: int = 60_000
) -> None:
    """Start a follow-up run in a finished session: the conversation so far stays the context."""
    if not state.status.terminal and state.status is not SessionStatus.IDLE:
        raise SessionBusyError()
    # A run that ended mid-way (expiry, cancel, failure) may have left tool calls unanswered.
    close_open_tool_calls(state, timeout_ms=timeout_ms)
    approval_protocol.cancel(state)
    if state.messages and state.messages[-1]["role"] == "user":
        # The previous run ended without an assistant reply (e.g. an error); keep roles alternating.
        state.messages.append({"role": "assistant", "content": "（前回の処理は途中で終了しました）"})
    state.messages.append({"role": "user", "content": agent_input.message})
    state.input = agent_input
    state.run_id = run_id or new_run_id()
    state.status = SessionStatus.IDLE
    state.iterations = 0
    state.elapsed_ms = 0
    state.stop_reason = None
    state.result = None
