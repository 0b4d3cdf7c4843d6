"""A scripted Anthropic-compatible HTTP server on loopback, for driving the real ``anthropic`` SDK offline.

The product calls Claude through the real SDK; tests point the SDK at this server with
``base_url=server.base_url`` (or ``ANTHROPIC_BASE_URL``) and script what "Claude" answers.

Python API
==========

::

    from tests.fakes.anthropic_server import (
        ScriptedAnthropicServer, fault, reply_text, reply_tool_use, tool_results_text,
    )

    with ScriptedAnthropicServer([
        reply_tool_use([("wp_cli", {"command": "post list --format=json", "reason": "list posts"})]),
        lambda req: reply_text("done" if "[]" in tool_results_text(req) else "posts found"),
    ]) as server:
        client = anthropic.Anthropic(api_key="test-key", base_url=server.base_url)
        ...
        assert server.request_count == 2
        server.assert_script_consumed()

The server keeps a FIFO queue of *steps*; every ``POST /v1/messages`` consumes one. Steps:

``Reply``   (``reply``, ``reply_text``, ``reply_tool_use``)
    A ``200`` Messages API response: ``{"id": "msg_…", "type": "message", "role": "assistant",
    "model": <echoed from the request>, "content": [...], "stop_reason": ..., "stop_sequence": null,
    "usage": {...}}``. ``tool_use`` blocks without an ``id`` get a fresh ``toolu_…`` id (unique per
    server). Usage defaults to a rough estimate (JSON length / 4) with zero cache tokens. When the
    request has ``"stream": true`` the same message is sent as Server-Sent Events
    (``message_start`` … ``message_stop``).
``Fault``   (``fault`` and the shortcuts ``rate_limited``, ``overloaded``, ``server_error`` …)
    An HTTP error in the API's shape ``{"type": "error", "error": {"type": ..., "message": ...},
    "request_id": "req_…"}`` with optional headers (``retry-after``, ``retry-after-ms``,
    ``x-should-retry``) and an optional ``error.details.error_code``.
``Delay``   (``delay(seconds, then=step)``)
    Wait, then answer with ``then`` (default: a text reply). Longer than the client's timeout, it
    makes the SDK raise ``APITimeoutError``. The wait ends early when the server stops.
``Drop``    (``drop(mode)``)
    Read the request, then break the connection without a (complete) answer: ``"close"`` (FIN, no
    response), ``"reset"`` (RST) or ``"partial"`` (status line and half a body). The SDK raises
    ``APIConnectionError``.
callable    ``(RecordedRequest) -> step``
    Decides the step when the request arrives (e.g. from the last ``tool_result``).

When the queue is empty the server answers ``500`` ``api_error`` "script exhausted" with
``x-should-retry: false`` (so the SDK does not retry it) and counts it in ``exhausted_count``;
``assert_script_consumed()`` fails on that, on leftover steps and on protocol errors.

With ``strict=True`` (the default) each Messages request is first checked the way the real API
would (required fields, ``anthropic-version`` header, ``tool_use``/``tool_result`` pairing, at most
four ``cache_control`` breakpoints). A violation is answered ``400`` ``invalid_request_error``,
does not consume a step and is listed in ``errors``. ``api_key=`` makes the server answer ``401``
(without consuming a step) unless the request carries that key in ``x-api-key`` or
``Authorization: Bearer``. Other paths get a ``404`` ``not_found_error``.

Timing caveats: the SDK retries timeouts and dropped connections too (``APIConnectionError``), so
with ``max_retries > 0`` the retry consumes the *next* step. After a client timeout the delayed step
still "answers" into the closed socket; its record then says ``200``/``reply``.

Every request (any path) is recorded as a ``RecordedRequest``: method, path, query, lower-cased
headers, raw and parsed JSON body, ``received_at`` (``time.monotonic()``), and after answering the
status and outcome. See ``requests``, ``message_requests``, ``request_count``, ``last_request``,
``tool_results_in``, ``wait_for_requests``.

JSON script format (command line)
=================================

``python -m tests.fakes.anthropic_server --script script.json [--port 0]
[--api-key KEY] [--record requests.jsonl] [--no-strict]``

prints the base URL (``http://127.0.0.1:PORT``) as its first stdout line, serves until SIGTERM /
SIGINT, then prints a summary to stderr and exits ``0`` if the script was consumed exactly
(no leftovers, no exhaustion, no protocol errors), else ``1``. ``--record`` appends one JSON line
per request (``method``, ``path``, ``headers``, ``body``, ``status``, ``outcome``, ``received_at``).

The script is a JSON list of steps (or ``{"steps": [...]}``); ``--script -`` reads stdin. Each step
is an object with a ``"type"`` mirroring the Python constructors, plus an optional ``"repeat": n``
that enqueues it ``n`` times::

    [
      {"type": "tool_use", "calls": [{"name": "wp_cli",
                                      "input": {"command": "post list --format=json", "reason": "…"},
                                      "id": "toolu_optional"}],
       "text": "optional text block before the calls"},
      {"type": "text", "text": "投稿は3件です。", "stop_reason": "end_turn",
       "usage": {"input_tokens": 120, "output_tokens": 12,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 100}},
      {"type": "reply", "content": [{"type": "text", "text": "raw blocks"}],
       "stop_reason": "max_tokens", "model": "override", "id": "msg_x", "headers": {"k": "v"}},
      {"type": "fault", "status": 429, "message": "slow down", "error_type": "rate_limit_error",
       "headers": {"retry-after-ms": "1"}, "error_code": null, "repeat": 2},
      {"type": "delay", "seconds": 2.5, "then": {"type": "text", "text": "late"}},
      {"type": "drop", "mode": "close"}
    ]

``"fault"`` also accepts ``"retry_after"``, ``"retry_after_ms"`` and ``"should_retry"`` (bool) as
shortcuts for the headers. ``"reply"``/``"text"``/``"tool_use"`` accept ``stop_reason``,
``stop_sequence``, ``usage``, ``model``, ``id`` and ``headers``.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import signal
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, ClassVar, Literal, TypeAlias, cast

__all__ = [
    "DEFAULT_ERROR_TYPES",
    "MESSAGES_PATH",
    "Delay",
    "Drop",
    "Fault",
    "RecordedRequest",
    "Reply",
    "ScriptedAnthropicServer",
    "Step",
    "StepLike",
    "Usage",
    "auth_error",
    "delay",
    "drop",
    "fault",
    "load_script",
    "overloaded",
    "rate_limited",
    "reply",
    "reply_text",
    "reply_tool_use",
    "server_error",
    "service_unavailable",
    "step_from_json",
    "text_block",
    "tool_result_text",
    "tool_results",
    "tool_results_text",
    "tool_use_block",
    "usage",
]

MESSAGES_PATH = "/v1/messages"
MAX_DELAY_SECONDS = 60.0
MAX_BODY_BYTES = 32 * 1024 * 1024
MAX_CALLABLE_DEPTH = 10
EXHAUSTED_MESSAGE = "script exhausted"

# The error `type` the API uses for each status (https://docs.anthropic.com/en/api/errors).
DEFAULT_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

_DEFAULT_MESSAGES: dict[int, str] = {
    400: "invalid request",
    401: "invalid x-api-key",
    402: "Your credit balance is too low to access the Anthropic API.",
    403: "Your API key does not have permission to use the specified resource.",
    404: "Not found",
    408: "Request timed out",
    409: "Conflict",
    413: "Request exceeds the maximum allowed number of bytes.",
    429: "Number of request tokens has exceeded your per-minute rate limit",
    500: "Internal server error",
    503: "Service unavailable",
    504: "Request timed out",
    529: "Overloaded",
}

DropMode: TypeAlias = Literal["close", "reset", "partial"]
_DROP_MODES: tuple[str, ...] = ("close", "reset", "partial")


# --------------------------------------------------------------------------------------------------
# Steps
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    """Token usage reported in a reply; ``None`` fields are estimated from the request/response."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def to_json(self, *, estimated_input: int, estimated_output: int) -> dict[str, Any]:
        return {
            "input_tokens": estimated_input if self.input_tokens is None else self.input_tokens,
            "output_tokens": estimated_output if self.output_tokens is None else self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.cache_creation_input_tokens,
                "ephemeral_1h_input_tokens": 0,
            },
            "service_tier": "standard",
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Usage:
        unknown = set(data) - {
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        }
        if unknown:
            raise ValueError(f"unknown usage fields: {sorted(unknown)}")
        return cls(
            input_tokens=_opt_int(data.get("input_tokens")),
            output_tokens=_opt_int(data.get("output_tokens")),
            cache_creation_input_tokens=int(data.get("cache_creation_input_tokens", 0)),
            cache_read_input_tokens=int(data.get("cache_read_input_tokens", 0)),
        )


@dataclass(frozen=True)
class Reply:
    """A successful Messages API response."""

    content: tuple[Mapping[str, Any], ...]
    stop_reason: str | None = "end_turn"
    stop_sequence: str | None = None
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    """``None`` echoes the request's ``model``."""
    id: str | None = None
    """``None`` generates a ``msg_…`` id."""
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Fault:
    """An HTTP error response in the Anthropic error format."""

    status: int
    message: str | None = None
    error_type: str | None = None
    """``None`` picks the API's type for ``status`` (see ``DEFAULT_ERROR_TYPES``)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    error_code: str | None = None
    """Sent as ``error.details.error_code`` (the SDK picks a more specific class from it)."""

    def body(self, request_id: str) -> dict[str, Any]:
        error: dict[str, Any] = {
            "type": self.error_type or DEFAULT_ERROR_TYPES.get(self.status, "api_error"),
            "message": self.message or _DEFAULT_MESSAGES.get(self.status, f"HTTP {self.status}"),
        }
        if self.error_code is not None:
            error["details"] = {"error_code": self.error_code}
        return {"type": "error", "error": error, "request_id": request_id}


@dataclass(frozen=True)
class Delay:
    """Wait ``seconds`` (interrupted when the server stops), then answer with ``then``."""

    seconds: float
    then: StepLike | None = None
    """``None`` answers a short text reply."""

    def __post_init__(self) -> None:
        if not 0 <= self.seconds <= MAX_DELAY_SECONDS:
            raise ValueError(f"delay must be within 0..{MAX_DELAY_SECONDS} s, got {self.seconds}")


@dataclass(frozen=True)
class Drop:
    """Break the connection after reading the request."""

    mode: DropMode = "close"

    def __post_init__(self) -> None:
        if self.mode not in _DROP_MODES:
            raise ValueError(f"drop mode must be one of {_DROP_MODES}, got {self.mode!r}")


Step: TypeAlias = Reply | Fault | Delay | Drop
StepFn: TypeAlias = Callable[["RecordedRequest"], "StepLike"]
StepLike: TypeAlias = Reply | Fault | Delay | Drop | StepFn


# --------------------------------------------------------------------------------------------------
# Constructors
# --------------------------------------------------------------------------------------------------


def usage(
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    *,
    cache_creation_input_tokens: int = 0,
    cache_read_input_tokens: int = 0,
) -> Usage:
    return Usage(input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens)


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(name: str, input: Mapping[str, Any], id: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": dict(input)}
    if id is not None:
        block["id"] = id
    return block


def reply(
    content: Sequence[Mapping[str, Any]],
    *,
    stop_reason: str | None = "end_turn",
    stop_sequence: str | None = None,
    usage: Usage | Mapping[str, Any] | None = None,
    model: str | None = None,
    id: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """A reply with raw content blocks (dicts in the API's response shape)."""
    for block in content:
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            raise TypeError(f"content blocks must be objects with a 'type', got {block!r}")
    return Reply(
        content=tuple(dict(b) for b in content),
        stop_reason=stop_reason,
        stop_sequence=stop_sequence,
        usage=_as_usage(usage),
        model=model,
        id=id,
        headers=dict(headers or {}),
    )


def reply_text(
    text: str,
    *,
    stop_reason: str | None = "end_turn",
    stop_sequence: str | None = None,
    usage: Usage | Mapping[str, Any] | None = None,
    model: str | None = None,
    id: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """A single text block; ``stop_reason`` ``end_turn`` unless given (e.g. ``max_tokens``)."""
    return reply(
        [text_block(text)],
        stop_reason=stop_reason,
        stop_sequence=stop_sequence,
        usage=usage,
        model=model,
        id=id,
        headers=headers,
    )


ToolCall: TypeAlias = (
    tuple[str, Mapping[str, Any]] | tuple[str, Mapping[str, Any], str | None] | Mapping[str, Any]
)


def reply_tool_use(
    calls: Sequence[ToolCall],
    *,
    text: str | None = None,
    stop_reason: str | None = "tool_use",
    usage: Usage | Mapping[str, Any] | None = None,
    model: str | None = None,
    id: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """``tool_use`` blocks, each ``(name, input)``, ``(name, input, id)`` or ``{"name", "input", "id"?}``.

    ``text`` adds a text block before the calls, as Claude often does.
    """
    if not calls:
        raise ValueError("reply_tool_use needs at least one call")
    blocks: list[dict[str, Any]] = [text_block(text)] if text is not None else []
    for call in calls:
        if isinstance(call, Mapping):
            blocks.append(tool_use_block(str(call["name"]), call.get("input", {}), call.get("id")))
        elif len(call) == 2:
            blocks.append(tool_use_block(call[0], call[1]))
        else:
            blocks.append(tool_use_block(call[0], call[1], call[2]))
    return reply(blocks, stop_reason=stop_reason, usage=usage, model=model, id=id, headers=headers)


def fault(
    status: int,
    message: str | None = None,
    *,
    error_type: str | None = None,
    headers: Mapping[str, str] | None = None,
    retry_after: float | str | None = None,
    retry_after_ms: float | str | None = None,
    should_retry: bool | None = None,
    error_code: str | None = None,
) -> Fault:
    """An error response; ``retry_after``/``retry_after_ms``/``should_retry`` set those headers."""
    if not 400 <= status <= 599:
        raise ValueError(f"fault status must be 4xx/5xx, got {status}")
    hdrs = {k.lower(): str(v) for k, v in (headers or {}).items()}
    if retry_after is not None:
        hdrs["retry-after"] = _num(retry_after)
    if retry_after_ms is not None:
        hdrs["retry-after-ms"] = _num(retry_after_ms)
    if should_retry is not None:
        hdrs["x-should-retry"] = "true" if should_retry else "false"
    return Fault(status=status, message=message, error_type=error_type, headers=hdrs, error_code=error_code)


def rate_limited(message: str | None = None, *, retry_after_ms: float | None = 1, **kw: Any) -> Fault:
    """429 ``rate_limit_error``; ``retry-after-ms: 1`` by default so SDK retries are instant."""
    return fault(429, message, retry_after_ms=retry_after_ms, **kw)


def overloaded(message: str | None = None, *, retry_after_ms: float | None = 1, **kw: Any) -> Fault:
    """529 ``overloaded_error``; ``retry-after-ms: 1`` by default."""
    return fault(529, message, retry_after_ms=retry_after_ms, **kw)


def server_error(message: str | None = None, *, retry_after_ms: float | None = 1, **kw: Any) -> Fault:
    """500 ``api_error``; ``retry-after-ms: 1`` by default."""
    return fault(500, message, retry_after_ms=retry_after_ms, **kw)


def service_unavailable(message: str | None = None, *, retry_after_ms: float | None = 1, **kw: Any) -> Fault:
    """503 ``api_error``; ``retry-after-ms: 1`` by default."""
    return fault(503, message, retry_after_ms=retry_after_ms, **kw)


def auth_error(message: str = "invalid x-api-key", **kw: Any) -> Fault:
    """401 ``authentication_error`` (the SDK never retries it)."""
    return fault(401, message, **kw)


def delay(seconds: float, then: StepLike | None = None) -> Delay:
    return Delay(seconds, then)


def drop(mode: DropMode = "close") -> Drop:
    return Drop(mode)


# --------------------------------------------------------------------------------------------------
# JSON scripts
# --------------------------------------------------------------------------------------------------

_REPLY_KEYS = {"stop_reason", "stop_sequence", "usage", "model", "id", "headers"}


def step_from_json(data: Mapping[str, Any]) -> Step:
    """One step of the JSON script format (see the module docstring); ``repeat`` is not handled here."""
    if not isinstance(data, Mapping):
        raise TypeError(f"a step must be a JSON object, got {data!r}")
    kind = data.get("type")
    rest = {k: v for k, v in data.items() if k not in {"type", "repeat"}}

    def check(allowed: set[str]) -> None:
        unknown = set(rest) - allowed
        if unknown:
            raise ValueError(f"unknown fields for step type {kind!r}: {sorted(unknown)}")

    if kind == "text":
        check({"text"} | _REPLY_KEYS)
        return reply_text(str(rest.pop("text")), **_reply_kwargs(rest))
    if kind == "tool_use":
        check({"calls", "text"} | _REPLY_KEYS)
        calls = rest.pop("calls")
        if not isinstance(calls, list):
            raise ValueError("tool_use 'calls' must be a list of {name, input, id?}")
        kwargs = _reply_kwargs(rest)
        kwargs.setdefault("stop_reason", "tool_use")
        kwargs.pop("stop_sequence", None)
        return reply_tool_use(calls, text=rest.get("text"), **kwargs)
    if kind == "reply":
        check({"content"} | _REPLY_KEYS)
        content = rest.pop("content")
        if not isinstance(content, list):
            raise ValueError("reply 'content' must be a list of content blocks")
        return reply(content, **_reply_kwargs(rest))
    if kind == "fault":
        check(
            {
                "status",
                "message",
                "error_type",
                "headers",
                "retry_after",
                "retry_after_ms",
                "should_retry",
                "error_code",
            }
        )
        return fault(int(rest.pop("status")), **rest)
    if kind == "delay":
        check({"seconds", "then"})
        then = rest.get("then")
        return Delay(float(rest["seconds"]), step_from_json(then) if then is not None else None)
    if kind == "drop":
        check({"mode"})
        mode = rest.get("mode", "close")
        if mode not in _DROP_MODES:
            raise ValueError(f"drop mode must be one of {_DROP_MODES}, got {mode!r}")
        return Drop(cast(DropMode, mode))
    raise ValueError(f"unknown step type {kind!r} (text, tool_use, reply, fault, delay, drop)")


def load_script(source: str | Path | Sequence[Any] | Mapping[str, Any]) -> list[Step]:
    """Steps from a JSON file path, a parsed JSON list, or ``{"steps": [...]}``; expands ``repeat``."""
    data: Any = source
    if isinstance(source, (str, Path)):
        text = sys.stdin.read() if str(source) == "-" else Path(source).read_text(encoding="utf-8")
        data = json.loads(text)
    if isinstance(data, Mapping):
        data = data.get("steps")
    if not isinstance(data, Sequence) or isinstance(data, (str, bytes)):
        raise TypeError("a script is a JSON list of steps (or an object with a 'steps' list)")
    steps: list[Step] = []
    for i, item in enumerate(data):
        try:
            step = step_from_json(item)
            repeat = int(item.get("repeat", 1))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"script step {i}: {exc}") from exc
        if repeat < 0:
            raise ValueError(f"script step {i}: repeat must be >= 0")
        steps.extend([step] * repeat)
    return steps


def _reply_kwargs(rest: Mapping[str, Any]) -> dict[str, Any]:
    kwargs = {k: rest[k] for k in _REPLY_KEYS if k in rest}
    if "usage" in kwargs and kwargs["usage"] is not None:
        kwargs["usage"] = Usage.from_json(kwargs["usage"])
    return kwargs


# --------------------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    """One request as the server saw it."""

    index: int
    method: str
    path: str
    query: str
    headers: dict[str, str]
    """Lower-cased names; repeated headers joined with ``", "``."""
    raw_body: bytes
    body: Any
    """Parsed JSON, or ``None`` when the body was empty or not JSON."""
    received_at: float
    """``time.monotonic()`` when the request had been read."""
    status: int | None = None
    """The status answered (``None`` for drops / before answering)."""
    outcome: str = "pending"
    """``reply``, ``fault``, ``drop``, ``exhausted``, ``invalid``, ``unauthorized``, ``not_found``,
    ``step_error``, ``aborted`` (server stopped during a delay)."""

    @property
    def json(self) -> dict[str, Any]:
        if not isinstance(self.body, dict):
            raise AssertionError(  # noqa: TRY004 - a failed expectation in a test, not a type error
                f"request {self.index} has no JSON object body: {self.raw_body[:200]!r}"
            )
        return self.body

    @property
    def is_messages(self) -> bool:
        return self.method == "POST" and self.path == MESSAGES_PATH

    @property
    def retry_count(self) -> int | None:
        value = self.headers.get("x-stainless-retry-count")
        return int(value) if value is not None and value.isdigit() else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages = self.json.get("messages")
        return messages if isinstance(messages, list) else []

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "headers": self.headers,
            "body": self.body if self.body is not None else self.raw_body.decode("utf-8", "replace"),
            "received_at": self.received_at,
            "status": self.status,
            "outcome": self.outcome,
        }


def tool_results(
    request: RecordedRequest | Mapping[str, Any], *, last_message_only: bool = True
) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of the last user message (or of all messages)."""
    body = request.json if isinstance(request, RecordedRequest) else request
    messages = body.get("messages") or []
    if last_message_only:
        user_msgs = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        messages = user_msgs[-1:]
    found: list[dict[str, Any]] = []
    for msg in messages:
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, list):
            found.extend(b for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
    return found


def tool_result_text(block: Mapping[str, Any]) -> str:
    """The text of one ``tool_result`` block (string content or its text blocks joined by newlines)."""
    content = block.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return str(content)


def tool_results_text(request: RecordedRequest | Mapping[str, Any]) -> str:
    """All ``tool_result`` texts of the last user message, joined by newlines."""
    return "\n".join(tool_result_text(b) for b in tool_results(request))


# --------------------------------------------------------------------------------------------------
# Request validation (the subset of the API's checks that catches agent-loop bugs)
# --------------------------------------------------------------------------------------------------


def _validate_messages_request(headers: Mapping[str, str], body: Any) -> str | None:
    if "anthropic-version" not in headers:
        return "anthropic-version: header is required"
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    messages = body.get("messages")
    problems = _top_level_problems(body)
    if not isinstance(messages, list) or not messages:
        messages = []
    problems += _message_shape_problems(messages)
    if problems:
        return "; ".join(problems)
    return _pairing_problem(messages) or _cache_control_problem(body, messages)


def _top_level_problems(body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append("model: Field required")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        problems.append("max_tokens: Field required (integer >= 1)")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        problems.append("messages: at least one message is required")
    system = body.get("system")
    if system is not None and not isinstance(system, (str, list)):
        problems.append("system: Input should be a valid string or list of text blocks")
    if isinstance(system, list):
        for i, block in enumerate(system):
            if (
                not isinstance(block, dict)
                or block.get("type") != "text"
                or not isinstance(block.get("text"), str)
            ):
                problems.append(f"system.{i}: Input should be a text block")
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        problems.append("tools: Input should be a valid list")
    for i, tool in enumerate(tools if isinstance(tools, list) else []):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            problems.append(f"tools.{i}.name: Field required")
        elif tool.get("type") in (None, "custom") and not isinstance(tool.get("input_schema"), dict):
            problems.append(f"tools.{i}.input_schema: Field required")
    return problems


def _message_shape_problems(messages: list[Any]) -> list[str]:
    problems: list[str] = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant"):
            problems.append(f"messages.{i}.role: Input should be 'user' or 'assistant'")
            continue
        content = msg.get("content")
        if isinstance(content, list):
            for j, block in enumerate(content):
                if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                    problems.append(f"messages.{i}.content.{j}: Input should be a content block")
        elif not isinstance(content, str):
            problems.append(f"messages.{i}.content: Input should be a valid string or list")
    return problems


def _pairing_problem(messages: list[dict[str, Any]]) -> str | None:
    """Every tool_result answers a tool_use of the message before; every tool_use is answered."""
    for i, msg in enumerate(messages):
        content = msg["content"] if isinstance(msg["content"], list) else []
        if msg["role"] == "user":
            ids = [b.get("tool_use_id") for b in content if b.get("type") == "tool_result"]
            prev = messages[i - 1] if i > 0 else None
            prev_ids = (
                {b.get("id") for b in prev["content"] if b.get("type") == "tool_use"}
                if prev is not None and prev["role"] == "assistant" and isinstance(prev["content"], list)
                else set()
            )
            unexpected = [x for x in ids if x not in prev_ids]
            if unexpected:
                return (
                    f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{', '.join(map(str, unexpected))}. Each `tool_result` block must have a corresponding "
                    "`tool_use` block in the previous message."
                )
        elif i + 1 < len(messages):
            use_ids = [b.get("id") for b in content if b.get("type") == "tool_use"]
            nxt = messages[i + 1]
            nxt_content = nxt["content"] if isinstance(nxt["content"], list) else []
            answered = {b.get("tool_use_id") for b in nxt_content if b.get("type") == "tool_result"}
            missing = [x for x in use_ids if x not in answered]
            if missing:
                return (
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    "immediately after: "
                    f"{', '.join(map(str, missing))}. Each `tool_use` block must have a corresponding "
                    "`tool_result` block in the next message."
                )
    return None


def _cache_control_problem(body: dict[str, Any], messages: list[dict[str, Any]]) -> str | None:
    breakpoints = _count_cache_control(body.get("tools")) + _count_cache_control(body.get("system"))
    breakpoints += sum(_count_cache_control(m.get("content")) for m in messages)
    if breakpoints > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}."
    return None


def _count_cache_control(value: Any) -> int:
    if not isinstance(value, list):
        return 0
    return sum(1 for b in value if isinstance(b, dict) and b.get("cache_control") is not None)


# --------------------------------------------------------------------------------------------------
# HTTP server
# --------------------------------------------------------------------------------------------------


class _StoppingError(Exception):
    """The server stopped while a step was waiting."""


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: ScriptedAnthropicServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "scripted-anthropic/1.0"
    sys_version = ""
    # Idle keep-alive connections give up after this long, so handler threads are bounded.
    timeout = 30.0
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.owner._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        try:
            self.server.owner._handle(self)
        except (BrokenPipeError, ConnectionResetError, TimeoutError, _StoppingError):
            self.close_connection = True

    # ---- I/O helpers used by the owner ----

    def read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            chunks: list[bytes] = []
            total = 0
            while True:
                size = int(self.rfile.readline(1024).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                total += size
                if total > MAX_BODY_BYTES:
                    raise ValueError("body too large")
                chunks.append(self.rfile.read(size))
                self.rfile.readline(1024)
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BODY_BYTES:
            raise ValueError("body too large")
        return self.rfile.read(length) if length else b""

    def send_bytes(self, status: int, payload: bytes, content_type: str, headers: Mapping[str, str]) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(payload)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def break_connection(self, mode: DropMode) -> None:
        self.close_connection = True
        sock = self.connection
        with contextlib.suppress(OSError):
            if mode == "partial":
                sock.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4096\r\n\r\n"
                    b'{"id": "msg_partial", "type": "mess'
                )
            if mode == "reset":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()
                return
            sock.shutdown(socket.SHUT_RDWR)


class ScriptedAnthropicServer:
    """Threaded Anthropic-compatible server on 127.0.0.1 answering from a script of steps."""

    join_timeout: ClassVar[float] = 5.0

    def __init__(
        self,
        steps: Iterable[StepLike] = (),
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str | None = None,
        strict: bool = True,
        record_path: str | Path | None = None,
    ) -> None:
        if host not in ("127.0.0.1", "localhost"):
            raise ValueError("the scripted server only binds to 127.0.0.1")
        self._host = "127.0.0.1"
        self._port = port
        self.api_key = api_key
        self.strict = strict
        self._record_path = Path(record_path) if record_path is not None else None
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._queue: deque[StepLike] = deque(steps)
        self._requests: list[RecordedRequest] = []
        self._errors: list[str] = []
        self._exhausted = 0
        self._consumed = 0
        self._ids = itertools.count(1)
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle ----

    def start(self) -> ScriptedAnthropicServer:
        if self._httpd is not None:
            raise RuntimeError("server already started")
        self._stopping.clear()
        httpd = _HTTPServer((self._host, self._port), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._port = httpd.server_address[1]
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"scripted-anthropic-{self._port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake any delayed step, close open connections; idempotent and bounded."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        if thread is not None:
            thread.join(self.join_timeout)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ScriptedAnthropicServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._httpd is not None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` — pass as ``base_url=`` or ``ANTHROPIC_BASE_URL``."""
        return f"http://{self._host}:{self.port}"

    # ---- scripting ----

    def enqueue(self, *steps: StepLike) -> ScriptedAnthropicServer:
        with self._lock:
            self._queue.extend(steps)
        return self

    def extend(self, steps: Iterable[StepLike]) -> ScriptedAnthropicServer:
        return self.enqueue(*steps)

    def reset(self, steps: Iterable[StepLike] = ()) -> None:
        """Replace the script and forget recorded requests, errors and exhaustion."""
        with self._lock:
            self._queue = deque(steps)
            self._requests.clear()
            self._errors.clear()
            self._exhausted = 0
            self._consumed = 0

    @property
    def pending_steps(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def consumed_steps(self) -> int:
        with self._lock:
            return self._consumed

    @property
    def exhausted_count(self) -> int:
        """How many Messages requests arrived after the script ran out."""
        with self._lock:
            return self._exhausted

    @property
    def errors(self) -> list[str]:
        """Protocol violations (strict mode) and exceptions raised by callable steps."""
        with self._lock:
            return list(self._errors)

    def assert_script_consumed(self) -> None:
        """Fail unless every step was used, nothing arrived after the end and no errors happened."""
        with self._lock:
            problems = []
            if self._queue:
                problems.append(f"{len(self._queue)} step(s) never requested")
            if self._exhausted:
                problems.append(f"{self._exhausted} request(s) arrived after the script was exhausted")
            problems.extend(self._errors)
        if problems:
            raise AssertionError("scripted Anthropic server: " + "; ".join(problems))

    # ---- recordings ----

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self._requests if r.is_messages]

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._requests)

    @property
    def last_request(self) -> RecordedRequest:
        with self._lock:
            if not self._requests:
                raise AssertionError("the scripted Anthropic server received no requests")
            return self._requests[-1]

    def tool_results_in(
        self, request: RecordedRequest | None = None, *, last_message_only: bool = True
    ) -> list[dict[str, Any]]:
        """``tool_result`` blocks of ``request`` (default: the last request)."""
        return tool_results(request or self.last_request, last_message_only=last_message_only)

    def wait_for_requests(self, count: int, timeout: float = 2.0) -> bool:
        """Block until ``count`` requests were recorded (or ``timeout``); returns whether they were."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self._requests) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._arrived.wait(remaining)
            return True

    # ---- internals ----

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _new_id(self, prefix: str) -> str:
        # Deterministic within a server, shaped like the API's base62 ids.
        return f"{prefix}_01SIM{next(self._ids):019d}"

    def _record(self, handler: _Handler, raw: bytes) -> RecordedRequest:
        path, _, query = handler.path.partition("?")
        headers: dict[str, str] = {}
        for name, value in handler.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        body: Any = None
        if raw:
            with contextlib.suppress(ValueError):
                body = json.loads(raw)
        with self._arrived:
            rec = RecordedRequest(
                index=len(self._requests),
                method=handler.command,
                path=path,
                query=query,
                headers=headers,
                raw_body=raw,
                body=body,
                received_at=time.monotonic(),
            )
            self._requests.append(rec)
            self._arrived.notify_all()
        return rec

    def _finish(self, rec: RecordedRequest, status: int | None, outcome: str) -> None:
        with self._lock:
            rec.status = status
            rec.outcome = outcome
        if self._record_path is not None:
            with self._lock, self._record_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec.to_json(), ensure_ascii=False) + "\n")

    def _handle(self, handler: _Handler) -> None:
        try:
            raw = handler.read_body()
        except ValueError:
            rec = self._record(handler, b"")
            self._send_fault(handler, rec, Fault(413), "invalid")
            return
        rec = self._record(handler, raw)

        if not rec.is_messages:
            self._send_fault(
                handler,
                rec,
                Fault(404, f"{rec.method} {rec.path} is not supported by the scripted server"),
                "not_found",
            )
            return
        if self.api_key is not None and not self._authorized(rec.headers):
            self._send_fault(handler, rec, auth_error(), "unauthorized")
            return
        if self.strict:
            problem = _validate_messages_request(rec.headers, rec.body)
            if problem is not None:
                with self._lock:
                    self._errors.append(f"request {rec.index}: invalid request: {problem}")
                self._send_fault(handler, rec, Fault(400, problem), "invalid")
                return

        with self._lock:
            step: StepLike | None = self._queue.popleft() if self._queue else None
            if step is None:
                self._exhausted += 1
            else:
                self._consumed += 1
        if step is None:
            self._send_fault(handler, rec, fault(500, EXHAUSTED_MESSAGE, should_retry=False), "exhausted")
            return
        self._run_step(handler, rec, step)

    def _run_step(self, handler: _Handler, rec: RecordedRequest, step: StepLike) -> None:
        for _ in range(MAX_CALLABLE_DEPTH + 1):
            if isinstance(step, Delay):
                if self._stopping.wait(step.seconds):
                    self._finish(rec, None, "aborted")
                    raise _StoppingError
                step = step.then if step.then is not None else reply_text("(delayed reply)")
                continue
            if isinstance(step, Reply):
                self._send_reply(handler, rec, step)
                return
            if isinstance(step, Fault):
                self._send_fault(handler, rec, step, "fault")
                return
            if isinstance(step, Drop):
                self._finish(rec, None, "drop")
                handler.break_connection(step.mode)
                return
            if callable(step):
                try:
                    step = step(rec)
                except Exception as exc:  # noqa: BLE001 - a broken script must answer, not hang the client
                    self._step_error(handler, rec, f"callable step raised {type(exc).__name__}: {exc}")
                    return
                continue
            self._step_error(handler, rec, f"not a step: {step!r}")
            return
        self._step_error(handler, rec, f"callable steps nested deeper than {MAX_CALLABLE_DEPTH}")

    def _step_error(self, handler: _Handler, rec: RecordedRequest, message: str) -> None:
        with self._lock:
            self._errors.append(f"request {rec.index}: {message}")
        self._send_fault(handler, rec, fault(500, message, should_retry=False), "step_error")

    def _authorized(self, headers: Mapping[str, str]) -> bool:
        return (
            headers.get("x-api-key") == self.api_key
            or headers.get("authorization") == f"Bearer {self.api_key}"
        )

    def _send_fault(self, handler: _Handler, rec: RecordedRequest, step: Fault, outcome: str) -> None:
        request_id = self._new_id("req")
        payload = json.dumps(step.body(request_id)).encode()
        headers = {"request-id": request_id, **step.headers}
        self._finish(rec, step.status, outcome)
        handler.send_bytes(step.status, payload, "application/json", headers)

    def _send_reply(self, handler: _Handler, rec: RecordedRequest, step: Reply) -> None:
        body = rec.body if isinstance(rec.body, dict) else {}
        content: list[dict[str, Any]] = []
        for block in step.content:
            out = dict(block)
            if out.get("type") == "tool_use" and not out.get("id"):
                out["id"] = self._new_id("toolu")
            content.append(out)
        prompt_size = len(json.dumps([body.get("system"), body.get("tools"), body.get("messages")]))
        message = {
            "id": step.id or self._new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": step.model or body.get("model") or "claude-scripted",
            "content": content,
            "stop_reason": step.stop_reason,
            "stop_sequence": step.stop_sequence,
            "usage": step.usage.to_json(
                estimated_input=max(1, prompt_size // 4),
                estimated_output=max(1, len(json.dumps(content)) // 4),
            ),
        }
        request_id = self._new_id("req")
        headers = {"request-id": request_id, **step.headers}
        self._finish(rec, 200, "reply")
        if body.get("stream") is True:
            handler.send_bytes(200, _sse_payload(message), "text/event-stream; charset=utf-8", headers)
        else:
            handler.send_bytes(
                200, json.dumps(message, ensure_ascii=False).encode(), "application/json", headers
            )


def _sse_payload(message: Mapping[str, Any]) -> bytes:
    """The message as the streaming API's event sequence."""
    events: list[tuple[str, dict[str, Any]]] = []
    usage_json = dict(message["usage"])
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage_json, "output_tokens": 1},
    }
    events.append(("message_start", {"type": "message_start", "message": start}))
    for index, block in enumerate(message["content"]):
        if block.get("type") == "text":
            text = str(block.get("text", ""))
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": {**block, "text": ""}},
                )
            )
            for piece in _halves(text):
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "text_delta", "text": piece},
                        },
                    )
                )
        elif block.get("type") == "tool_use":
            partial = json.dumps(block.get("input", {}), ensure_ascii=False)
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}},
                )
            )
            for piece in _halves(partial):
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": piece},
                        },
                    )
                )
        else:
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": dict(block)},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]},
                "usage": {"output_tokens": usage_json["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode() for name, data in events
    )


def _halves(text: str) -> Iterator[str]:
    if len(text) < 2:
        yield text
        return
    mid = len(text) // 2
    yield text[:mid]
    yield text[mid:]


def _as_usage(value: Usage | Mapping[str, Any] | None) -> Usage:
    if value is None:
        return Usage()
    if isinstance(value, Usage):
        return value
    return Usage.from_json(value)


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _num(value: float | str) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# --------------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.anthropic_server",
        description="Scripted Anthropic-compatible server on loopback; prints its base URL first.",
    )
    parser.add_argument("--script", required=True, help="JSON script file ('-' for stdin)")
    parser.add_argument("--port", type=int, default=0, help="port (0: ephemeral)")
    parser.add_argument("--host", default="127.0.0.1", choices=["127.0.0.1", "localhost"])
    parser.add_argument("--api-key", default=None, help="answer 401 unless requests carry this key")
    parser.add_argument("--record", default=None, help="append each request as a JSON line to this file")
    parser.add_argument("--no-strict", action="store_true", help="skip request validation")
    args = parser.parse_args(argv)

    try:
        steps = load_script(args.script)
    except (OSError, TypeError, ValueError) as exc:
        print(f"anthropic_server: bad script: {exc}", file=sys.stderr)
        return 2

    done = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    server = ScriptedAnthropicServer(
        steps,
        host=args.host,
        port=args.port,
        api_key=args.api_key,
        strict=not args.no_strict,
        record_path=args.record,
    )
    with server:
        print(server.base_url, flush=True)
        while not done.wait(0.2):
            pass
    summary = {
        "requests": server.request_count,
        "consumed": server.consumed_steps,
        "pending": server.pending_steps,
        "exhausted": server.exhausted_count,
        "errors": server.errors,
    }
    print(json.dumps(summary, ensure_ascii=False), file=sys.stderr, flush=True)
    ok = not (summary["pending"] or summary["exhausted"] or summary["errors"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
