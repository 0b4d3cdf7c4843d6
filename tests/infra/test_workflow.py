"""The run state machine: type, logging, tracing, and the definition's states, retries and catches."""

from __future__ import annotations

from typing import Any

import pytest

from infra import names
from infra.definition import function_logical_ids, state_machine_definition
from infra.functions_construct import SPECS
from infra.workflow_construct import APPROVAL_HAND_OVER_GRACE
from tests.infra.template_queries import flatten, only

S = names.State
ARNS = {
    name.value: f"arn:aws:lambda:us-east-1:123456789012:function:{name.value}" for name in names.FunctionName
}
LAMBDA_SERVICE_ERRORS = [
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
]


@pytest.fixture(scope="module")
def states(template: dict[str, Any]) -> dict[str, Any]:
    definition = state_machine_definition(template, ARNS)
    assert definition["StartAt"] == S.HAS_SESSION
    result: dict[str, Any] = definition["States"]
    return result


def test_standard_with_all_logging_and_tracing(template: dict[str, Any]) -> None:
    _, machine = only(template, "AWS::StepFunctions::StateMachine")
    properties = machine["Properties"]
    assert properties["StateMachineType"] == "STANDARD"
    assert properties["TracingConfiguration"] == {"Enabled": True}
    logging = properties["LoggingConfiguration"]
    assert logging["Level"] == "ALL"
    assert logging["IncludeExecutionData"] is False  # keeps task tokens out of the logs
    log_group_id = logging["Destinations"][0]["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
    log_group = template["Resources"][log_group_id]["Properties"]
    assert log_group["LogGroupName"].startswith("/aws/vendedlogs/states/")
    assert log_group["RetentionInDays"] == 90


def test_every_contract_state_exists(states: dict[str, Any]) -> None:
    one_site = states[S.FLEET_MAP]["ItemProcessor"]["States"]
    assert set(states) | set(one_site) == {state.value for state in S}
    assert not set(states) & set(one_site)
    assert states[S.HAS_SESSION]["Type"] == "Choice"
    assert states[S.ROUTE]["Type"] == "Choice"
    assert states[S.RUN_SUCCEEDED]["Type"] == "Succeed"
    assert states[S.RUN_FAILED]["Type"] == "Fail"


def test_has_session_routes_scheduled_runs_to_preparation(states: dict[str, Any]) -> None:
    choice = states[S.HAS_SESSION]
    assert choice["Choices"] == [
        {"Variable": "$.fleetRunId", "IsPresent": True, "Next": S.FLEET_BEGIN},
        {"Variable": "$.sessionId", "IsPresent": True, "Next": S.AGENT_TURN},
        {"Variable": "$.articleId", "IsPresent": True, "Next": S.PUBLISH_ARTICLE},
    ]
    assert choice["Default"] == S.PREPARE_SCHEDULED_RUN
    prepare = states[S.PREPARE_SCHEDULED_RUN]
    assert prepare["Resource"] == ARNS["workflow_tasks"]
    assert prepare["Parameters"] == {"action": "start_scheduled_run", "input.$": "$"}
    assert prepare["Next"] == S.AGENT_TURN
    assert prepare["Catch"] == [
        {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": S.RECORD_SCHEDULED_RUN_FAILURE}
    ]


def test_agent_turn_invokes_turn_with_ids_and_retries(states: dict[str, Any]) -> None:
    turn = states[S.AGENT_TURN]
    assert turn["Resource"] == ARNS["turn"]  # payload response only
    assert turn["Parameters"] == {"sessionId.$": "$.sessionId", "runId.$": "$.runId"}
    assert turn["Next"] == S.ROUTE
    assert turn["Retry"] == [
        {"ErrorEquals": LAMBDA_SERVICE_ERRORS, "IntervalSeconds": 2, "MaxAttempts": 3, "BackoffRate": 2},
        {"ErrorEquals": ["Sandbox.Timedout", "States.Timeout"], "IntervalSeconds": 2, "MaxAttempts": 1},
    ]
    assert turn["Catch"] == [
        {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": S.RECORD_FAILURE}
    ]
    assert turn["TimeoutSeconds"] > 900  # a backstop above the function's own timeout


def test_route_choices(states: dict[str, Any]) -> None:
    route = states[S.ROUTE]
    by_value = {c["StringEquals"]: c["Next"] for c in route["Choices"] if "StringEquals" in c}
    assert by_value == {
        "CONTINUE": S.AGENT_TURN,
        "AWAITING_APPROVAL": S.WAIT_FOR_APPROVAL,
        "COMPLETED": S.RUN_SUCCEEDED,
        "FAILED": S.RUN_FAILED,
    }
    assert route["Choices"][0] == {
        "Not": {"Variable": "$.route", "IsPresent": True},
        "Next": S.UNKNOWN_ROUTE,
    }
    assert route["Default"] == S.UNKNOWN_ROUTE
    unknown = states[S.UNKNOWN_ROUTE]
    assert unknown["Type"] == "Pass"
    assert unknown["ResultPath"] == "$.error"
    assert unknown["Next"] == S.RECORD_FAILURE


def test_wait_for_approval_uses_the_task_token_and_the_timeout(states: dict[str, Any]) -> None:
    wait = states[S.WAIT_FOR_APPROVAL]
    assert wait["Resource"] == "arn:aws:states:::lambda:invoke.waitForTaskToken"
    assert wait["Parameters"] == {
        "FunctionName": ARNS["approval"],
        "Payload": {
            "sessionId.$": "$.sessionId",
            "runId.$": "$.runId",
            "approvalId.$": "$.approvalId",
            "taskToken.$": "$$.Task.Token",
        },
    }
    # open past the approval's deadline for longer than the API may take to hand a decision over
    assert wait["TimeoutSeconds"] == 86400 + APPROVAL_HAND_OVER_GRACE.to_seconds()
    assert APPROVAL_HAND_OVER_GRACE.to_seconds() > SPECS[names.FunctionName.API].timeout.to_seconds()
    assert wait["ResultPath"] is None
    assert wait["Next"] == S.AGENT_TURN
    assert wait["Catch"] == [
        {"ErrorEquals": ["States.Timeout"], "ResultPath": "$.error", "Next": S.EXPIRE_APPROVAL},
        {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": S.RECORD_FAILURE},
    ]


def test_a_failed_expiry_is_recorded_as_a_failure(states: dict[str, Any]) -> None:
    task = states[S.EXPIRE_APPROVAL]
    assert task["Resource"] == ARNS["workflow_tasks"]
    assert task["Parameters"] == {
        "action": "expire_approval",
        "sessionId.$": "$.sessionId",
        "runId.$": "$.runId",
    }
    assert task["Next"] == S.RUN_FAILED
    assert task["Catch"] == [
        {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": S.RECORD_FAILURE}
    ]


@pytest.mark.parametrize(
    ("state", "parameters"),
    [
        (
            S.RECORD_FAILURE,
            {
                "action": "record_failure",
                "sessionId.$": "$.sessionId",
                "runId.$": "$.runId",
                "error.$": "$.error",
            },
        ),
        (S.RECORD_SCHEDULED_RUN_FAILURE, {"action": "record_failure", "error.$": "$.error", "input.$": "$"}),
    ],
)
def test_failure_tasks_end_the_run_failed(
    states: dict[str, Any], state: names.State, parameters: dict[str, str]
) -> None:
    task = states[state]
    assert task["Resource"] == ARNS["workflow_tasks"]
    assert task["Parameters"] == parameters
    assert task["Next"] == S.RUN_FAILED
    assert "Catch" not in task  # a failing failure handler must not loop


def test_recording_a_failure_is_retried_on_any_error(states: dict[str, Any]) -> None:
    retries = states[S.RECORD_FAILURE]["Retry"]
    assert retries[0]["ErrorEquals"] == LAMBDA_SERVICE_ERRORS
    assert retries[-1]["ErrorEquals"] == ["States.ALL"]
    assert retries[-1]["MaxAttempts"] >= 5


def test_every_task_retries_lambda_service_errors(states: dict[str, Any]) -> None:
    for name, state in states.items():
        if state["Type"] == "Task":
            assert state["Retry"][0]["ErrorEquals"] == LAMBDA_SERVICE_ERRORS, name


def test_definition_references_only_the_workflow_functions(template: dict[str, Any]) -> None:
    _, machine = only(template, "AWS::StepFunctions::StateMachine")
    rendered = flatten(machine["Properties"]["DefinitionString"])
    ids = function_logical_ids(template)
    for name in ("turn", "approval", "workflow_tasks"):
        assert f"<{ids[name]}.Arn>" in rendered
    assert ids["api"] not in rendered


def test_definition_needs_every_referenced_arn(template: dict[str, Any]) -> None:
    with pytest.raises(KeyError, match="no ARN given"):
        state_machine_definition(template, {"turn": ARNS["turn"]})


def test_publish_article_runs_on_its_own_function_and_resumes_a_failed_attempt(
    states: dict[str, Any],
) -> None:
    publish = states[S.PUBLISH_ARTICLE]
    assert publish["Resource"] == ARNS["publish_article"]
    # the execution's own name: only the execution the job names may run it
    assert publish["Parameters"] == {"articleId.$": "$.articleId", "execution.$": "$$.Execution.Name"}
    assert publish["Next"] == S.ARTICLE_ROUTE
    # an attempt that died is retried: the publish resumes (the post is found by its marker)
    assert publish["Retry"][-1] == {
        "ErrorEquals": ["States.ALL"],
        "IntervalSeconds": 2,
        "MaxAttempts": 2,
        "BackoffRate": 2,
    }
    assert publish["Catch"] == [
        {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": S.RECORD_ARTICLE_FAILURE}
    ]
    article_route = states[S.ARTICLE_ROUTE]
    assert article_route["Choices"] == [
        {"Variable": "$.success", "BooleanEquals": True, "Next": S.RUN_SUCCEEDED}
    ]
    assert article_route["Default"] == S.RUN_FAILED
    record = states[S.RECORD_ARTICLE_FAILURE]
    assert record["Parameters"] == {
        "action": "record_article_failure",
        "articleId.$": "$.articleId",
        "execution.$": "$$.Execution.Name",
        "error.$": "$.error",
    }
    assert record["Next"] == S.RUN_FAILED


def test_a_fleet_runs_its_sites_as_standard_child_executions_of_one_map(states: dict[str, Any]) -> None:
    """The canary's batch and the rest's go through the same Distributed Map: its concurrency and tolerated
    failures come from the batch (service/fleets.py: one at a time and none for the canary)."""
    fleet_map = states[S.FLEET_MAP]
    assert fleet_map["ItemProcessor"]["ProcessorConfig"] == {
        "Mode": "DISTRIBUTED",
        "ExecutionType": "STANDARD",
    }
    assert fleet_map["ItemsPath"] == "$.batch.items"
    assert fleet_map["MaxConcurrencyPath"] == "$.batch.concurrency"
    assert fleet_map["ToleratedFailureCountPath"] == "$.batch.toleratedFailures"
    assert fleet_map["Next"] == S.FLEET_BATCH_DONE
    assert fleet_map["Catch"][0]["Next"] == S.FLEET_BATCH_DONE  # over its tolerance: the batch is done
    next_batch = states[S.FLEET_NEXT_BATCH]
    assert next_batch["Choices"] == [{"Variable": "$.batch.next", "StringEquals": "run", "Next": S.FLEET_MAP}]
    assert next_batch["Default"] == S.FLEET_FINISHED
    one_site = fleet_map["ItemProcessor"]
    assert one_site["StartAt"] == S.SITE_START
    site_states = one_site["States"]
    # a site may wait for its own approval: the same approval function and token as a run's wait
    wait = site_states[S.SITE_WAIT_FOR_APPROVAL]
    assert wait["Resource"] == "arn:aws:states:::lambda:invoke.waitForTaskToken"
    assert wait["Parameters"]["FunctionName"] == ARNS["approval"]
    assert site_states[S.SITE_FAILED]["Type"] == "Fail"  # what the tolerated failure count counts
    # the plan's one approval
    plan_wait = states[S.FLEET_WAIT_FOR_APPROVAL]
    assert plan_wait["Resource"] == "arn:aws:states:::lambda:invoke.waitForTaskToken"
    assert plan_wait["Parameters"]["Payload"]["fleetAction"] == "wait_for_approval"
    assert plan_wait["ResultPath"] == "$.decision"
