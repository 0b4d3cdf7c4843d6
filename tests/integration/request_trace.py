"""A trace of one real request from the inside: every call into layers/ and functions/ on every
thread, every write to the session, every call that leaves the process.

What it records, and what test_request_walk.py checks with it:
- session writes: every attribute set on the session or on the records, approvals and usage it holds,
  and every change of its lists, named by the first-party file that made it (`writers`);
- the session's path: per turn and thread, the files of the first-party functions that hold the
  session, in order (`returns` counts the times it comes back to a file it had left);
- effects: the calls that leave the process (AWS API calls, SSH commands, HTTP to the model), each
  with the first-party files on its stack, so a deciding module doing I/O is seen (`deciding_io`);
- the walk's package graph: caller package → callee package of every first-party call (`edges`).
"""

from __future__ import annotations

import functools
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from wp_agent.agent.session_state import (
    ApprovalItem,
    CommandRecord,
    ModelUsage,
    PendingApproval,
    SessionState,
)

ROOT = Path(__file__).resolve().parents[2]
_SESSION_MODELS: tuple[type[Any], ...] = (
    SessionState,
    CommandRecord,
    PendingApproval,
    ApprovalItem,
    ModelUsage,
)
_LIST_FIELDS = {"messages", "commands", "held_results", "approval_history", "audit_outbox"}
_TRACE_FILE = Path(__file__).resolve().as_posix()


@functools.cache
def first_party(path: str) -> str | None:
    """`layers/core/wp_agent/agent/turn.py` → `agent/turn.py`, `functions/api/handler.py` as it is;
    None for tests and libraries."""
    resolved = Path(path)
    if not resolved.is_absolute() or not resolved.is_relative_to(ROOT):
        return None
    relative = resolved.relative_to(ROOT).as_posix()
    if relative.startswith("layers/core/wp_agent/local_api/"):
        return None  # moto's Lambda service handing an invocation to the function: AWS's part, not ours
    if relative.startswith("layers/core/wp_agent/"):
        return relative.removeprefix("layers/core/wp_agent/")
    if relative.startswith("functions/"):
        return relative
    return None


def package(file: str) -> str:
    """The package a first-party file belongs to: `agent`, `adapters/aws`, `functions/turn`, `wp_agent`."""
    parts = file.split("/")
    if parts[0] == "functions":
        return "/".join(parts[:2])
    return "/".join(parts[:-1]) or "wp_agent"


def stack_files(frame: FrameType | None) -> list[str]:
    """First-party files on the stack, innermost first (repeats kept)."""
    files: list[str] = []
    while frame is not None:
        file = first_party(frame.f_code.co_filename)
        if file is not None:
            files.append(file)
        frame = frame.f_back
    return files


def _caller(frame: FrameType) -> str | None:
    back = frame.f_back
    while back is not None:
        file = first_party(back.f_code.co_filename)
        if file is not None:
            return file
        back = back.f_back
    return None


def _tables(frame: FrameType) -> frozenset[str]:
    params: dict[str, Any] = frame.f_locals.get("api_params") or {}
    return frozenset({str(params.get("TableName", "")), *map(str, params.get("RequestItems", {}))} - {""})


def _holds_session(frame: FrameType) -> bool:
    return any(isinstance(v, SessionState) for v in frame.f_locals.values())


@dataclass
class Write:
    file: str
    what: str
    stack: list[str]


@dataclass
class Effect:
    kind: str
    stack: list[str]
    tables: frozenset[str] = frozenset()  # an AWS call's DynamoDB tables


@dataclass
class RequestTrace:
    """Install with `with trace.running():`; read the fields afterwards."""

    deciding: frozenset[str] = frozenset()
    writes: list[Write] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    edges: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    # (turn number, thread name) -> where the session goes, in order: ("call", file) when a function of
    # `file` is called with it, ("return", file) when a call returns it to a function of `file`
    paths: dict[tuple[int, str], list[tuple[str, str]]] = field(default_factory=dict)
    _turn: int = 0
    _turn_threads: dict[int, int] = field(default_factory=dict)
    _active: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- what the checks read -------------------------------------------------------------------

    @property
    def writers(self) -> list[str]:
        return sorted({w.file for w in self.writes})

    def returns(self, *, calls_only: bool = False, home: str | None = None) -> dict[int, int]:
        """Per turn: how often the session comes back to a file it had left (every thread), by a call
        or by a call returning to it (`calls_only`: by calls alone). Calls into `home` are not counted:
        the one file every change of the session goes to (each of its moments is a call there)."""
        per_turn: dict[int, int] = {}
        for (turn, _thread), steps in self.paths.items():
            seen: set[str] = set()
            previous = None
            count = 0
            for kind, file in steps:
                if file == previous:
                    continue
                if file in seen and file != home and (kind == "call" or not calls_only):
                    count += 1
                seen.add(file)
                previous = file
            per_turn[turn] = per_turn.get(turn, 0) + count
        return per_turn

    def deciding_io(self) -> list[str]:
        """Effects and session writes made while a deciding module was on the stack."""
        found = []
        for effect in self.effects:
            inside = [f for f in effect.stack if f in self.deciding]
            if inside:
                found.append(f"{effect.kind} under {inside[0]}: {' < '.join(effect.stack[:6])}")
        for write in self.writes:
            inside = [f for f in write.stack if f in self.deciding]
            if inside:
                found.append(f"session write ({write.what}) under {inside[0]}: {' < '.join(write.stack[:6])}")
        return found

    # -- recording ------------------------------------------------------------------------------

    def _write(self, what: str, frame: FrameType | None) -> None:
        stack = stack_files(frame)
        if stack:
            with self._lock:
                self.writes.append(Write(stack[0], what, stack))

    def _effect(self, frame: FrameType) -> str | None:
        code = frame.f_code
        name, file = code.co_name, code.co_filename
        if name == "exec_command" and file.endswith("paramiko/channel.py"):
            return "ssh"
        if name == "_make_api_call" and file.endswith("botocore/client.py"):
            return f"aws:{frame.f_locals.get('operation_name')}"
        if name == "send" and file.endswith("httpx/_client.py"):
            return "http"
        return None

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        file = first_party(frame.f_code.co_filename)
        if event == "call":
            kind = self._effect(frame) if file is None else None
            if kind is not None:
                effect = Effect(
                    kind, stack_files(frame), _tables(frame) if kind.startswith("aws:") else frozenset()
                )
                with self._lock:
                    self.effects.append(effect)
                return
            if file is None or frame.f_code.co_filename == _TRACE_FILE:
                return
            if file == "functions/turn/handler.py" and frame.f_code.co_name == "lambda_handler":
                with self._lock:
                    self._turn += 1
                    self._turn_threads[threading.get_ident()] = self._active = self._turn
            caller = _caller(frame)
            if caller is not None and package(caller) != package(file):
                with self._lock:
                    self.edges.setdefault((package(caller), package(file)), [caller, file])
            if _holds_session(frame):
                self._visit("call", file)
        elif file == "functions/turn/handler.py" and frame.f_code.co_name == "lambda_handler":
            with self._lock:
                self._turn_threads.pop(threading.get_ident(), None)
                self._active = 0
        elif file is not None and frame.f_back is not None and _holds_session(frame):
            back = first_party(frame.f_back.f_code.co_filename)
            if back is not None and _holds_session(frame.f_back):
                self._visit("return", back)

    def _visit(self, kind: str, file: str) -> None:
        """The session is in `file` now; kept for the turns only (their threads and the pools they
        start; the test's own thread, which polls and decides, is not a turn)."""
        thread = threading.current_thread()
        if file == "agent/session_state.py":
            return  # the session's own methods (record(), run_commands()) are the session itself
        with self._lock:
            turn = self._turn_threads.get(thread.ident or 0)
            if turn is None and self._active and thread.name.startswith(("wp-cli", "ThreadPoolExecutor")):
                turn = self._active  # a pool thread of the turn that runs now
            if turn is None:
                return
            self.paths.setdefault((turn, thread.name), []).append((kind, file))

    # -- installing -----------------------------------------------------------------------------

    def running(self) -> _Running:
        return _Running(self)


class _TrackedList(list[Any]):
    """A session list that tells the trace who changes it."""

    trace: RequestTrace | None = None
    label = ""

    def _note(self) -> None:
        if self.trace is not None:
            self.trace._write(f"{self.label} changed", sys._getframe(2))

    def __reduce_ex__(self, protocol: Any) -> Any:  # copies are plain lists
        return (list, (list(self),))


def _mutator(name: str) -> Any:
    original = getattr(list, name)

    def mutate(self: _TrackedList, *args: Any, **kwargs: Any) -> Any:
        self._note()
        return original(self, *args, **kwargs)

    mutate.__name__ = name
    return mutate


for _name in ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
              "__setitem__", "__delitem__", "__iadd__"):  # fmt: skip
    setattr(_TrackedList, _name, _mutator(_name))


class _Running:
    def __init__(self, trace: RequestTrace) -> None:
        self._trace = trace
        self._saved: list[tuple[type[Any], str, Any]] = []
        self._originals: dict[type[Any], Any] = {}

    def __enter__(self) -> RequestTrace:
        trace = self._trace
        originals = self._originals

        def setattr_(obj: Any, name: str, value: Any) -> None:
            trace._write(f"{type(obj).__name__}.{name}", sys._getframe(1))
            originals[type(obj)](obj, name, value)

        def getattribute(obj: Any, name: str) -> Any:
            value = object.__getattribute__(obj, name)
            if name in _LIST_FIELDS and type(value) is list:
                tracked = _TrackedList(value)
                tracked.trace, tracked.label = trace, f"SessionState.{name}"
                object.__getattribute__(obj, "__dict__")[name] = tracked
                return tracked
            return value

        for model in _SESSION_MODELS:
            self._saved.append((model, "__setattr__", model.__dict__.get("__setattr__")))
            originals[model] = model.__setattr__
            model.__setattr__ = setattr_  # type: ignore[assignment]
        self._saved.append((SessionState, "__getattribute__", SessionState.__dict__.get("__getattribute__")))
        SessionState.__getattribute__ = getattribute  # type: ignore[method-assign]
        threading.setprofile(trace._profile)
        sys.setprofile(trace._profile)
        return trace

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)
        threading.setprofile(None)
        for model, name, original in self._saved:
            if original is None:
                delattr(model, name)
            else:
                setattr(model, name, original)
