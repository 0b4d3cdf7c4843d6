"""The synthesized definition, executed by moto's Step Functions interpreter with scripted Lambdas.

This checks the routing of the workflow itself (which state follows which, what each task
receives); the handlers' behaviour is tested with the real handlers elsewhere.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from moto import mock_aws

from infra import names
from tests.fakes.moto_workflow import deploy_workflow, dispatch_lambda_invocations
from wp_agent.local_api.workflow import MOTO_CONFIG

REGION = "us-east-1"
S = names.State
Event = dict[str, Any]


@dataclass
class ScriptedLambdas:
    """Stand-ins for the four functions: turn follows `routes`, failures come from `fail_when`."""

    routes: list[str] = field(default_factory=list)
    calls: list[tuple[str, Event]] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    fail_when: Callable[[str, Event], bool] = lambda _name, _event: False

    def handle(self, name: str, event: Event) -> tuple[Event, bool]:
        self.calls.append((name, event))
        if self.fail_when(name, event):
            return {"errorType": "RuntimeError", "errorMessage": "boom"}, True
        if name == names.FunctionName.TURN:
            route = self.routes.pop(0)
            approval_id = "approval-1" if route == names.Route.AWAITING_APPROVAL else None
            return {**event, "route": route, "approvalId": approval_id}, False
        if name == names.FunctionName.APPROVAL:
            self.tokens.append(event["taskToken"])
        if event.get("action") == names.WorkflowAction.START_SCHEDULED_RUN:
            return {"sessionId": "session-from-schedule", "runId": "run-from-schedule"}, False
        return {}, False

    def calls_to(self, name: str) -> list[Event]:
        return [event for called, event in self.calls if called == name]


@dataclass
class Workflow:
    client: Any
    arn_for_timeout: str
    arn: str
    lambdas: ScriptedLambdas

    def run(
        self, payload: Event, *, machine: str | None = None, approve: bool = False
    ) -> tuple[str, list[str]]:
        execution = self.client.start_execution(
            stateMachineArn=machine or self.arn, name=uuid.uuid4().hex, input=json.dumps(payload)
        )["executionArn"]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if approve and self.lambdas.tokens:
                self.client.send_task_success(taskToken=self.lambdas.tokens.pop(0), output="{}")
                approve = False
            status = self.client.describe_execution(executionArn=execution)["status"]
            if status != "RUNNING":
                history = self.client.get_execution_history(executionArn=execution)["events"]
                entered = [
                    e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e
                ]
                return status, entered
            time.sleep(0.05)
        raise AssertionError("execution did not finish")


@pytest.fixture
def workflow(template: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[Workflow]:
    lambdas = ScriptedLambdas()

    dispatch_lambda_invocations(monkeypatch, lambdas.handle)
    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}.items():
        monkeypatch.setenv(key, value)
    with mock_aws(config=MOTO_CONFIG):
        deployed = deploy_workflow(template, region=REGION)
        yield Workflow(
            client=deployed.client, arn=deployed.arn, arn_for_timeout=deployed.short_wait_arn, lambdas=lambdas
        )


IDS = {"sessionId": "session-1", "runId": "run-1"}


def test_turns_continue_wait_for_approval_and_complete(workflow: Workflow) -> None:
    workflow.lambdas.routes = ["CONTINUE", "AWAITING_APPROVAL", "COMPLETED"]
    status, entered = workflow.run(IDS, approve=True)
    assert status == "SUCCEEDED"
    assert entered == [
        S.HAS_SESSION, S.AGENT_TURN, S.ROUTE, S.AGENT_TURN, S.ROUTE,
        S.WAIT_FOR_APPROVAL, S.AGENT_TURN, S.ROUTE, S.RUN_SUCCEEDED,
    ]  # fmt: skip
    assert workflow.lambdas.calls_to("turn") == [IDS, IDS, IDS]
    (approval,) = workflow.lambdas.calls_to("approval")
    assert approval == {**IDS, "approvalId": "approval-1", "taskToken": approval["taskToken"]}


def test_scheduled_run_is_prepared_then_runs(workflow: Workflow) -> None:
    workflow.lambdas.routes = ["COMPLETED"]
    status, entered = workflow.run({"scheduleId": "schedule-1", "targetId": "t-1"})
    assert status == "SUCCEEDED"
    assert entered[:3] == [S.HAS_SESSION, S.PREPARE_SCHEDULED_RUN, S.AGENT_TURN]
    assert workflow.lambdas.calls_to("workflow_tasks") == [
        {"action": "start_scheduled_run", "input": {"scheduleId": "schedule-1", "targetId": "t-1"}}
    ]
    assert workflow.lambdas.calls_to("turn") == [
        {"sessionId": "session-from-schedule", "runId": "run-from-schedule"}
    ]


def test_failed_route_ends_failed_without_recording_again(workflow: Workflow) -> None:
    workflow.lambdas.routes = ["FAILED"]
    status, entered = workflow.run(IDS)
    assert (status, entered[-1]) == ("FAILED", S.RUN_FAILED)
    assert workflow.lambdas.calls_to("workflow_tasks") == []


def test_unknown_route_is_recorded_as_a_failure(workflow: Workflow) -> None:
    workflow.lambdas.routes = ["SOMETHING_ELSE"]
    status, entered = workflow.run(IDS)
    assert status == "FAILED"
    assert entered[-3:] == [S.UNKNOWN_ROUTE, S.RECORD_FAILURE, S.RUN_FAILED]
    (record,) = workflow.lambdas.calls_to("workflow_tasks")
    assert record["action"] == "record_failure"
    assert record["error"]["Error"] == "WpAgent.UnknownRoute"
    assert (record["sessionId"], record["runId"]) == ("session-1", "run-1")


def test_turn_error_is_recorded_with_the_error(workflow: Workflow) -> None:
    workflow.lambdas.fail_when = lambda name, _event: name == "turn"
    status, entered = workflow.run(IDS)
    assert status == "FAILED"
    assert entered[-2:] == [S.RECORD_FAILURE, S.RUN_FAILED]
    (record,) = workflow.lambdas.calls_to("workflow_tasks")
    assert {key: record[key] for key in ("action", "sessionId", "runId")} == {
        "action": "record_failure",
        **IDS,
    }
    assert record["error"]["Error"] == "RuntimeError"


def test_failed_preparation_records_what_exists(workflow: Workflow) -> None:
    workflow.lambdas.fail_when = lambda _name, event: event.get("action") == "start_scheduled_run"
    status, entered = workflow.run({"scheduleId": "schedule-1"})
    assert status == "FAILED"
    assert entered[-2:] == [S.RECORD_SCHEDULED_RUN_FAILURE, S.RUN_FAILED]
    record = workflow.lambdas.calls_to("workflow_tasks")[-1]
    assert record["action"] == "record_failure"
    assert record["input"]["scheduleId"] == "schedule-1"
    assert record["error"]["Error"] == "RuntimeError"


def test_approval_timeout_expires_the_approval(workflow: Workflow) -> None:
    workflow.lambdas.routes = ["AWAITING_APPROVAL"]
    status, entered = workflow.run(IDS, machine=workflow.arn_for_timeout)
    assert status == "FAILED"
    assert entered[-3:] == [S.WAIT_FOR_APPROVAL, S.EXPIRE_APPROVAL, S.RUN_FAILED]
    assert workflow.lambdas.calls_to("workflow_tasks") == [{"action": "expire_approval", **IDS}]
