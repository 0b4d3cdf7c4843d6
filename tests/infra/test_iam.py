"""Least privilege: every function role allows exactly its contract grants, nothing more."""

from __future__ import annotations

from typing import Any

import pytest

from infra import names
from tests.infra.template_queries import (
    function,
    function_statements,
    grants,
    logical_id_of_table,
    only,
    resources,
    role_statements,
)

N = names.FunctionName
T = names.Table
DYNAMODB_READ = (
    "dynamodb:BatchGetItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DescribeTable",
    "dynamodb:GetItem",
    "dynamodb:GetRecords",
    "dynamodb:GetShardIterator",
    "dynamodb:Query",
    "dynamodb:Scan",
)
DYNAMODB_READ_WRITE = (
    *DYNAMODB_READ,
    "dynamodb:BatchWriteItem",
    "dynamodb:DeleteItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
)
TARGET_SECRETS = (
    "arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:wp-agent/targets/*"
)
GROUP_SCHEDULES = "arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/wp-agent/*"
XRAY = {("xray:PutTraceSegments", "*"), ("xray:PutTelemetryRecords", "*")}


def _pairs(actions: tuple[str, ...], *targets: str) -> set[tuple[str, str]]:
    return {(action, target) for action in actions for target in targets}


def _table(template: dict[str, Any], table: T) -> str:
    return f"<{logical_id_of_table(template, table)}.Arn>"


def _expected(template: dict[str, Any], name: N) -> set[tuple[str, str]]:
    state_machine = f"<{only(template, 'AWS::StepFunctions::StateMachine')[0]}>"
    executions = (
        "arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:"
        f"<{only(template, 'AWS::StepFunctions::StateMachine')[0]}.Name>:*"
    )
    bus = f"<{only(template, 'AWS::Events::EventBus')[0]}.Arn>"
    secret = f"<{only(template, 'AWS::SecretsManager::Secret')[0]}>"
    scheduler_role = f"<{_scheduler_role_id(template)}.Arn>"
    log_group = f"<{function(template, name)[1]['Properties']['LoggingConfig']['LogGroup']['Ref']}.Arn>"
    audit = _table(template, T.AUDIT)
    sessions = _table(template, T.SESSIONS)

    common = (
        XRAY
        | _pairs(("logs:CreateLogStream", "logs:PutLogEvents"), log_group)
        | _pairs(DYNAMODB_READ_WRITE, _table(template, T.SESSIONS))
        | {("dynamodb:PutItem", audit), ("events:PutEvents", bus)}
    )
    task_response = _pairs(("states:SendTaskSuccess", "states:SendTaskFailure"), state_machine)
    if name is N.API:
        return (
            common
            | _pairs(DYNAMODB_READ_WRITE, _table(template, T.REGISTRY), _table(template, T.IDEMPOTENCY))
            | _pairs(("dynamodb:Query",), audit, f"{audit}/index/by_user", f"{audit}/index/by_target")
            | _pairs(
                ("dynamodb:Query",),
                f"{sessions}/index/sessions_by_user",
                f"{sessions}/index/sessions_by_user_target",
            )
            | {("secretsmanager:GetSecretValue", secret), ("states:StartExecution", state_machine)}
            | _pairs(
                (
                    "secretsmanager:GetSecretValue",
                    "secretsmanager:PutSecretValue",
                    "secretsmanager:DescribeSecret",
                    "secretsmanager:DeleteSecret",
                ),
                TARGET_SECRETS,
            )
            | _pairs(("states:StopExecution", "states:DescribeExecution"), executions)
            | task_response
            | _pairs(
                (
                    "scheduler:CreateSchedule",
                    "scheduler:GetSchedule",
                    "scheduler:UpdateSchedule",
                    "scheduler:DeleteSchedule",
                ),
                GROUP_SCHEDULES,
            )
            | {("scheduler:ListSchedules", "*"), ("iam:PassRole", scheduler_role)}
        )
    if name is N.TURN:
        return (
            common
            | _pairs(DYNAMODB_READ, _table(template, T.REGISTRY))
            | _pairs(DYNAMODB_READ_WRITE, _table(template, T.RATE_LIMITS))
            | _pairs(("secretsmanager:GetSecretValue",), secret, TARGET_SECRETS)
        )
    if name is N.APPROVAL:
        return common | task_response
    if name is N.PUBLISH_ARTICLE:  # the target's SSH secrets, never the model key
        return (
            common
            | _pairs(DYNAMODB_READ, _table(template, T.REGISTRY))
            | _pairs(("secretsmanager:GetSecretValue",), TARGET_SECRETS)
        )
    return common | _pairs(DYNAMODB_READ, _table(template, T.REGISTRY))


def _scheduler_role_id(template: dict[str, Any]) -> str:
    for key, role in resources(template, "AWS::IAM::Role").items():
        principal = role["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]
        if principal == {"Service": "scheduler.amazonaws.com"}:
            return key
    raise AssertionError("no scheduler role")


@pytest.mark.parametrize("name", list(N))
def test_function_role_allows_exactly_its_contract(template: dict[str, Any], name: N) -> None:
    actual = grants(function_statements(template, name))
    expected = _expected(template, name)
    assert actual - expected == set(), "grants beyond the contract"
    assert expected - actual == set(), "contract grants missing"


@pytest.mark.parametrize("name", list(N))
def test_function_roles_have_no_managed_policies_and_trust_only_lambda(
    template: dict[str, Any], name: N
) -> None:
    role = template["Resources"][function(template, name)[1]["Properties"]["Role"]["Fn::GetAtt"][0]]
    assert "ManagedPolicyArns" not in role["Properties"]
    assert role["Properties"]["AssumeRolePolicyDocument"]["Statement"] == [
        {"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}}
    ]


def test_audit_table_is_append_only_for_every_role(template: dict[str, Any]) -> None:
    audit = _table(template, T.AUDIT)
    for role_id in resources(template, "AWS::IAM::Role"):
        for statement in role_statements(template, role_id):
            if any(target.startswith(audit) for target in statement.resources):
                assert "dynamodb:UpdateItem" not in statement.actions
                assert "dynamodb:DeleteItem" not in statement.actions
                assert "dynamodb:BatchWriteItem" not in statement.actions
                assert not any(action.endswith("*") for action in statement.actions)


def test_only_api_may_read_the_audit_table(template: dict[str, Any]) -> None:
    audit = _table(template, T.AUDIT)
    for name in N:
        readers = {
            action
            for action, target in grants(function_statements(template, name))
            if target.startswith(audit) and action != "dynamodb:PutItem"
        }
        assert readers == ({"dynamodb:Query"} if name is N.API else set())


def test_turn_reads_only_the_anthropic_key_and_target_secrets(template: dict[str, Any]) -> None:
    secret = f"<{only(template, 'AWS::SecretsManager::Secret')[0]}>"
    secret_grants = {
        pair
        for pair in grants(function_statements(template, N.TURN))
        if pair[0].startswith("secretsmanager:")
    }
    assert secret_grants == {
        ("secretsmanager:GetSecretValue", secret),
        ("secretsmanager:GetSecretValue", TARGET_SECRETS),
    }


def test_wildcard_resources_are_only_the_inherent_ones(template: dict[str, Any]) -> None:
    allowed = {"xray:PutTraceSegments", "xray:PutTelemetryRecords", "scheduler:ListSchedules"}
    for name in N:
        for action, target in grants(function_statements(template, name)):
            if target == "*":
                assert action in allowed, (name, action)


def test_pass_role_is_limited_to_scheduler(template: dict[str, Any]) -> None:
    (statement,) = [s for s in function_statements(template, N.API) if "iam:PassRole" in s.actions]
    assert statement.actions == ("iam:PassRole",)
    assert statement.condition == '{"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}}'


def machine_logical_id(template: dict[str, Any]) -> str:
    logical_id, _ = only(template, "AWS::StepFunctions::StateMachine")
    return logical_id


def test_state_machine_role_invokes_only_the_workflow_functions(template: dict[str, Any]) -> None:
    _, machine = only(template, "AWS::StepFunctions::StateMachine")
    statements = role_statements(template, machine["Properties"]["RoleArn"]["Fn::GetAtt"][0])
    invoked = {target for action, target in grants(statements) if action == "lambda:InvokeFunction"}
    workflow_functions = [
        function(template, name)[0] for name in (N.TURN, N.APPROVAL, N.WORKFLOW_TASKS, N.PUBLISH_ARTICLE)
    ]
    assert invoked == {f"<{fid}.Arn>" for fid in workflow_functions} | {
        f"<{fid}.Arn>:*" for fid in workflow_functions
    }
    assert {action.split(":")[0] for action, _ in grants(statements)} == {"lambda", "logs", "xray", "states"}
    # The fleet branch's Distributed Map: only its own child executions, of this state machine
    states = {(action, target) for action, target in grants(statements) if action.startswith("states:")}
    assert {action for action, _ in states} == {
        "states:StartExecution", "states:DescribeExecution", "states:StopExecution", "states:RedriveExecution",
    }  # fmt: skip
    machine_id = machine_logical_id(template)
    assert all(machine_id in target for _, target in states), states
