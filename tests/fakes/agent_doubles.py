"""In-process doubles for the agent's ports: a scripted ModelClient and a recording WpCli, the
dependencies of a turn built from them, and a check of the Messages API's conversation rules."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from wp_agent.agent.model_client import ModelReply
from wp_agent.agent.ports import AgentDeps, InMemorySessionStore, MemoryAuditLog, NoRateLimits, SessionStore
from wp_agent.agent.session_state import CommandStatus, SessionState
from wp_agent.agent.site_facts import FactsPlan
from wp_agent.config import CliSettings
from wp_agent.errors import AgentErrorCode, StaleSessionError, WpAgentError
from wp_agent.executors.port import CommandResult
from wp_agent.policy import CommandPolicy, PolicyCategory


class LosesOneSaveWhileStarted(InMemorySessionStore):
    """Another writer (the approval API, a retried Lambda) saves first once, while `armed`: the next save
    of a session with a command "started" loses the race (StaleSessionError)."""

    def __init__(self, *, armed: bool = False) -> None:
        super().__init__()
        self.armed = armed

    def save(self, state: SessionState) -> None:
        if self.armed and any(c.status is CommandStatus.STARTED for c in state.commands):
            self.armed = False
            raise StaleSessionError(state.session_id)
        super().save(state)


class CountingLimiter(NoRateLimits):
    """The commands-per-user limit in one window, in memory, taken once per intent as DynamoRateLimiter
    takes it; `counted` keeps every intent counted, per user."""

    def __init__(self, per_user: int) -> None:
        self.per_user = per_user
        self.counted: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def before_command(self, user_id: str, intent_id: str) -> None:
        with self._lock:
            intents = self.counted.setdefault(user_id, [])
            if intent_id in intents:
                return
            if len(intents) >= self.per_user:
                raise WpAgentError(
                    AgentErrorCode.COMMAND_BLOCKED,
                    f"コマンド実行の上限（1分あたり{self.per_user}回）に達したため実行していません。",
                )
            intents.append(intent_id)


ModelStep = ModelReply | WpAgentError | Callable[[list[dict[str, Any]]], "ModelReply | WpAgentError"]


def text_reply(text: str) -> ModelReply:
    return ModelReply(content=[{"type": "text", "text": text}], stop_reason="end_turn", model="scripted")


_counter = iter(range(1, 1_000_000))


def tool_reply(*commands: str | tuple[str, str], text: str | None = None) -> ModelReply:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for item in commands:
        command, reason = item if isinstance(item, tuple) else (item, "テスト")
        content.append(
            {
                "type": "tool_use",
                "id": f"toolu_{next(_counter):06d}",
                "name": "wp_cli",
                "input": {"command": command, "reason": reason},
            }
        )
    return ModelReply(content=content, stop_reason="tool_use", model="scripted")


class ScriptedModel:
    """ModelClient double: answers each call with the next step; records the messages it was sent."""

    def __init__(self, steps: Sequence[ModelStep]) -> None:
        self._steps = list(steps)
        self.calls: list[list[dict[str, Any]]] = []

    def create(
        self, *, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]]
    ) -> ModelReply:
        self.calls.append([dict(m) for m in messages])
        if not self._steps:
            raise AssertionError("ScriptedModel: script exhausted")
        step = self._steps.pop(0)
        if callable(step) and not isinstance(step, ModelReply):
            step = step(messages)
        if isinstance(step, WpAgentError):
            raise step
        return step

    def last_tool_results(self) -> list[dict[str, Any]]:
        content = self.calls[-1][-1]["content"]
        return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def default_success(argv: list[str]) -> CommandResult:
    """Like WP-CLI: one `Success:` line per numeric ID, else a single one."""
    ids = [a for a in argv if a.isdigit()]
    lines = [f"Success: Done {argv[0]} {i}." for i in ids] or ["Success: ok."]
    return CommandResult("\n".join(lines) + "\n", "", 0, 1)


@dataclass
class RecordingWpCli:
    """WpCli double: records every argv; answers from a handler (default: `Success: ok.`)."""

    handler: Callable[[list[str]], CommandResult | WpAgentError] | None = None
    delay_seconds: float = 0.0
    max_concurrency: int = 5
    simulated: bool = False
    calls: list[list[str]] = field(default_factory=list)
    peak_concurrency: int = 0
    # The most commands at once while one of them could change the site (1: a change never overlapped).
    peak_beside_a_change: int = 0
    _active: int = 0
    _changing: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, argv: Sequence[str]) -> CommandResult:
        change = CommandPolicy().classify_argv(list(argv)).category is not PolicyCategory.READ
        with self._lock:
            self.calls.append(list(argv))
            self._active += 1
            self._changing += change
            self.peak_concurrency = max(self.peak_concurrency, self._active)
            if self._changing:
                self.peak_beside_a_change = max(self.peak_beside_a_change, self._active)
        try:
            if self.delay_seconds:
                time.sleep(self.delay_seconds)
            answer = self.handler(list(argv)) if self.handler else default_success(list(argv))
        finally:
            with self._lock:
                self._active -= 1
                self._changing -= change
        if isinstance(answer, WpAgentError):
            raise answer
        return answer

    def close(self) -> None:
        return None

    def commands(self) -> list[list[str]]:
        """The calls other than the reads of the site's facts (agent/site_facts.py) that each run makes
        before its first model call."""
        return [c for c in self.calls if not is_fact_read(c)]

    def changes(self) -> list[list[str]]:
        """The calls that could change the site (reads, such as the ones an approval summary makes
        to describe the current state, left out)."""
        policy = CommandPolicy()
        return [c for c in self.calls if policy.classify_argv(c).category is not PolicyCategory.READ]


def is_fact_read(argv: Sequence[str]) -> bool:
    """Whether `argv` is one of the site-fact reads (on the session's site: `--url` appended)."""
    words = tuple(argv[:-1] if argv and argv[-1].startswith("--url=") else argv)
    user = FactsPlan(None, words[2] if len(words) > 2 else None).user_read
    return words in FactsPlan(None, None).reads or words == user


def make_deps(
    model: ScriptedModel,
    wp: RecordingWpCli | None = None,
    *,
    store: SessionStore | None = None,
    **settings: Any,
) -> AgentDeps:
    return AgentDeps(
        model=model,
        wp_cli=wp or RecordingWpCli(),
        policy=CommandPolicy(),
        audit=MemoryAuditLog(),
        limiter=NoRateLimits(),
        store=store if store is not None else InMemorySessionStore(),
        settings=CliSettings(anthropic_api_key="test", **settings),
    )


def conversation_problems(messages: list[dict[str, Any]]) -> list[str]:
    """What the Messages API would reject: roles must alternate starting with the user, and every
    tool_use must be answered, in order, by the tool_result blocks of the next user message."""
    problems: list[str] = []
    if messages and messages[0]["role"] != "user":
        problems.append("the first message is not the user's")
    for index, message in enumerate(messages):
        if index and messages[index - 1]["role"] == message["role"]:
            problems.append(f"two {message['role']} messages in a row at {index}")
        content = message["content"]
        if message["role"] != "assistant" or not isinstance(content, list):
            continue
        asked = [block["id"] for block in content if block.get("type") == "tool_use"]
        if not asked or index + 1 == len(messages):
            continue  # no tools, or the model's latest reply (answered by the next request)
        answer = messages[index + 1]["content"]
        answered = [
            block.get("tool_use_id")
            for block in (answer if isinstance(answer, list) else [])
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]
        if answered != asked:
            problems.append(f"tool_use {asked} at {index} answered by {answered}")
    return problems
