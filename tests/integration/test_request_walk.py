"""The request walk, measured: POST /v1/sessions/{id}/messages through the serverless stack (API →
synthesized state machine in moto → turn Lambda → real sshd + WP-CLI → audit record).

The walk is every first-party file on the call stack at the moments the request has an effect: the
session saved, the workflow started, the command sent over SSH, the audit record written. It is the
path a reader follows from the handler to the audit record; README's "Following a request" lists it.
A new stop on that path must be added there too (this test compares the two).
"""

from __future__ import annotations

import json
import re
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from tests.fakes import aws as aws_fakes
from tests.fakes.anthropic_server import reply_text, reply_tool_use
from tests.fakes.serverless import TARGET_ID, ServerlessStack

pytestmark = pytest.mark.sshd
ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SESSION = "ses_walk_0001"


def _first_party(frame: FrameType | None) -> list[str]:
    """The repository's own files on the stack, outermost first (tests and libraries left out)."""
    files: list[str] = []
    while frame is not None:
        path = Path(frame.f_code.co_filename)
        if path.is_relative_to(ROOT):
            relative = path.relative_to(ROOT).as_posix()
            # local_api is the test's moto harness handing the invocation over, not a stop of the request
            first_party = relative.startswith(("layers/", "functions/")) and "/local_api/" not in relative
            if first_party and relative not in files:
                files.append(relative)
        frame = frame.f_back
    return list(reversed(files))


def _effect(frame: FrameType) -> str | None:
    """What the call in `frame` does to the world, when it is one of the request's effects."""
    code = frame.f_code
    if code.co_name == "exec_command" and code.co_filename.endswith("paramiko/channel.py"):
        return "ssh"
    if code.co_name != "_make_api_call" or not code.co_filename.endswith("botocore/client.py"):
        return None
    operation = frame.f_locals.get("operation_name")
    params: dict[str, Any] = frame.f_locals.get("api_params") or {}
    tables = {str(params.get("TableName", "")), *map(str, params.get("RequestItems", {}))}
    if operation == "StartExecution":
        return "workflow"
    if tables & {aws_fakes.TABLES["audit"]}:
        return "audit"
    if tables & {aws_fakes.TABLES["sessions"]} and operation in {"PutItem", "BatchWriteItem", "UpdateItem"}:
        return "session"
    return None


def _documented_walk() -> list[str]:
    """The numbered files of README's "Following a request" (paths under wp_agent/ written short)."""
    section = README.read_text(encoding="utf-8").split("### Following a request", 1)[1].split("```", 2)[1]
    files = [m.group(1) for m in re.finditer(r"^\s*\d+\.\s+(\S+)", section, re.MULTILINE)]
    return [f if f.startswith("functions/") else f"layers/core/wp_agent/{f}" for f in files]


@pytest.mark.timeout(900)  # every call of the run goes through the profiler
def test_the_request_walk_is_the_documented_one(serverless: ServerlessStack) -> None:
    stack = serverless
    stack.model.enqueue(
        reply_tool_use([("wp_cli", {"command": "post list --format=ids", "reason": "一覧"})]),
        reply_text("一覧を確認しました。"),
    )
    stacks: dict[str, list[list[str]]] = {}

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and (effect := _effect(frame)) is not None:
            stacks.setdefault(effect, []).append(_first_party(frame))

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        status, body = stack.api(
            "POST", f"/v1/sessions/{SESSION}/messages", body={"message": "記事の一覧", "targetId": TARGET_ID}
        )
        assert status == 202, body
        stack.wait_for(SESSION, "Completed", timeout=240)  # everything runs under the profiler
    finally:
        sys.setprofile(None)
        threading.setprofile(None)

    assert set(stacks) == {"session", "workflow", "ssh", "audit"}, json.dumps(stacks, indent=1)
    walk = [f for effect in ("session", "workflow", "ssh", "audit") for s in stacks[effect] for f in s]
    files = list(dict.fromkeys(walk))
    documented = _documented_walk()
    assert sorted(files) == sorted(documented), json.dumps(stacks, indent=1)
    packages = {_package(f) for f in files}
    print(f"request walk: {len(files)} files in {len(packages)} packages ({len(packages) - 1} boundaries)")
    # The routes and the Lambda tasks are in the package so `api serve` runs the same ones (+4 files).
    assert len(files) <= 19  # under two thirds of the 31 the architecture review counted
    assert len(packages) <= 7


def _package(path: str) -> str:
    parts = path.split("/")
    if parts[0] == "functions":
        return "/".join(parts[:2])
    inner = parts[3:-1]  # layers/core/wp_agent/<package>/…
    return "/".join(inner) or "wp_agent"
