"""ScheduleService on moto: EventBridge Scheduler schedules + registry items, per owner, nothing half-made.

Also one proposal through the real anthropic SDK against the scripted Anthropic server.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import boto3
import pytest
from boto3.dynamodb.conditions import Attr
from botocore.exceptions import ClientError
from pydantic import ValidationError

from tests.fakes.agent_doubles import ModelStep, ScriptedModel
from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_text, reply_tool_use, tool_results
from tests.fakes.aws import REGION, TABLES
from wp_agent.adapters.aws.registry import TargetRegistry
from wp_agent.adapters.aws.schedule_store import ScheduleStore
from wp_agent.agent.model_client import AnthropicModelClient, ModelReply
from wp_agent.config import LambdaSettings
from wp_agent.errors import AgentErrorCode, ConfigurationError, WpAgentError
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.schedule import (
    ScheduleCreateRequest,
    ScheduledRunInput,
    ScheduleProposalRequest,
)
from wp_agent.models.target import Role, Target
from wp_agent.service import schedules as service_module
from wp_agent.service.api_errors import ApiError
from wp_agent.service.schedules import RETRY_POLICY, SCHEDULED_TIME_PLACEHOLDER, ScheduleService

STATE_MACHINE_ARN = "arn:aws:states:ap-northeast-1:123456789012:stateMachine:wp-agent-runs"
ROLE_ARN = "arn:aws:iam::123456789012:role/wp-agent-scheduler"
GROUP = "wp-agent"
NOW = datetime(2025, 1, 6, 9, 30, tzinfo=ZoneInfo("Asia/Tokyo"))
SECRET = "arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:wp-agent/targets/{}-AbCdEf"


class RecordingScheduler:
    """The moto scheduler client, recording calls; `fail_create` makes create_schedule raise (after
    creating the schedule when `answer_lost`), `fail_get` makes get_schedule raise."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.fail_create: Exception | None = None
        self.answer_lost = False
        self.fail_get: Exception | None = None

    def create_schedule(self, **kwargs: Any) -> Any:
        self.calls.append(("create_schedule", kwargs))
        if self.fail_create is not None:
            if self.answer_lost:
                self.real.create_schedule(**kwargs)
            raise self.fail_create
        return self.real.create_schedule(**kwargs)

    def get_schedule(self, **kwargs: Any) -> Any:
        self.calls.append(("get_schedule", kwargs))
        if self.fail_get is not None:
            raise self.fail_get
        try:
            return self.real.get_schedule(**kwargs)
        except KeyError:  # moto, for a group that does not exist; Scheduler answers this
            raise ClientError(
                {"Error": {"Code": "ResourceNotFoundException", "Message": "no group"}}, "GetSchedule"
            ) from None

    def delete_schedule(self, **kwargs: Any) -> Any:
        self.calls.append(("delete_schedule", kwargs))
        return self.real.delete_schedule(**kwargs)


@pytest.fixture
def scheduler(aws: None) -> RecordingScheduler:
    real = boto3.client("scheduler", region_name=REGION)
    real.create_schedule_group(Name=GROUP)
    registry = TargetRegistry(TABLES["registry"])
    registry.put(
        Target(target_id="blog-a", host="203.0.113.5", secret_arn=SECRET.format("blog-a"), owners=["alice"])
    )
    registry.put(
        Target(target_id="blog-b", host="203.0.113.6", secret_arn=SECRET.format("blog-b"), owners=["bob"])
    )
    registry.put(
        Target(
            target_id="network",
            host="203.0.113.7",
            secret_arn=SECRET.format("network"),
            owners=["alice"],
            multisite=True,
        )
    )
    return RecordingScheduler(real)


def settings(**overrides: Any) -> LambdaSettings:
    values: dict[str, Any] = {
        "wp_agent_registry_table": TABLES["registry"],
        "wp_agent_state_machine_arn": STATE_MACHINE_ARN,
        "wp_agent_scheduler_role_arn": ROLE_ARN,
    }
    return LambdaSettings(**(values | overrides))


@pytest.fixture
def service(scheduler: RecordingScheduler) -> ScheduleService:
    return ScheduleService(settings(), scheduler=scheduler, clock=lambda: NOW)


def request(**overrides: Any) -> ScheduleCreateRequest:
    body: dict[str, Any] = {
        "name": "毎週月曜の下書き一覧",
        "expression": "cron(0 9 ? * MON *)",
        "targetId": "blog-a",
        "agentInput": {"message": "下書きを一覧して"},
    }
    return ScheduleCreateRequest.model_validate(body | overrides)


def registry_schedule_items() -> list[dict[str, Any]]:
    table = boto3.resource("dynamodb", region_name=REGION).Table(TABLES["registry"])
    items: list[dict[str, Any]] = table.scan(FilterExpression=Attr("sk").begins_with("SCHEDULE"))["Items"]
    return items


def scheduler_names(scheduler: RecordingScheduler) -> list[str]:
    return [s["Name"] for s in scheduler.real.list_schedules(GroupName=GROUP)["Schedules"]]


# --- create ----------------------------------------------------------------------------------------


def test_create_stores_the_schedule_in_scheduler(
    service: ScheduleService, scheduler: RecordingScheduler
) -> None:
    view = service.create("alice", request())
    stored = scheduler.real.get_schedule(Name=view.schedule_id, GroupName=GROUP)
    assert stored["GroupName"] == GROUP
    assert stored["ScheduleExpression"] == "cron(0 9 ? * MON *)"
    assert stored["ScheduleExpressionTimezone"] == "Asia/Tokyo"
    assert stored["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert stored["State"] == "ENABLED"
    assert stored["ActionAfterCompletion"] == "NONE"
    target = stored["Target"]
    assert target["Arn"] == STATE_MACHINE_ARN
    assert target["RoleArn"] == ROLE_ARN
    assert target["RetryPolicy"] == RETRY_POLICY
    assert json.loads(target["Input"]) == {
        "scheduleId": view.schedule_id,
        "ownerId": "alice",
        "targetId": "blog-a",
        "agentInput": {"message": "下書きを一覧して", "skipDestructiveConfirmation": False},
        "scheduledTime": "<aws.scheduler.scheduled-time>",
    }


def test_the_exact_create_schedule_request(service: ScheduleService, scheduler: RecordingScheduler) -> None:
    view = service.create("alice", request())
    [(operation, arguments)] = scheduler.calls
    assert operation == "create_schedule"
    assert arguments == {
        "Name": view.schedule_id,
        "GroupName": "wp-agent",
        "Description": "wp-agent scheduled run: 毎週月曜の下書き一覧",
        "ScheduleExpression": "cron(0 9 ? * MON *)",
        "ScheduleExpressionTimezone": "Asia/Tokyo",
        "FlexibleTimeWindow": {"Mode": "OFF"},
        "State": "ENABLED",
        "ActionAfterCompletion": "NONE",
        "Target": {
            "Arn": STATE_MACHINE_ARN,
            "RoleArn": ROLE_ARN,
            "Input": arguments["Target"]["Input"],
            "RetryPolicy": {"MaximumEventAgeInSeconds": 3600, "MaximumRetryAttempts": 3},
        },
        "ClientToken": view.schedule_id,
    }


def test_the_input_is_what_the_workflow_consumes(
    service: ScheduleService, scheduler: RecordingScheduler
) -> None:
    view = service.create("alice", request())
    template = scheduler.calls[0][1]["Target"]["Input"]
    assert SCHEDULED_TIME_PLACEHOLDER in template
    # Scheduler substitutes the firing time; the workflow's start task validates this model.
    fired = ScheduledRunInput.model_validate_json(
        template.replace(SCHEDULED_TIME_PLACEHOLDER, "2025-01-13T00:00:00Z")
    )
    assert fired.schedule_id == view.schedule_id
    assert fired.owner_id == "alice"
    assert fired.agent_input.message == "下書きを一覧して"
    assert fired.session_id() == f"{view.schedule_id}-20250113000000"


def test_the_view(service: ScheduleService) -> None:
    view = service.create("alice", request(timezone="Asia/Tokyo"))
    assert view.schedule_id.startswith("sch_")
    assert len(view.schedule_id) == 24
    assert view.name == "毎週月曜の下書き一覧"
    assert view.target_id == "blog-a"
    assert view.summary_ja == "毎週月曜 9:00（日本時間）に『下書きを一覧して』を実行します"
    assert view.next_runs[:2] == ["2025-01-13T09:00:00+09:00", "2025-01-20T09:00:00+09:00"]
    assert len(view.next_runs) == 5
    body = view.to_json_dict()
    assert {
        "scheduleId",
        "name",
        "expression",
        "timezone",
        "targetId",
        "agentInput",
        "summaryJa",
        "nextRuns",
        "createdAt",
    } <= set(body)


def test_registry_items(service: ScheduleService) -> None:
    view = service.create("alice", request())
    items = {item["pk"]: item for item in registry_schedule_items()}
    assert set(items) == {f"SCHEDULE#{view.schedule_id}", "OWNER#alice"}
    by_id = items[f"SCHEDULE#{view.schedule_id}"]
    assert by_id["sk"] == "SCHEDULE"
    assert items["OWNER#alice"]["sk"] == f"SCHEDULE#{view.schedule_id}"
    for item in items.values():
        assert item["schedule_id"] == view.schedule_id
        assert item["owner_id"] == "alice"
        assert item["target_id"] == "blog-a"
        assert item["name"] == "毎週月曜の下書き一覧"
        assert item["expression"] == "cron(0 9 ? * MON *)"
        assert item["timezone"] == "Asia/Tokyo"
        assert json.loads(item["agent_input"]) == {
            "message": "下書きを一覧して",
            "skipDestructiveConfirmation": False,
        }
        assert item["created_at"] == view.created_at
    # Targets are still listed as before: schedule items do not look like targets.
    assert [t.target_id for t in TargetRegistry(TABLES["registry"]).list()] == ["blog-a", "blog-b", "network"]


def test_at_schedules_delete_themselves_after_running(
    service: ScheduleService, scheduler: RecordingScheduler
) -> None:
    view = service.create("alice", request(expression="at(2025-01-07T09:00:00)"))
    stored = scheduler.real.get_schedule(Name=view.schedule_id, GroupName=GROUP)
    assert stored["ActionAfterCompletion"] == "DELETE"
    assert view.next_runs == ["2025-01-07T09:00:00+09:00"]


def test_a_dst_zone_and_a_normalised_expression(
    service: ScheduleService, scheduler: RecordingScheduler
) -> None:
    view = service.create("alice", request(expression=" cron(30 2 * 3 ? 2025) ", timezone="America/New_York"))
    stored = scheduler.real.get_schedule(Name=view.schedule_id, GroupName=GROUP)
    assert stored["ScheduleExpression"] == "cron(30 2 * 3 ? 2025)"
    assert stored["ScheduleExpressionTimezone"] == "America/New_York"
    assert "2025-03-09T02:30:00-04:00" not in view.next_runs  # does not exist: skipped


def test_the_name_defaults_to_the_instruction(service: ScheduleService) -> None:
    view = service.create("alice", request(name=None, agentInput={"message": "毎回 " + "あ" * 60}))
    assert view.name == ("毎回 " + "あ" * 60)[:39] + "…"


# --- validation: 400 with field names, and nothing created -----------------------------------------


@pytest.mark.parametrize(
    ("overrides", "status", "code", "fields"),
    [
        ({"expression": "cron(0 9 * * MON *)"}, 400, "INVALID_SCHEDULE_EXPRESSION", ["expression"]),
        ({"expression": "at(2024-01-01T09:00:00)"}, 400, "INVALID_SCHEDULE_EXPRESSION", ["expression"]),
        ({"targetId": "blog-b"}, 404, "TARGET_NOT_FOUND", None),  # Bob's
        ({"targetId": "missing"}, 404, "TARGET_NOT_FOUND", None),
        (
            {"agentInput": {"message": "x", "multisite": {"siteId": 2}}},
            400,
            "NOT_MULTISITE",
            ["agentInput.multisite"],
        ),
        (
            {"targetId": "network", "agentInput": {"message": "x", "multisite": {"networkWide": True}}},
            403,
            "NETWORK_ADMIN_REQUIRED",
            ["agentInput.multisite.networkWide"],
        ),
        (
            {
                "agentInput": {
                    "message": "x",
                    "conversationHistory": [{"role": "user", "content": "あ" * 8000}] * 3,
                }
            },
            400,
            "AGENT_INPUT_TOO_LARGE",
            ["agentInput"],
        ),
    ],
)
def test_refused_requests_create_nothing(
    service: ScheduleService,
    scheduler: RecordingScheduler,
    overrides: dict[str, Any],
    status: int,
    code: str,
    fields: list[str] | None,
) -> None:
    with pytest.raises(ApiError) as caught:
        service.create("alice", request(**overrides))
    assert (caught.value.status, caught.value.code, caught.value.fields) == (status, code, fields)
    assert caught.value.message_ja
    assert scheduler.calls == []
    assert registry_schedule_items() == []


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("expression", "rate(5 minutes)", "INVALID_SCHEDULE_EXPRESSION"),
        ("expression", "rate(99999999999999999999 days)", "INVALID_SCHEDULE_EXPRESSION"),  # once a 500
        ("timezone", "Tokyo", "INVALID_TIMEZONE"),
    ],
)
def test_what_the_schema_refuses_the_service_refuses_too(
    service: ScheduleService, field: str, value: str, code: str
) -> None:
    with pytest.raises(ValidationError) as refused:  # the request body (the published schema)
        request(**{field: value})
    assert [error["loc"] for error in refused.value.errors()] == [(field,)]
    with pytest.raises(ApiError) as caught:  # and the service on its own (a proposal, a stored record)
        service.create("alice", request().model_copy(update={field: value}))
    assert (caught.value.status, caught.value.code, caught.value.fields) == (400, code, [field])


def test_an_invalid_cron_field_is_named_in_the_message(service: ScheduleService) -> None:
    with pytest.raises(ApiError) as caught:
        service.create("alice", request(expression="cron(0 25 ? * MON *)"))
    assert "時（hours）" in caught.value.message_ja


def test_the_per_owner_limit(service: ScheduleService, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service_module, "MAX_SCHEDULES_PER_OWNER", 2)
    service.create("alice", request())
    service.create("alice", request())
    with pytest.raises(ApiError) as caught:
        service.create("alice", request())
    assert (caught.value.status, caught.value.code) == (409, "SCHEDULE_LIMIT_REACHED")
    service.create("bob", request(targetId="blog-b"))  # per owner


def test_missing_deployment_settings_fail_closed(scheduler: RecordingScheduler) -> None:
    service = ScheduleService(
        settings(wp_agent_scheduler_role_arn=None), scheduler=scheduler, clock=lambda: NOW
    )
    with pytest.raises(ConfigurationError) as caught:
        service.create("alice", request())
    assert caught.value.setting == "WP_AGENT_SCHEDULER_ROLE_ARN"
    assert registry_schedule_items() == []


# --- nothing half-created --------------------------------------------------------------------------


def client_error(code: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "internal detail"}}, "CreateSchedule")


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (client_error("InternalServerException"), 503, "SCHEDULER_UNAVAILABLE"),
        (client_error("ThrottlingException"), 503, "SCHEDULER_UNAVAILABLE"),
        (client_error("ValidationException"), 400, "SCHEDULE_REJECTED"),
        (TimeoutError("connect timeout"), 503, "SCHEDULER_UNAVAILABLE"),
    ],
)
def test_a_scheduler_failure_leaves_no_registry_item(
    service: ScheduleService, scheduler: RecordingScheduler, error: Exception, status: int, code: str
) -> None:
    scheduler.fail_create = error
    with pytest.raises(ApiError) as caught:
        service.create("alice", request())
    assert (caught.value.status, caught.value.code) == (status, code)
    assert "internal detail" not in caught.value.message_ja
    assert registry_schedule_items() == []
    assert service.list("alice").schedules == []
    assert scheduler_names(scheduler) == []


def test_a_missing_schedule_group_is_a_configuration_error(scheduler: RecordingScheduler) -> None:
    # What Scheduler answers for an unknown group (moto raises a bare KeyError there instead).
    scheduler.fail_create = client_error("ResourceNotFoundException")
    service = ScheduleService(
        settings(wp_agent_schedule_group="not-deployed"), scheduler=scheduler, clock=lambda: NOW
    )
    with pytest.raises(ConfigurationError) as caught:
        service.create("alice", request())
    assert caught.value.setting == "WP_AGENT_SCHEDULE_GROUP"
    assert scheduler.calls[0][1]["GroupName"] == "not-deployed"
    assert registry_schedule_items() == []


def test_a_registry_failure_creates_no_schedule(
    service: ScheduleService, scheduler: RecordingScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_put(self: Any, record: Any) -> None:
        raise client_error("ProvisionedThroughputExceededException")

    monkeypatch.setattr(ScheduleStore, "put", broken_put)
    with pytest.raises(ApiError) as caught:
        service.create("alice", request())
    assert (caught.value.status, caught.value.code) == (503, "SCHEDULE_STORE_UNAVAILABLE")
    assert scheduler.calls == []
    assert scheduler_names(scheduler) == []


# --- a lost answer: the same Idempotency-Key again ----------------------------------------------------


def test_a_create_whose_answer_was_lost_is_the_schedule(
    service: ScheduleService, scheduler: RecordingScheduler
) -> None:
    scheduler.fail_create, scheduler.answer_lost = TimeoutError("read timeout"), True
    view = service.create("alice", request(), idempotency_key="k-lost")
    assert scheduler_names(scheduler) == [view.schedule_id]  # found by name after the timeout
    assert len(registry_schedule_items()) == 2


def test_an_unknown_outcome_keeps_the_registry_items_and_the_resend_completes_it(
    service: ScheduleService, scheduler: RecordingScheduler
) -> None:
    scheduler.fail_create = scheduler.fail_get = TimeoutError("scheduler unreachable")
    with pytest.raises(ApiError) as caught:
        service.create("alice", request(), idempotency_key="k-unknown")
    assert (caught.value.status, caught.value.code) == (503, "SCHEDULER_UNAVAILABLE")
    assert len(registry_schedule_items()) == 2  # it may exist: kept, listed, deletable
    scheduler.fail_create = scheduler.fail_get = None
    view = service.create("alice", request(), idempotency_key="k-unknown")
    assert scheduler_names(scheduler) == [view.schedule_id]
    assert [s.schedule_id for s in service.list("alice").schedules] == [view.schedule_id]


def test_the_same_key_answers_the_same_schedule_and_another_body_is_refused(
    service: ScheduleService, scheduler: RecordingScheduler
) -> None:
    first = service.create("alice", request(), idempotency_key="k-same")
    again = ScheduleService(settings(), scheduler=scheduler, clock=lambda: NOW + timedelta(minutes=5)).create(
        "alice", request(), idempotency_key="k-same"
    )
    assert again == first.model_copy(update={"next_runs": again.next_runs})
    with pytest.raises(ApiError) as reused:
        service.create("alice", request(name="別の名前"), idempotency_key="k-same")
    assert (reused.value.status, reused.value.code) == (422, "IDEMPOTENCY_KEY_REUSED")
    other = service.create("bob", request(targetId="blog-b"), idempotency_key="k-same")
    assert other.schedule_id != first.schedule_id  # keys are the owner's own
    assert sorted(scheduler_names(scheduler)) == sorted([first.schedule_id, other.schedule_id])


def test_a_resend_after_an_at_schedule_ran_recreates_nothing(
    service: ScheduleService, scheduler: RecordingScheduler
) -> None:
    view = service.create("alice", request(expression="at(2025-01-06T10:00:00)"), idempotency_key="k-at")
    scheduler.real.delete_schedule(Name=view.schedule_id, GroupName=GROUP)  # it ran and deleted itself
    later = ScheduleService(settings(), scheduler=scheduler, clock=lambda: NOW + timedelta(hours=3))
    again = later.create("alice", request(expression="at(2025-01-06T10:00:00)"), idempotency_key="k-at")
    assert (again.schedule_id, again.next_runs) == (view.schedule_id, [])
    assert scheduler_names(scheduler) == []
    assert [name for name, _ in scheduler.calls].count("create_schedule") == 1


def test_two_attempts_alive_at_once_create_one_schedule(
    service: ScheduleService, scheduler: RecordingScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The in-progress idempotency record expired while the first attempt still runs: the resend
    runs beside it; both answer the same schedule and Scheduler has it once."""
    paused, release = threading.Event(), threading.Event()
    real_put = ScheduleStore.put

    def first_pauses_after_its_write(self: ScheduleStore, record: Any) -> bool:
        written = real_put(self, record)
        if not paused.is_set():
            paused.set()
            assert release.wait(30)
        return written

    monkeypatch.setattr(ScheduleStore, "put", first_pauses_after_its_write)
    with ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(service.create, "alice", request(), idempotency_key="k-both")
        assert paused.wait(30)
        second = ScheduleService(settings(), scheduler=scheduler, clock=lambda: NOW).create(
            "alice", request(), idempotency_key="k-both"
        )
        release.set()
        assert first.result(timeout=30) == second
    assert scheduler_names(scheduler) == [second.schedule_id]
    assert len(registry_schedule_items()) == 2


# --- list / get / delete per owner -----------------------------------------------------------------


def test_owners_see_only_their_own(service: ScheduleService) -> None:
    first = service.create("alice", request(name="一つ目"))
    second = service.create("alice", request(name="二つ目", expression="rate(1 day)"))
    bobs = service.create("bob", request(targetId="blog-b"))
    oldest_first = sorted([first, second], key=lambda v: (v.created_at, v.schedule_id))
    assert service.list("alice").schedules == oldest_first
    assert [s.schedule_id for s in service.list("bob").schedules] == [bobs.schedule_id]
    assert service.list("carol").schedules == []
    assert service.get("alice", first.schedule_id) == first
    with pytest.raises(ApiError) as caught:
        service.get("bob", first.schedule_id)
    assert (caught.value.status, caught.value.code) == (404, "SCHEDULE_NOT_FOUND")


def test_a_rate_view_counts_from_creation(scheduler: RecordingScheduler) -> None:
    created = datetime(2025, 1, 6, 9, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
    clock = {"now": created}
    service = ScheduleService(settings(), scheduler=scheduler, clock=lambda: clock["now"])
    view = service.create("alice", request(expression="rate(6 hours)"))
    assert view.next_runs[0].startswith("2025-01-06T09:00")  # a new rate schedule fires at once
    clock["now"] = datetime(2025, 1, 6, 16, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
    later = service.get("alice", view.schedule_id)
    assert later.next_runs[0].startswith("2025-01-06T21:00")


@pytest.mark.parametrize("schedule_id", ["sch_00000000000000000000", "not-an-id", "../../etc", ""])
def test_unknown_ids_are_404(service: ScheduleService, schedule_id: str) -> None:
    with pytest.raises(ApiError) as caught:
        service.get("alice", schedule_id)
    assert caught.value.status == 404


def test_delete_removes_both(service: ScheduleService, scheduler: RecordingScheduler) -> None:
    view = service.create("alice", request())
    service.delete("alice", view.schedule_id)
    assert scheduler.calls[-1] == ("delete_schedule", {"Name": view.schedule_id, "GroupName": GROUP})
    assert scheduler_names(scheduler) == []
    assert registry_schedule_items() == []
    with pytest.raises(ApiError):
        service.get("alice", view.schedule_id)


def test_another_owner_cannot_delete(service: ScheduleService, scheduler: RecordingScheduler) -> None:
    view = service.create("alice", request())
    with pytest.raises(ApiError) as caught:
        service.delete("bob", view.schedule_id)
    assert (caught.value.status, caught.value.code) == (404, "SCHEDULE_NOT_FOUND")
    assert scheduler_names(scheduler) == [view.schedule_id]
    assert len(registry_schedule_items()) == 2


def test_delete_after_an_at_schedule_removed_itself(
    service: ScheduleService, scheduler: RecordingScheduler
) -> None:
    view = service.create("alice", request(expression="at(2025-01-07T09:00:00)"))
    scheduler.real.delete_schedule(Name=view.schedule_id, GroupName=GROUP)  # what ActionAfterCompletion does
    assert service.get("alice", view.schedule_id).name == view.name  # still listed until deleted
    service.delete("alice", view.schedule_id)
    assert registry_schedule_items() == []


def test_a_completed_at_schedule_has_no_next_runs(scheduler: RecordingScheduler) -> None:
    clock = {"now": NOW}
    service = ScheduleService(settings(), scheduler=scheduler, clock=lambda: clock["now"])
    view = service.create("alice", request(expression="at(2025-01-07T09:00:00)"))
    clock["now"] = datetime(2025, 1, 8, tzinfo=ZoneInfo("Asia/Tokyo"))
    assert service.get("alice", view.schedule_id).next_runs == []


# --- proposals -------------------------------------------------------------------------------------


def proposal_call(expression: str) -> tuple[str, dict[str, Any]]:
    return (
        "propose_schedule",
        {
            "name": "毎週月曜の下書き一覧",
            "expression": expression,
            "timezone": "Asia/Tokyo",
            "instruction": "下書きを一覧して",
        },
    )


def test_proposal_through_the_real_sdk(
    scripted_anthropic: ScriptedAnthropicServer, scheduler: RecordingScheduler
) -> None:
    scripted_anthropic.enqueue(
        reply_tool_use([proposal_call("cron(0 9 * * MON *)")], text="毎週月曜9時で登録します。"),
        reply_tool_use([proposal_call("cron(0 9 ? * MON *)")]),
    )
    model = AnthropicModelClient(
        LambdaSettings(anthropic_api_key="k", anthropic_base_url=scripted_anthropic.base_url)
    )
    service = ScheduleService(settings(), scheduler=scheduler, model=model, clock=lambda: NOW)

    view = service.propose(
        "alice",
        ScheduleProposalRequest.model_validate(
            {"text": "毎週月曜9時に下書きを一覧して", "targetId": "blog-a"}
        ),
    )

    scripted_anthropic.assert_script_consumed()
    first, second = scripted_anthropic.message_requests
    assert first.json["tools"][0]["name"] == "propose_schedule"
    assert "2025-01-06（月）09:30" in first.json["system"][0]["text"]
    [correction] = tool_results(second)
    assert correction["is_error"] is True
    assert "どちらか一方は「?」" in correction["content"]
    body = view.to_json_dict()
    assert body["status"] == "PROPOSED"
    assert body["proposal"]["summaryJa"] == "毎週月曜 9:00（日本時間）に『下書きを一覧して』を実行します"
    assert body["proposal"]["nextRuns"][0] == "2025-01-13T09:00:00+09:00"
    assert body["createRequest"] == {
        "name": "毎週月曜の下書き一覧",
        "expression": "cron(0 9 ? * MON *)",
        "timezone": "Asia/Tokyo",
        "targetId": "blog-a",
        "agentInput": {"message": "下書きを一覧して", "skipDestructiveConfirmation": False},
    }
    assert scheduler.calls == []  # a proposal creates nothing
    assert registry_schedule_items() == []

    created = service.create("alice", ScheduleCreateRequest.model_validate(body["createRequest"]))
    assert created.expression == "cron(0 9 ? * MON *)"


def test_proposal_question_through_the_real_sdk(
    scripted_anthropic: ScriptedAnthropicServer, scheduler: RecordingScheduler
) -> None:
    scripted_anthropic.enqueue(reply_text("何曜日の何時に実行しますか？"))
    model = AnthropicModelClient(
        LambdaSettings(anthropic_api_key="k", anthropic_base_url=scripted_anthropic.base_url)
    )
    service = ScheduleService(settings(), scheduler=scheduler, model=model, clock=lambda: NOW)
    view = service.propose(
        "alice",
        ScheduleProposalRequest.model_validate({"text": "毎週下書きを確認して", "targetId": "blog-a"}),
    )
    assert view.to_json_dict() == {
        "status": "NEEDS_CLARIFICATION",
        "question": "何曜日の何時に実行しますか？",
    }


def test_proposal_errors_become_api_errors(scheduler: RecordingScheduler) -> None:
    def invalid() -> ModelReply:
        return ModelReply(
            content=[{"type": "tool_use", "id": "toolu_x", "name": "propose_schedule", "input": {}}],
            stop_reason="tool_use",
            model="scripted",
        )

    cases: list[tuple[list[ModelStep], int, str]] = [
        ([invalid(), invalid(), invalid()], 422, "PROPOSAL_FAILED"),
        ([WpAgentError(AgentErrorCode.API_RATE_LIMITED)], 429, "MODEL_RATE_LIMITED"),
        ([WpAgentError(AgentErrorCode.API_ERROR)], 502, "MODEL_ERROR"),
    ]
    body = ScheduleProposalRequest.model_validate(
        {"text": "毎週月曜9時に下書きを一覧して", "targetId": "blog-a"}
    )
    for steps, status, code in cases:
        service = ScheduleService(
            settings(), scheduler=scheduler, model=ScriptedModel(steps), clock=lambda: NOW
        )
        with pytest.raises(ApiError) as caught:
            service.propose("alice", body)
        assert (caught.value.status, caught.value.code) == (status, code)
    untouched = ScriptedModel([])
    service = ScheduleService(settings(), scheduler=scheduler, model=untouched, clock=lambda: NOW)
    with pytest.raises(ApiError) as caught:
        service.propose("bob", body)  # blog-a is Alice's
    assert (caught.value.status, caught.value.code) == (404, "TARGET_NOT_FOUND")
    with pytest.raises(ApiError) as caught:
        service.propose("alice", body.model_copy(update={"timezone": "Osaka"}))
    assert (caught.value.status, caught.value.code, caught.value.fields) == (
        400,
        "INVALID_TIMEZONE",
        ["timezone"],
    )
    assert untouched.calls == []


def test_agent_input_round_trips(service: ScheduleService) -> None:
    agent_input = AgentInput.model_validate(
        {
            "message": "下書きを一覧して",
            "maxIterations": 5,
            "conversationHistory": [{"role": "user", "content": "前回"}],
        }
    )
    view = service.create("alice", request(agentInput=agent_input.to_json_dict()))
    assert service.get("alice", view.schedule_id).agent_input == agent_input


def test_a_firing_starts_one_session_through_the_workflow_task(
    service: ScheduleService, scheduler: RecordingScheduler
) -> None:
    """The Input we store, as Scheduler delivers it, is accepted by the workflow's start task."""
    from wp_agent.service.runtime import AwsRuntime
    from wp_agent.service.workflow_tasks import start_scheduled_run

    view = service.create("alice", request())
    template = scheduler.calls[0][1]["Target"]["Input"]
    delivered = json.loads(template.replace(SCHEDULED_TIME_PLACEHOLDER, "2025-01-13T00:00:00Z"))
    runtime = AwsRuntime(LambdaSettings())
    first = start_scheduled_run(runtime, delivered)
    again = start_scheduled_run(runtime, delivered)  # a retried task: the same session
    assert first == again
    assert first["sessionId"] == f"{view.schedule_id}-20250113000000"
    state = runtime.sessions.load(first["sessionId"])
    assert state is not None
    assert (state.user_id, state.target_id) == ("alice", "blog-a")


def test_a_member_schedules_on_the_target_and_a_stranger_cannot(
    service: ScheduleService, scheduler: RecordingScheduler
) -> None:
    registry = TargetRegistry(TABLES["registry"])
    blog = registry.get("blog-a")
    assert blog is not None
    registry.put(blog.model_copy(update={"members": {"carol": Role.VIEWER}}), replace=True)
    view = service.create("carol", request())  # its runs go with carol's role, read at every firing
    assert view.schedule_id in scheduler_names(scheduler)
    with pytest.raises(ApiError) as caught:
        service.create("dave", request())
    assert (caught.value.status, caught.value.code) == (404, "TARGET_NOT_FOUND")
