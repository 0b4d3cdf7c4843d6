"""The `api` handler with API Gateway events on moto: validation, ownership, conflicts, idempotency.

Every bad request must give a clear 4xx with a stable code — and change nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

import functions.api.handler as api
from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_tool_use
from tests.fakes.apigw import ADMIN_ROLE_ARN, LambdaContextStub, call, rest_event
from tests.fakes.aws import REGION, TABLES
from wp_agent.adapters.aws.registry import TargetRegistry
from wp_agent.adapters.aws.session_store import DynamoSessionStore
from wp_agent.agent.session_state import ApprovalItem, PendingApproval, SessionStatus
from wp_agent.models.agent_io import MAX_ITERATIONS_LIMIT, MAX_MESSAGE_CHARS
from wp_agent.models.target import Target

SECRET_ARN = "arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:wp-agent/targets/site-a-AbCdEf"


@pytest.fixture
def env(aws: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    sfn = boto3.client("stepfunctions", region_name=REGION)
    machine = sfn.create_state_machine(
        name="wp-agent-runs",
        definition=json.dumps({"StartAt": "Noop", "States": {"Noop": {"Type": "Pass", "End": True}}}),
        roleArn="arn:aws:iam::123456789012:role/sfn",
    )
    boto3.client("events", region_name=REGION).create_event_bus(Name="wp-agent")
    monkeypatch.setenv("WP_AGENT_STATE_MACHINE_ARN", machine["stateMachineArn"])
    monkeypatch.setenv("WP_AGENT_EVENT_BUS", "wp-agent")
    monkeypatch.setenv("WP_AGENT_ADMIN_PRINCIPALS", "arn:aws:sts::123456789012:assumed-role/ArgoAdmin/")
    api.runtime.reset()
    TargetRegistry(TABLES["registry"]).put(
        Target(
            target_id="site-a",
            host="203.0.113.5",
            secret_arn=SECRET_ARN,
            owners=["user-1"],
            multisite=True,
            network_admins=["user-1"],
        )
    )
    yield {"sfn": sfn, "machine": machine["stateMachineArn"]}
    api.runtime.reset()


def send(event: dict[str, Any]) -> tuple[int, Any]:
    return call(api.lambda_handler, event)


def message(session: str = "ses_abcdef12", body: Any = None, **kwargs: Any) -> tuple[int, Any]:
    return send(
        rest_event(
            "POST",
            f"/v1/sessions/{session}/messages",
            body=body if body is not None else {"message": "投稿一覧を見せて", "targetId": "site-a"},
            **kwargs,
        )
    )


def executions(env: dict[str, Any]) -> list[dict[str, Any]]:
    return env["sfn"].list_executions(stateMachineArn=env["machine"])["executions"]  # type: ignore[no-any-return]


def session_items() -> list[dict[str, Any]]:
    return list(boto3.resource("dynamodb", region_name=REGION).Table(TABLES["sessions"]).scan()["Items"])


def test_message_starts_a_run(env: dict[str, Any]) -> None:
    status, body = message()
    assert status == 202
    assert body["sessionId"] == "ses_abcdef12"
    assert body["statusUrl"] == "/v1/sessions/ses_abcdef12"
    assert body["status"] == "Planning"
    (execution,) = executions(env)
    assert execution["name"] == body["runId"]
    described = env["sfn"].describe_execution(executionArn=execution["executionArn"])
    assert json.loads(described["input"]) == {"sessionId": "ses_abcdef12", "runId": body["runId"]}  # ids only

    status, view = send(rest_event("GET", "/v1/sessions/ses_abcdef12"))
    assert status == 200
    assert view["status"] == "Planning"
    assert view["targetId"] == "site-a"


BAD_REQUESTS: list[tuple[str, dict[str, Any], int, str]] = [
    ("no user header", {"user": None}, 401, "USER_ID_REQUIRED"),
    ("bad user id", {"user": "user 1; drop"}, 400, "INVALID_USER_ID"),
    ("malformed JSON", {"raw_body": '{"message": '}, 400, "VALIDATION_ERROR"),
    ("empty message", {"body": {"message": "", "targetId": "site-a"}}, 400, "VALIDATION_ERROR"),
    ("whitespace message", {"body": {"message": "   ", "targetId": "site-a"}}, 400, "VALIDATION_ERROR"),
    ("too long message", {"body": {"message": "あ" * 8_001, "targetId": "site-a"}}, 400, "VALIDATION_ERROR"),
    (
        "unknown field",
        {"body": {"message": "x", "targetId": "site-a", "shell": "rm"}},
        400,
        "VALIDATION_ERROR",
    ),
    (
        "bad maxIterations",
        {"body": {"message": "x", "targetId": "site-a", "maxIterations": 0}},
        400,
        "VALIDATION_ERROR",
    ),
    ("no target", {"body": {"message": "x"}}, 400, "TARGET_REQUIRED"),
    ("unknown target", {"body": {"message": "x", "targetId": "site-z"}}, 404, "TARGET_NOT_FOUND"),
    ("someone else's target", {"user": "user-2"}, 404, "TARGET_NOT_FOUND"),
    (
        "oversized body",
        {"raw_body": json.dumps({"message": "x", "targetId": "site-a", "pad": "a" * 1_100_000})},
        413,
        "BODY_TOO_LARGE",
    ),
    ("bad session id", {"session": "bad!id%20x"}, 400, "INVALID_SESSION_ID"),
    ("path outside the API", {"session": "../etc"}, 404, "ROUTE_NOT_FOUND"),
    ("bad idempotency key", {"headers": {"Idempotency-Key": "ключ"}}, 400, "INVALID_IDEMPOTENCY_KEY"),
]


@pytest.mark.parametrize(("case", "kwargs", "status", "code"), BAD_REQUESTS, ids=[c[0] for c in BAD_REQUESTS])
def test_bad_requests_are_refused_and_change_nothing(
    env: dict[str, Any], case: str, kwargs: dict[str, Any], status: int, code: str
) -> None:
    session = kwargs.pop("session", "ses_abcdef12")
    got_status, body = message(session, **kwargs)
    assert (got_status, body["error"]["code"]) == (status, code), body
    assert body["error"]["message"]
    assert session_items() == []
    assert executions(env) == []


def test_validation_errors_name_the_fields(env: dict[str, Any]) -> None:
    _, body = message(body={"message": "", "targetId": "site-a", "maxIterations": 99})
    assert body["error"]["fields"] == ["maxIterations", "message"]


def test_validation_errors_name_each_rule_with_its_limit(env: dict[str, Any]) -> None:
    """What to send instead, for a person (the message) and a program (violations)."""
    _, body = message(body={"message": "あ" * 8_001, "targetId": "site-a", "maxIterations": 99, "extra": 1})
    error = body["error"]
    by_field = {v["field"]: v for v in error["violations"]}
    assert by_field["maxIterations"] | {"message": ""} == {
        "field": "maxIterations",
        "rule": "maximum",
        "limit": MAX_ITERATIONS_LIMIT,
        "message": "",
    }
    assert (by_field["message"]["rule"], by_field["message"]["limit"]) == ("maxLength", MAX_MESSAGE_CHARS)
    assert by_field["extra"]["rule"] == "unknownField"
    assert f"maxIterations（{MAX_ITERATIONS_LIMIT}以下にしてください）" in error["message"]
    assert f"message（{MAX_MESSAGE_CHARS}文字以内にしてください）" in error["message"]
    status, body = approve("apr_0123456789abcdef0123", decision="maybe")
    assert status == 400
    [violation] = body["error"]["violations"]
    assert (violation["field"], violation["rule"], violation["allowed"]) == (
        "decision",
        "enum",
        ["approve", "reject"],
    )
    assert "approve, reject のどれか" in body["error"]["message"]


def test_a_path_parameter_is_named_as_the_document_names_it(env: dict[str, Any]) -> None:
    status, body = send(rest_event("GET", "/v1/sessions/ab/runs/run_x"))
    assert status == 400, body
    assert body["error"]["fields"] == ["runId", "sessionId"]  # not session_id: one spelling everywhere


def test_a_broken_pattern_is_explained_with_the_documented_rule(env: dict[str, Any]) -> None:
    status, body = message(body={"message": "   ", "targetId": "Site_A"})
    assert (status, body["error"]["fields"]) == (400, ["message", "targetId"])
    assert "message（空白以外の文字を含めてください" in body["error"]["message"]
    assert "targetId（英小文字・数字・-" in body["error"]["message"]


def test_a_second_message_while_a_run_is_active_conflicts(env: dict[str, Any]) -> None:
    assert message()[0] == 202
    status, body = message(body={"message": "もう一つ", "targetId": "site-a"})
    assert (status, body["error"]["code"]) == (409, "SESSION_BUSY")
    assert len(executions(env)) == 1


def test_idempotency_key_returns_the_first_response(env: dict[str, Any]) -> None:
    headers = {"Idempotency-Key": "req-0001"}
    first = message(headers=headers)
    second = message(headers=headers)
    assert first == second
    assert len(executions(env)) == 1
    status, body = message(body={"message": "別の内容", "targetId": "site-a"}, headers=headers)
    assert (status, body["error"]["code"]) == (422, "IDEMPOTENCY_KEY_REUSED")


def test_a_replayed_answer_says_so(env: dict[str, Any]) -> None:
    event = rest_event(
        "POST",
        "/v1/sessions/ses_abcdef12/messages",
        body={"message": "投稿一覧を見せて", "targetId": "site-a"},
        headers={"Idempotency-Key": "req-replay"},
    )
    first = api.lambda_handler(event, LambdaContextStub())
    again = api.lambda_handler(event, LambdaContextStub())
    assert first["body"] == again["body"]
    assert replayed(first) is None
    assert replayed(again) == "true"
    unkeyed = rest_event("POST", "/v1/sessions/ses_other001/messages", body=json.loads(event["body"]))
    assert replayed(api.lambda_handler(unkeyed, LambdaContextStub())) is None


def replayed(response: dict[str, Any]) -> str | None:
    """The response's Idempotent-Replayed header (a REST proxy answer lists headers either way)."""
    single = response.get("headers") or {}
    multi = response.get("multiValueHeaders") or {}
    value = single.get("Idempotent-Replayed") or (multi.get("Idempotent-Replayed") or [None])[0]
    return None if value is None else str(value)


def test_sessions_of_other_users_are_invisible(env: dict[str, Any]) -> None:
    message()
    for request in (
        rest_event("GET", "/v1/sessions/ses_abcdef12", user="user-2"),
        rest_event("POST", "/v1/sessions/ses_abcdef12/cancel", user="user-2"),
    ):
        status, body = send(request)
        assert (status, body["error"]["code"]) == (404, "SESSION_NOT_FOUND")
    assert send(rest_event("GET", "/v1/sessions/ses_unknown1"))[0] == 404


def _hold_for_approval(expires_at: str = "2099-01-01T00:00:00Z") -> str:
    store = DynamoSessionStore(TABLES["sessions"])
    state = store.load("ses_abcdef12")
    assert state is not None
    state.status = SessionStatus.AWAITING_APPROVAL
    state.pending_approval = PendingApproval(
        approval_id="apr_0123456789abcdef0123",
        requested_by="user-1",
        requested_at="2026-11-22T00:00:00Z",
        expires_at=expires_at,
        items=[
            ApprovalItem(
                tool_use_id="toolu_1",
                command="post delete 45",
                summary_ja="投稿（ID: 45）をゴミ箱へ移動します",
                impact_ja="復元できます",
                rule="confirm.post.delete",
            )
        ],
    )
    store.save(state)
    return state.pending_approval.approval_id


def approve(approval: str, user: str = "user-1", decision: str = "approve", **kwargs: Any) -> tuple[int, Any]:
    return send(
        rest_event(
            "POST",
            f"/v1/sessions/ses_abcdef12/approvals/{approval}",
            body={"decision": decision, "comment": "OK"},
            user=user,
            **kwargs,
        )
    )


def test_approval_rules(env: dict[str, Any]) -> None:
    message()
    approval = _hold_for_approval()
    status, view = send(rest_event("GET", "/v1/sessions/ses_abcdef12"))
    assert view["pendingApproval"]["commands"] == [
        {
            "command": "post delete 45",
            "summary": "投稿（ID: 45）をゴミ箱へ移動します",
            "impact": "復元できます",
        }
    ]
    assert "taskToken" not in json.dumps(view)

    # Someone else's approval is as unknown as their session (GET answers 404 too).
    assert approve(approval, user="user-2")[:1] == (404,)
    assert approve(approval, user="user-2")[1]["error"]["code"] == "SESSION_NOT_FOUND"
    assert approve("apr_ffffffffffffffffffff")[1]["error"]["code"] == "APPROVAL_NOT_FOUND"
    assert (
        send(
            rest_event("POST", f"/v1/sessions/ses_abcdef12/approvals/{approval}", body={"decision": "maybe"})
        )[1]["error"]["code"]
        == "VALIDATION_ERROR"
    )
    status, body = approve(approval, headers={"Idempotency-Key": "approve-1"})
    assert status == 200
    assert body["decision"] == "approve"
    assert approve(approval, headers={"Idempotency-Key": "approve-1"}) == (
        status,
        body,
    )  # a retry is answered again
    for repeat in ("approve", "reject"):  # a duplicate without the key, or a change of mind
        status, body = approve(approval, decision=repeat)
        assert (status, body["error"]["code"]) == (409, "APPROVAL_ALREADY_DECIDED")


def test_expired_approval_conflicts(env: dict[str, Any]) -> None:
    message()
    approval = _hold_for_approval(expires_at="2020-01-01T00:00:00Z")
    status, body = approve(approval)
    assert (status, body["error"]["code"]) == (409, "APPROVAL_EXPIRED")


def test_cancel(env: dict[str, Any]) -> None:
    message()
    status, view = send(rest_event("POST", "/v1/sessions/ses_abcdef12/cancel"))
    assert status == 200
    assert view["status"] == "Cancelled"
    (execution,) = executions(env)
    assert execution["status"] == "ABORTED"
    status, body = send(rest_event("POST", "/v1/sessions/ses_abcdef12/cancel"))
    assert (status, body["error"]["code"]) == (409, "RUN_NOT_ACTIVE")
    # A finished session takes a follow-up message as a new run.
    assert message(body={"message": "続けて"})[0] == 202


def test_multisite_rules(env: dict[str, Any]) -> None:
    TargetRegistry(TABLES["registry"]).put(
        Target(
            target_id="site-b",
            host="203.0.113.6",
            secret_arn=SECRET_ARN.replace("site-a", "site-b"),
            owners=["user-1", "user-2"],
            multisite=True,
            network_admins=["user-1"],
        )
    )
    status, body = message(
        body={"message": "x", "targetId": "site-b", "multisite": {"networkWide": True}}, user="user-2"
    )
    assert (status, body["error"]["code"]) == (403, "NETWORK_ADMIN_REQUIRED")
    status, body = message(
        body={
            "message": "x",
            "targetId": "site-b",
            "multisite": {"siteId": 2, "siteUrl": "https://x.test/en/"},
        }
    )
    assert status == 400


def register(body: dict[str, Any], caller: str = ADMIN_ROLE_ARN) -> tuple[int, Any]:
    return send(rest_event("POST", "/v1/targets", body=body, caller_arn=caller, user=None))


def test_targets_are_registered_by_administrators_only(env: dict[str, Any]) -> None:
    new = {
        "targetId": "site-c",
        "host": "198.51.100.7",
        "secretArn": SECRET_ARN.replace("site-a", "site-c"),
        "owners": ["user-3"],
    }
    status, body = register(new, caller="arn:aws:sts::123456789012:assumed-role/ArgoBackend/x")
    assert (status, body["error"]["code"]) == (403, "ADMIN_REQUIRED")
    status, body = register(new)
    assert status == 201
    assert body["createdBy"] == ADMIN_ROLE_ARN
    assert register(new)[1]["error"]["code"] == "TARGET_EXISTS"
    outside = new | {
        "targetId": "site-d",
        "secretArn": "arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:prod/db-password",
    }
    assert register(outside)[1]["error"]["code"] == "SECRET_OUTSIDE_PREFIX"
    assert register(new | {"targetId": "Site D!"})[0] == 400

    status, listing = send(rest_event("GET", "/v1/targets", user="user-3"))
    assert [t["targetId"] for t in listing["targets"]] == ["site-c"]
    assert send(rest_event("GET", "/v1/targets/site-a", user="user-3"))[0] == 404
    assert send(rest_event("GET", "/v1/targets/site-c", user="user-3"))[0] == 200


def test_openapi_document(env: dict[str, Any]) -> None:
    status, document = send(rest_event("GET", "/v1/openapi.json"))
    assert status == 200
    assert "/v1/sessions/{sessionId}/messages" in document["paths"]
    assert "SessionMessageRequest" in json.dumps(document)


# -- schedules through the API ------------------------------------------------------------------


@pytest.fixture
def schedule_env(
    env: dict[str, Any], monkeypatch: pytest.MonkeyPatch, scripted_anthropic: ScriptedAnthropicServer
) -> dict[str, Any]:
    boto3.client("scheduler", region_name=REGION).create_schedule_group(Name="wp-agent")
    monkeypatch.setenv("WP_AGENT_SCHEDULER_ROLE_ARN", "arn:aws:iam::123456789012:role/wp-agent-scheduler")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", scripted_anthropic.base_url)
    api.runtime.reset()
    return env | {"model": scripted_anthropic}


WEEKLY = {
    "expression": "cron(0 9 ? * MON *)",
    "targetId": "site-a",
    "agentInput": {"message": "下書きを一覧して"},
}


def test_schedules_are_created_listed_and_deleted_per_owner(schedule_env: dict[str, Any]) -> None:
    status, created = send(rest_event("POST", "/v1/schedules", body=WEEKLY))
    assert status == 201, created
    schedule_id = created["scheduleId"]
    assert created["timezone"] == "Asia/Tokyo"
    assert len(created["nextRuns"]) == 5
    assert all(run.endswith("+09:00") and "T09:00:00" in run for run in created["nextRuns"])
    stored = boto3.client("scheduler", region_name=REGION).get_schedule(
        Name=schedule_id, GroupName="wp-agent"
    )
    assert stored["Target"]["Arn"] == schedule_env["machine"]
    assert stored["ScheduleExpressionTimezone"] == "Asia/Tokyo"

    assert [s["scheduleId"] for s in send(rest_event("GET", "/v1/schedules"))[1]["schedules"]] == [
        schedule_id
    ]
    assert send(rest_event("GET", "/v1/schedules", user="user-2"))[1]["schedules"] == []
    assert send(rest_event("GET", f"/v1/schedules/{schedule_id}", user="user-2"))[0] == 404
    assert send(rest_event("DELETE", f"/v1/schedules/{schedule_id}", user="user-2"))[0] == 404
    assert send(rest_event("DELETE", f"/v1/schedules/{schedule_id}"))[0] == 204
    assert send(rest_event("GET", f"/v1/schedules/{schedule_id}"))[0] == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (WEEKLY | {"expression": "cron(0 9 * * MON *)"}, "expression"),
        (WEEKLY | {"expression": "rate(1 minute)"}, "expression"),
        (WEEKLY | {"timezone": "Mars/Olympus"}, "timezone"),
        (WEEKLY | {"agentInput": {"message": ""}}, "agentInput.message"),
    ],
)
def test_bad_schedules_are_refused_with_the_field(
    schedule_env: dict[str, Any], body: dict[str, Any], field: str
) -> None:
    status, answer = send(rest_event("POST", "/v1/schedules", body=body))
    assert status == 400, answer
    assert field in answer["error"]["fields"]
    assert (
        boto3.client("scheduler", region_name=REGION).list_schedules(GroupName="wp-agent")["Schedules"] == []
    )


def test_proposal_from_japanese_is_shown_before_anything_is_created(schedule_env: dict[str, Any]) -> None:
    model: ScriptedAnthropicServer = schedule_env["model"]
    model.enqueue(
        reply_tool_use(
            [
                (
                    "propose_schedule",
                    {
                        "name": "週次の下書き確認",
                        "expression": "cron(0 9 ? * MON *)",
                        "timezone": "Asia/Tokyo",
                        "instruction": "下書きを一覧して",
                    },
                )
            ]
        )
    )
    status, proposal = send(
        rest_event(
            "POST",
            "/v1/schedules/proposals",
            body={"text": "毎週月曜9時に下書きを一覧して", "targetId": "site-a"},
        )
    )
    assert status == 200, proposal
    assert proposal["status"] == "PROPOSED"
    assert "月曜" in proposal["proposal"]["summaryJa"]
    assert len(proposal["proposal"]["nextRuns"]) == 5
    assert (
        boto3.client("scheduler", region_name=REGION).list_schedules(GroupName="wp-agent")["Schedules"] == []
    )
    status, created = send(rest_event("POST", "/v1/schedules", body=proposal["createRequest"]))
    assert status == 201, created


def _nested(depth: int) -> str:
    return '{"message": "x", "targetId": "site-a", "conversationHistory": ' + "[" * depth + "]" * depth + "}"


CLIENT_INPUT_THAT_ONCE_ANSWERED_500: list[tuple[str, dict[str, Any], int, str]] = [
    ("JSON nested 50,000 deep", {"raw_body": _nested(50_000)}, 400, "BODY_TOO_DEEP"),
    ("JSON nested 40 deep", {"raw_body": _nested(40)}, 400, "BODY_TOO_DEEP"),
    (
        "a lone surrogate in the history",
        {
            "raw_body": '{"message": "x", "targetId": "site-a", '
            '"conversationHistory": [{"role": "user", "content": "\\udfff"}]}'
        },
        400,
        "VALIDATION_ERROR",
    ),
    (
        "a lone surrogate in the message",
        {"raw_body": '{"message": "\\ud800", "targetId": "site-a"}'},
        400,
        "VALIDATION_ERROR",
    ),
    ("text/plain", {"headers": {"Content-Type": "text/plain"}}, 415, "UNSUPPORTED_MEDIA_TYPE"),
    (
        "multipart without a boundary",
        {"headers": {"Content-Type": "multipart/form-data"}},
        415,
        "UNSUPPORTED_MEDIA_TYPE",
    ),
    (
        "a latin-1 charset",
        {"headers": {"Content-Type": "application/json; charset=latin-1"}},
        415,
        "UNSUPPORTED_MEDIA_TYPE",
    ),
    (
        "a body wrapped in an array",
        {"raw_body": '[{"message": "x", "targetId": "site-a"}]'},
        400,
        "VALIDATION_ERROR",
    ),
    (
        "maxIterations: true",
        {"body": {"message": "x", "targetId": "site-a", "maxIterations": True}},
        400,
        "VALIDATION_ERROR",
    ),
    (
        "maxIterations: 5.5",
        {"body": {"message": "x", "targetId": "site-a", "maxIterations": 5.5}},
        400,
        "VALIDATION_ERROR",
    ),
    (
        "maxIterations: '5'",
        {"body": {"message": "x", "targetId": "site-a", "maxIterations": "5"}},
        400,
        "VALIDATION_ERROR",
    ),
    (
        'skipDestructiveConfirmation: "yes"',
        {"body": {"message": "x", "targetId": "site-a", "skipDestructiveConfirmation": "yes"}},
        400,
        "VALIDATION_ERROR",
    ),
    (
        "networkWide: 1",
        {"body": {"message": "x", "targetId": "site-a", "multisite": {"networkWide": 1}}},
        400,
        "VALIDATION_ERROR",
    ),
]


@pytest.mark.parametrize(
    ("case", "kwargs", "status", "code"),
    CLIENT_INPUT_THAT_ONCE_ANSWERED_500,
    ids=[c[0] for c in CLIENT_INPUT_THAT_ONCE_ANSWERED_500],
)
def test_client_input_is_refused_in_our_shape_never_a_500(
    env: dict[str, Any], case: str, kwargs: dict[str, Any], status: int, code: str
) -> None:
    got_status, body = message(**kwargs)
    assert (got_status, body["error"]["code"]) == (status, code), body
    assert body["error"]["message"]
    assert session_items() == []
    assert executions(env) == []


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/v1/sessions/ses_abcdef12", "GET"),
        ("DELETE", "/v1/sessions/ses_abcdef12/messages", "POST"),
        ("PATCH", "/v1/schedules/sch_0123456789abcdef0123", "DELETE, GET"),
    ],
)
def test_an_undeclared_method_is_405_with_the_allowed_ones(
    env: dict[str, Any], method: str, path: str, allowed: str
) -> None:
    response = api.lambda_handler(rest_event(method, path), LambdaContextStub())
    assert response["statusCode"] == 405
    assert json.loads(response["body"])["error"]["code"] == "METHOD_NOT_ALLOWED"
    headers = response.get("headers") or {k: v[0] for k, v in response["multiValueHeaders"].items()}
    assert headers["Allow"] == allowed


def test_every_answer_names_its_request(env: dict[str, Any]) -> None:
    for event in (
        rest_event("GET", "/v1/sessions/ses_unknown1"),  # an error answer
        rest_event(
            "POST", "/v1/sessions/ses_abcdef12/messages", body={"message": "投稿一覧", "targetId": "site-a"}
        ),
        rest_event(
            "POST", "/v1/sessions/ses_abcdef12/messages", raw_body="{not json"
        ),  # refused before routing
    ):
        answer = api.lambda_handler(event, LambdaContextStub())
        headers = {
            **(answer.get("headers") or {}),
            **{k: v[0] for k, v in (answer.get("multiValueHeaders") or {}).items()},
        }
        assert headers["X-Request-Id"] == event["requestContext"]["requestId"], answer
