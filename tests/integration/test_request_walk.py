"""One real request, traced from the inside: POST /v1/sessions/{id}/messages through the serverless
stack (API → synthesized state machine in moto → turn Lambda → policy → real sshd + WP-CLI → audit),
every call into layers/ and functions/ on every thread (tests/integration/request_trace.py).

What it guards is the structure, not a file count:
- the files that write the session stay few (at most 6), and they are the ones README names;
- the session's path through one turn comes back to a file it had left at most 10 times (entering,
  on every thread, a file it had been in before: a checkpoint enters audit_outbox and the store);
- no deciding module (the tool pipeline, approval steps and summaries, site scope, post-type guard,
  site lookup, site facts, the policy) is on the stack of an effect: an AWS call, an SSH command, a model call,
  a session write;
- the walk's package graph has no upward edge beyond the declared port and callback edges;
- the executors never import the policy, and every import-linter contract holds.
README's "Following a request" lists the walk (every first-party file on the stack when the request
saves the session, starts the workflow, runs the command over SSH and writes the audit record) and
the session's writers: this test compares both with the trace.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from tests.fakes import aws as aws_fakes
from tests.fakes.anthropic_server import reply_text, reply_tool_use
from tests.fakes.serverless import TARGET_ID, ServerlessStack
from tests.integration.request_trace import ROOT, RequestTrace, package

pytestmark = pytest.mark.sshd
README = ROOT / "README.md"
MAX_SESSION_WRITERS = 6
MAX_RETURNS_PER_TURN = 10
LEDGER = "agent/ledger.py"  # where every session change goes: the turn calls it at each moment
TRACE_TIMEOUT = 300.0  # the profiler slows every call (paramiko's key exchange most)

# Deciding modules return values (a decision, a plan of reads, a hold); they never do I/O.
DECIDING = frozenset(
    {
        "agent/tool_pipeline.py",
        "agent/approval_steps.py",
        *(
            f"policy/approval_summary/{p.name}"
            for p in (ROOT / "layers/core/wp_agent/policy/approval_summary").glob("*.py")
        ),
        "policy/site_scope.py",
        "policy/post_targets.py",
        "policy/role_targets.py",
        "agent/site_lookup.py",
        "policy/site_reads.py",
        "agent/site_facts.py",
        *(f"policy/{p.name}" for p in (ROOT / "layers/core/wp_agent/policy").glob("*.py")),
    }
)
# The walk's packages from the entry points down; a call may go down, or sideways within one rank.
RANKS = {
    "functions": 0,
    "local_api": 1,
    "http_api": 2,
    "service": 3,
    "adapters": 4,
    "undo": 4,
    "fleet": 4,
    "publishing": 4,
    "diagnostics": 4,
    "agent": 5,
    "executors": 6,
    "policy": 6,
    "media": 7,
    "masking": 7,
    "command_line": 8,
    "models": 9,
    "wp_agent": 7,  # errors.py, telemetry.py, config.py (reads media's limits), log_safety.py (masks)
}
# Upward calls that are the point of a port or a callback (the caller owns the interface).
PORT_EDGES = {
    ("agent", "adapters/aws"): "SessionStore, AuditLog, RateLimiter: the agent's ports",
    ("agent", "undo"): "ChangeRecorder, OpeningStep: the agent's ports",
    ("agent", "fleet"): "OpeningStep: the agent's port (a fleet site's planned run)",
    ("adapters/aws", "service"): "the runtime's rate-limit utilisation callback",
    ("service", "http_api"): "the idempotent request's answer, computed by the route",
}


def _rank(pkg: str) -> int:
    return RANKS[pkg.split("/", maxsplit=1)[0]]


def upward_edges(trace: RequestTrace) -> dict[str, list[str]]:
    return {
        f"{a} -> {b}": where
        for (a, b), where in trace.edges.items()
        if _rank(b) < _rank(a) and (a, b) not in PORT_EDGES
    }


def check_structure(trace: RequestTrace, *, returns: bool) -> None:
    """The structural checks; `returns`: also the bound on the session's returns (the request the
    review traced; a turn that runs a write, or loses a race and is retried, goes round more)."""
    assert len(trace.writers) <= MAX_SESSION_WRITERS, trace.writers
    paths = {f"turn {turn} {thread}": steps for (turn, thread), steps in trace.paths.items()}
    if returns:
        returned = trace.returns(calls_only=True, home=LEDGER)
        assert all(n <= MAX_RETURNS_PER_TURN for n in returned.values()), json.dumps(paths, indent=1)
    assert trace.deciding_io() == []
    assert upward_edges(trace) == {}


def report(trace: RequestTrace, stacks: dict[str, list[list[str]]]) -> str:
    """What the trace measured, for the test's output (pytest -s) and a failing assertion's reader."""
    walk = list(
        dict.fromkeys(
            f for effect in ("session", "workflow", "ssh", "audit") for s in stacks.get(effect, []) for f in s
        )
    )
    return json.dumps(
        {
            "walk": walk,
            "session writers": trace.writers,
            "returns per turn (calls and returns)": trace.returns(),
            "returns per turn (calls)": trace.returns(calls_only=True),
            "deciding modules doing I/O": trace.deciding_io(),
            "upward edges": upward_edges(trace),
            "package edges": sorted(f"{a} -> {b}" for a, b in trace.edges),
        },
        indent=1,
        ensure_ascii=False,
    )


def _documented(title: str) -> list[str]:
    """The numbered files of a list in README's "Following a request" (paths under wp_agent/ short)."""
    section = README.read_text(encoding="utf-8").split("### Following a request", 1)[1]
    block = section.split(title, 1)[1].split("```", 2)[1]
    return [m.group(1) for m in re.finditer(r"^\s*\d+\.\s+(\S+)", block, re.MULTILINE)]


def test_one_request_is_the_documented_walk(serverless: ServerlessStack) -> None:
    stack = serverless
    stack.model.enqueue(
        reply_tool_use([("wp_cli", {"command": "post list --format=ids", "reason": "一覧"})]),
        reply_text("一覧を確認しました。"),
    )
    trace = RequestTrace(deciding=DECIDING)
    with trace.running():
        status, body = stack.api(
            "POST",
            "/v1/sessions/ses_walk_0001/messages",
            body={"message": "記事の一覧", "targetId": TARGET_ID},
        )
        assert status == 202, body
        view = stack.wait_for("ses_walk_0001", "Completed", timeout=TRACE_TIMEOUT)
    assert view["result"]["success"] is True, view

    stacks = _effect_stacks(trace)
    print(report(trace, stacks))
    assert set(stacks) == {"session", "workflow", "ssh", "audit"}, json.dumps(stacks, indent=1)
    walk = list(
        dict.fromkeys(
            f for effect in ("session", "workflow", "ssh", "audit") for s in stacks[effect] for f in s
        )
    )
    assert sorted(walk) == sorted(_documented("The walk:")), json.dumps(stacks, indent=1)
    assert trace.writers == sorted(_documented("The session's writers:")), trace.writers
    check_structure(trace, returns=True)
    packages = {package(f) for f in walk}
    print(
        f"request walk: {len(walk)} files in {len(packages)} packages; session writers: {len(trace.writers)}; "
        f"returns per turn: {trace.returns(calls_only=True)}"
    )


@pytest.mark.slow
def test_a_request_with_a_change_and_an_approval(serverless: ServerlessStack) -> None:
    """The deciding steps that read the site (the post-type guard, the approval summary) and the
    approval's path (API, wait task, resumed turn) keep the same structure."""
    stack = serverless
    session = "ses_walk_0002"
    stack.model.enqueue(
        reply_tool_use(
            [
                ("wp_cli", {"command": "post list --format=ids", "reason": "一覧"}),
                ("wp_cli", {"command": "post update 1 --post_title=秋のお知らせ", "reason": "題を変更"}),
            ]
        ),
        reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "削除"})]),
        reply_text("題を変えて、45をゴミ箱へ移動しました。"),
    )
    trace = RequestTrace(deciding=DECIDING)
    with trace.running():
        status, body = stack.api(
            "POST",
            f"/v1/sessions/{session}/messages",
            body={"message": "題を変えて45を削除", "targetId": TARGET_ID},
        )
        assert status == 202, body
        view = stack.wait_for(session, "AwaitingApproval", timeout=TRACE_TIMEOUT)
        approval = view["pendingApproval"]["approvalId"]
        status, body = stack.api(
            "POST", f"/v1/sessions/{session}/approvals/{approval}", body={"decision": "approve"}
        )
        assert status == 200, body
        view = stack.wait_for(session, "Completed", timeout=TRACE_TIMEOUT)
    assert view["result"]["success"] is True, view
    assert stack.site.status_of(45) == "trash"
    reads = [
        r["reason"]
        for r in stack.audit(session)
        if r["type"] == "command_executed" and r.get("category") == "read"
    ]
    assert "更新する投稿の種類を確認（読み取りのみ）" in reads  # the post-type guard read the site
    assert "承認の要約のために現在の状態を確認（読み取りのみ）" in reads  # so did the approval summary
    print(report(trace, _effect_stacks(trace)))
    check_structure(trace, returns=False)


def test_the_executors_never_import_the_policy_and_every_contract_holds() -> None:
    graph = grimp.build_graph("wp_agent")
    assert not graph.chain_exists("wp_agent.executors", "wp_agent.policy", as_packages=True)
    # In its own process: import-linter's CLI calls logging.config.dictConfig, which disables every
    # logger that exists already (ours too) for the rest of the worker's tests.
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint_imports), "--config", str(ROOT / "pyproject.toml"), "--no-cache", "--no-logo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _effect_stacks(trace: RequestTrace) -> dict[str, list[list[str]]]:
    """The first-party files on the stack (outermost first) at each of the request's effects."""
    stacks: dict[str, list[list[str]]] = {}
    for effect in trace.effects:
        kind = _walk_effect(effect.kind, effect.tables)
        if kind is not None:
            stacks.setdefault(kind, []).append(list(reversed(list(dict.fromkeys(effect.stack)))))
    return stacks


def _walk_effect(kind: str, tables: frozenset[str]) -> str | None:
    if kind == "ssh":
        return "ssh"
    if kind == "aws:StartExecution":
        return "workflow"
    if aws_fakes.TABLES["audit"] in tables:
        return "audit"
    if aws_fakes.TABLES["sessions"] in tables and kind in {
        "aws:PutItem",
        "aws:BatchWriteItem",
        "aws:UpdateItem",
    }:
        return "session"
    return None
