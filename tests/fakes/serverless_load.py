"""A load pass on the serverless stack: sessions from several users over several targets, each asking
to delete its own post; every approval is double-clicked, one user is at the rate limit. Counts what
must hold under load: 5xx answers, commands run twice, records missing or doubled, leases left."""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import boto3

from tests.fakes import aws as aws_fakes
from tests.fakes.anthropic_server import RecordedRequest, StepLike, reply_text, reply_tool_use
from tests.fakes.serverless import OWNER, TARGET_ID, ServerlessStack
from wp_agent.adapters.aws.rate_limiter import WINDOW_SECONDS
from wp_agent.adapters.aws.registry import TargetRegistry

_ASKED = re.compile(r"ID (\d+) の投稿を削除して")


@dataclass
class LoadFigures:
    sessions: int
    completed: int = 0
    refused_runs: int = 0
    answers_5xx: int = 0
    commands_run_twice: int = 0  # a delete with more than one command_executed, or its post gone
    executed_records_wrong: int = 0  # a delete that ran without exactly one command_executed
    decision_records_wrong: int = 0  # a decided approval without exactly one approval_* record
    refusals_not_audited_once: int = 0
    leases_left: int = 0
    problems: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [
            f"BENCH load_sessions_completed {self.completed}/{self.sessions - self.refused_runs} runs goal=all",
            f"BENCH load_runs_refused_at_rate_limit {self.refused_runs} runs goal=as_planned",
            f"BENCH load_5xx {self.answers_5xx} answers goal=0",
            f"BENCH load_commands_run_twice {self.commands_run_twice} commands goal=0",
            f"BENCH load_executed_records_missing_or_doubled {self.executed_records_wrong} commands goal=0",
            f"BENCH load_decision_records_missing_or_doubled {self.decision_records_wrong} approvals goal=0",
            f"BENCH load_refusals_not_audited_once {self.refusals_not_audited_once} refusals goal=0",
            f"BENCH load_slot_leases_left {self.leases_left} leases goal=0",
        ]


def _model_step(request: RecordedRequest) -> StepLike:
    """The model for every session at once: delete the post the instruction names, then say so."""
    last = request.messages[-1]
    content = last["content"]
    if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
        return reply_text("処理しました。")
    text = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)
    found = _ASKED.search(text)
    assert found is not None, text
    return reply_tool_use(
        [("wp_cli", {"command": f"post delete {found[1]}", "reason": "指示された投稿を削除"})]
    )


def _fill_quota(user_id: str, limit: int = 10, minutes: int = 60) -> None:
    """The user's quota used up for the next `minutes` (a 40-session pass outlasts five windows)."""
    table = boto3.resource("dynamodb", region_name=aws_fakes.REGION).Table(aws_fakes.TABLES["rate_limits"])
    window = int(time.time() // WINDOW_SECONDS)
    for w in range(window, window + minutes * 60 // WINDOW_SECONDS):
        table.put_item(Item={"pk": f"LIMIT#user#{user_id}", "sk": f"W#{w}", "count": limit})


def _leases_left() -> int:
    table = boto3.resource("dynamodb", region_name=aws_fakes.REGION).Table(aws_fakes.TABLES["rate_limits"])
    return sum(
        1 for item in table.scan()["Items"] if str(item["pk"]).startswith("SLOTS#")
    )  # released: deleted


def run_load(stack: ServerlessStack, *, sessions: int, users: int, targets: int) -> LoadFigures:
    """`sessions` runs at once; user n's sessions alternate over the targets; the last user is at the
    rate limit (its runs are refused on record); every other run's approval is clicked twice at once."""
    user_ids = [OWNER, *[f"user-{n}" for n in range(2, users + 1)]]
    registry = TargetRegistry(aws_fakes.TABLES["registry"])
    first = registry.get(TARGET_ID)
    assert first is not None
    target_ids = [TARGET_ID, *[f"site-{chr(ord('a') + n)}" for n in range(1, targets)]]
    for target_id in target_ids:  # every target is the rig's site, owned by every user
        registry.put(first.model_copy(update={"target_id": target_id, "owners": user_ids}), replace=True)
    limited = user_ids[-1] if users > 1 else None
    if limited is not None:
        _fill_quota(limited)
    posts: list[int] = []
    for n in range(sessions):
        done = stack.site.wp("post", "create", f"--post_title=負荷{n}", "--post_status=draft", "--porcelain")
        assert done.returncode == 0, done.stderr
        posts.append(int(done.stdout.strip()))
    stack.model.enqueue(*([_model_step] * (2 * sessions)))
    figures = LoadFigures(sessions)
    lock = threading.Lock()

    def answered(status: int, body: Any) -> None:
        if status >= 500:
            with lock:
                figures.answers_5xx += 1
                figures.problems.append(f"{status} {body}")

    def one(n: int) -> dict[str, Any]:
        user, target, post = user_ids[n % users], target_ids[(n // users) % targets], posts[n]
        session_id = f"ses_load_{n:04d}"
        status, body = stack.api(
            "POST",
            f"/v1/sessions/{session_id}/messages",
            body={"message": f"ID {post} の投稿を削除して", "targetId": target},
            user=user,
        )
        answered(status, body)
        # A run that did not start has nothing to wait for: its answer is the finding.
        assert status == 202, f"{session_id} ({user} on {target}): the start answered {status} {body}"
        view = stack.wait_for(session_id, "AwaitingApproval", "Completed", "Failed", timeout=240, user=user)
        if view["status"] == "AwaitingApproval":
            path = f"/v1/sessions/{session_id}/approvals/{view['pendingApproval']['approvalId']}"
            clicked = threading.Barrier(2)

            def click() -> None:
                clicked.wait(timeout=30)
                answered(*stack.api("POST", path, body={"decision": "approve"}, user=user))

            clicks = [threading.Thread(target=click) for _ in range(2)]
            for thread in clicks:
                thread.start()
            for thread in clicks:
                thread.join(timeout=120)
            view = stack.wait_for(session_id, "Completed", "Failed", timeout=240, user=user)
        return {"session": session_id, "user": user, "post": post, "view": view}

    with ThreadPoolExecutor(max_workers=min(sessions, 8)) as pool:
        runs = list(pool.map(one, range(sessions)))
    stack.settle()
    for run in runs:
        _check(stack, run, limited, figures)
    figures.leases_left = _leases_left()
    return figures


def _check(stack: ServerlessStack, run: dict[str, Any], limited: str | None, figures: LoadFigures) -> None:
    audit = stack.audit(run["session"])
    command = f"post delete {run['post']}"
    executed = [r for r in audit if r["type"] == "command_executed" and r.get("command") == command]
    blocked = [r for r in audit if r["type"] == "command_blocked"]
    decisions = [
        r for r in audit if r["type"] in {"approval_approved", "approval_rejected", "approval_expired"}
    ]
    status = stack.site.status_of(run["post"])
    if run["user"] == limited:
        figures.refused_runs += 1
        if len(blocked) != 1 or executed or status != "draft":
            figures.refusals_not_audited_once += 1
            figures.problems.append(f"{run['session']}: refusal {len(blocked)} records, post {status}")
        return
    if run["view"]["status"] == "Completed" and run["view"]["result"]["success"]:
        figures.completed += 1
    else:
        figures.problems.append(f"{run['session']}: {run['view']['status']} {run['view'].get('result')}")
    if len(executed) != 1:
        figures.executed_records_wrong += 1
        figures.problems.append(f"{run['session']}: {len(executed)} command_executed records")
    if len(executed) > 1 or status != "trash":  # a second delete of a trashed post deletes it for good
        figures.commands_run_twice += int(status is None or len(executed) > 1)
        figures.problems.append(f"{run['session']}: post {run['post']} is {status}")
    if len(decisions) != 1:
        figures.decision_records_wrong += 1
        figures.problems.append(f"{run['session']}: {len(decisions)} approval decision records")
