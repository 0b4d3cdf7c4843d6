"""The operation history over the API (moto): a user's sessions newest first with filters and an opaque
cursor, one run from its audit records, and a target's audit trail for its owners and admins — each a
Query on an index (never a Scan), every foreign or edited cursor a 400."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import urlencode

import pytest
from botocore.client import BaseClient

import functions.api.handler as api
from tests.fakes.apigw import ADMIN_ROLE_ARN, LambdaContextStub, call, rest_event
from tests.fakes.aws import TABLES
from tests.integration.test_api import env  # noqa: F401 - the fixture
from wp_agent.adapters.aws.audit_log import DynamoAuditLog
from wp_agent.adapters.aws.session_store import DynamoSessionStore
from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.lifecycle import new_session
from wp_agent.agent.session_state import SessionStatus
from wp_agent.models.agent_io import AgentInput

OWNER = "user-1"
RUN = "run_00000000000000000001"


def get(path: str, query: dict[str, Any] | None = None, **kwargs: Any) -> tuple[int, Any]:
    event = rest_event("GET", path, **kwargs)
    if query:
        multi = {k: v if isinstance(v, list) else [str(v)] for k, v in query.items()}
        event["multiValueQueryStringParameters"] = multi
        event["queryStringParameters"] = {k: v[-1] for k, v in multi.items()}
        event["path"] = f"{path}?{urlencode(multi, doseq=True)}".split("?")[0]
    return call(api.lambda_handler, event)


@pytest.fixture
def operations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every AWS operation the test's requests make (to prove no Scan)."""
    seen: list[str] = []
    real = getattr(BaseClient, "_make_api_call")  # noqa: B009 - botocore's private hook, not typed

    def recording(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        seen.append(operation)
        return real(client, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", recording)
    return seen


def save_session(
    session_id: str, *, user: str = OWNER, target: str = "site-a", started: str, status: str
) -> None:
    state = new_session(
        AgentInput(message=f"{session_id} の指示 password=hunter2hunter2"),
        session_id=session_id,
        user_id=user,
        target_id=target,
        run_id=f"run_{session_id[-20:]:0>20}",
    )
    state.started_at = started
    state.status = SessionStatus(status)
    DynamoSessionStore(TABLES["sessions"]).save(state)


@pytest.fixture
def sessions(env: dict[str, Any]) -> list[str]:  # noqa: F811 - the fixture
    made = []
    for n, (target, status) in enumerate(
        [
            ("site-a", "Completed"),
            ("site-b", "Failed"),
            ("site-a", "Failed"),
            ("site-a", "Completed"),
            ("site-b", "Completed"),
        ]
    ):
        session_id = f"ses_history_{n:02d}"
        save_session(session_id, target=target, started=f"2026-11-0{n + 1}T09:00:00.000Z", status=status)
        made.append(session_id)
    save_session("ses_someone_else", user="user-2", started="2026-11-09T09:00:00.000Z", status="Completed")
    return made


def test_sessions_newest_first_with_filters(sessions: list[str], operations: list[str]) -> None:
    status, page = get("/v1/sessions")
    assert status == 200, page
    assert [s["sessionId"] for s in page["sessions"]] == sessions[::-1]
    assert page.get("nextCursor") is None
    first = page["sessions"][0]
    assert first["targetId"] == "site-b"
    assert first["status"] == "Completed"
    assert "hunter2" not in first["title"]
    assert first["startedAt"] == "2026-11-05T09:00:00.000Z"

    status, only_a = get("/v1/sessions", {"targetId": "site-a"})
    assert [s["sessionId"] for s in only_a["sessions"]] == [sessions[3], sessions[2], sessions[0]]
    status, failed = get("/v1/sessions", {"status": "Failed"})
    assert [s["sessionId"] for s in failed["sessions"]] == [sessions[2], sessions[1]]
    status, both = get("/v1/sessions", {"status": "Failed", "targetId": "site-a"})
    assert [s["sessionId"] for s in both["sessions"]] == [sessions[2]]
    assert "Scan" not in operations
    assert "Query" in operations


def test_pages_follow_the_cursor_and_nothing_is_seen_twice(sessions: list[str]) -> None:
    seen: list[str] = []
    cursor = None
    for _ in range(5):
        status, page = get("/v1/sessions", {"limit": 2, **({"cursor": cursor} if cursor else {})})
        assert status == 200, page
        seen += [s["sessionId"] for s in page["sessions"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert seen == sessions[::-1]


def test_a_foreign_edited_or_made_up_cursor_is_a_400(sessions: list[str]) -> None:
    _, page = get("/v1/sessions", {"limit": 2})
    cursor = page["nextCursor"]
    assert get("/v1/sessions", {"limit": 2, "cursor": cursor})[0] == 200
    # another user's listing, another filter, another page size: not this query's cursor
    for query, user in (
        ({"limit": 2}, "user-2"),
        ({"limit": 2, "status": "Failed"}, OWNER),
        ({"limit": 3}, OWNER),
    ):
        status, body = get("/v1/sessions", {**query, "cursor": cursor}, user=user)
        assert (status, body["error"]["code"]) == (400, "INVALID_CURSOR"), (query, user)
    decoded = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    decoded["k"]["list_user"] = "user-2"  # the right digest, but a key in someone else's partition
    forged = base64.urlsafe_b64encode(json.dumps(decoded).encode()).decode().rstrip("=")
    for bad in (forged, "bm90LWEtY3Vyc29y", "x" * 3000, "!!"):
        status, body = get("/v1/sessions", {"limit": 2, "cursor": bad})
        assert status == 400, (bad, body)


def write(event: AuditEvent) -> None:
    DynamoAuditLog(TABLES["audit"]).append(event)


def record(kind: AuditEventType, at: str, *, session: str = "ses_history_00", **fields: Any) -> AuditEvent:
    event = AuditEvent(
        type=kind, timestamp=at, user_id=OWNER, session_id=session, target_id="site-a", run_id=RUN, **fields
    )
    write(event)
    return event


@pytest.fixture
def a_run(sessions: list[str]) -> str:
    command = {"command": "post delete 45", "category": "destructive", "rule": "destructive.delete"}
    record(AuditEventType.APPROVAL_REQUESTED, "2026-11-01T09:00:01.000Z", approval_id="apr_1", **command)
    record(AuditEventType.APPROVAL_APPROVED, "2026-11-01T09:00:02.000Z", approver=OWNER, **command)
    record(
        AuditEventType.COMMAND_EXECUTED,
        "2026-11-01T09:00:03.000Z",
        success=True,
        exit_code=0,
        duration_ms=120,
        reason="指示された投稿を削除",
        **command,
    )
    record(
        AuditEventType.RUN_SUMMARY,
        "2026-11-01T09:00:04.000Z",
        instruction="ID 45 の投稿を削除して",
        answer="削除しました。",
        status="completed",
    )
    return sessions[0]


def test_one_run_from_its_records(a_run: str) -> None:
    status, run = get(f"/v1/sessions/{a_run}/runs/{RUN}")
    assert status == 200, run
    assert (run["status"], run["instruction"], run["answer"]) == (
        "completed",
        "ID 45 の投稿を削除して",
        "削除しました。",
    )
    assert run["requestedBy"] == OWNER
    assert run["endedAt"] == "2026-11-01T09:00:04.000Z"
    (command,) = run["commands"]
    assert command["command"] == "post delete 45"
    assert command["origin"] == "model"
    assert (command["decision"], command["approver"], command["outcome"]) == (
        "destructive",
        OWNER,
        "succeeded",
    )
    assert (command["durationMs"], command["exitCode"], command["reason"]) == (120, 0, "指示された投稿を削除")
    assert command["undoAvailable"] is False  # the session holds no before-image for it


def test_the_agents_own_reads_are_marked(a_run: str) -> None:
    """A client lists what the model was asked for apart from the agent's own reads."""
    record(
        AuditEventType.COMMAND_EXECUTED,
        "2026-11-01T09:00:00.500Z",
        command="option get timezone_string",
        category="read",
        rule="read.option",
        success=True,
        exit_code=0,
        origin="system",
    )
    _, run = get(f"/v1/sessions/{a_run}/runs/{RUN}")
    assert [(c["command"], c["origin"]) for c in run["commands"]] == [
        ("option get timezone_string", "system"),
        ("post delete 45", "model"),
    ]


def test_a_run_is_only_its_requesters(a_run: str) -> None:
    status, body = get(f"/v1/sessions/{a_run}/runs/{RUN}", user="user-2")
    assert (status, body["error"]["code"]) == (404, "SESSION_NOT_FOUND")
    status, body = get(f"/v1/sessions/{a_run}/runs/run_99999999999999999999")
    assert (status, body["error"]["code"]) == (404, "RUN_NOT_FOUND")
    status, body = get("/v1/sessions/ses_unknown_1/runs/" + RUN)
    assert (status, body["error"]["code"]) == (404, "SESSION_NOT_FOUND")


def test_a_targets_activity_for_owners_and_admins(a_run: str, operations: list[str]) -> None:
    path = "/v1/targets/site-a/activity"
    status, page = get(path)
    assert status == 200, page
    types = [r["type"] for r in page["records"]]
    assert types == ["run_summary", "command_executed", "approval_approved", "approval_requested"]
    status, page = get(path, {"type": ["approval_requested", "approval_approved"]})
    assert [r["type"] for r in page["records"]] == ["approval_approved", "approval_requested"]
    status, page = get(path, {"from": "2026-11-01T09:00:02Z", "to": "2026-11-01T09:00:04Z"})
    assert [r["type"] for r in page["records"]] == ["command_executed", "approval_approved"]
    status, page = get(path, {"from": "2026-11-01T18:00:02+09:00", "to": "2026-11-01T18:00:04+09:00"})
    assert [r["type"] for r in page["records"]] == ["command_executed", "approval_approved"]
    assert "Scan" not in operations

    assert get(path, user="user-2")[0] == 404
    assert get(path, user=None)[0] == 401
    status, admin_view = get(path, user=None, caller_arn=ADMIN_ROLE_ARN)
    assert status == 200
    assert len(admin_view["records"]) == 4


def test_activity_pages_and_refusals(a_run: str) -> None:
    path = "/v1/targets/site-a/activity"
    status, first = get(path, {"limit": 3})
    assert len(first["records"]) == 3
    status, rest = get(path, {"limit": 3, "cursor": first["nextCursor"]})
    assert [r["type"] for r in rest["records"]] == ["approval_requested"]
    assert rest.get("nextCursor") is None
    status, body = get(path, {"limit": 3, "cursor": first["nextCursor"], "type": "run_summary"})
    assert (status, body["error"]["code"]) == (400, "INVALID_CURSOR")
    status, body = get(path, {"from": "2026-11-02T00:00:00Z", "to": "2026-11-01T00:00:00Z"})
    assert (status, body["error"]["code"]) == (400, "INVALID_TIME_RANGE")
    status, body = get(path, {"from": "2026-11-02T00:00:00"})  # no time zone
    assert (status, body["error"]["code"]) == (400, "VALIDATION_ERROR")
    status, body = get(path, {"type": "no_such_type"})
    assert (status, body["error"]["code"]) == (400, "VALIDATION_ERROR")


def test_activity_is_masked_on_the_way_out(sessions: list[str]) -> None:
    # A record written before a masking rule existed (stored as it was): masked when read.
    record(
        AuditEventType.COMMAND_EXECUTED,
        "2026-11-01T10:00:00.000Z",
        command="user update 2 --user_pass=hunter2hunter2",
        category="write",
        success=True,
        answer="APIキーは sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 です",
    )
    _, page = get("/v1/targets/site-a/activity")
    text = json.dumps(page, ensure_ascii=False)
    assert "hunter2hunter2" not in text
    assert "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789" not in text


def test_the_context_stub_is_the_lambdas() -> None:
    assert LambdaContextStub.function_name == "api"
