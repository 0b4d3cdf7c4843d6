"""The synthesized run workflow deployed into moto (inside an active `mock_aws`), Lambdas dispatched
in-process: shared by the workflow-routing tests and the serverless end-to-end tests."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto.awslambda_simple.models import LambdaSimpleBackend

from infra import names
from infra.definition import state_machine_definition

MOTO_CONFIG: Any = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}
# (function name, event) -> (response payload, whether it is a function error)
LambdaDispatch = Callable[[str, dict[str, Any]], tuple[dict[str, Any], bool]]


@dataclass(frozen=True)
class DeployedWorkflow:
    client: Any
    arn: str
    short_wait_arn: str  # the same definition with a short WaitForApproval timeout


def dispatch_lambda_invocations(monkeypatch: pytest.MonkeyPatch, dispatch: LambdaDispatch) -> None:
    """Route moto's (Docker-free) Lambda invocations to `dispatch`."""

    def invoke(
        self: LambdaSimpleBackend,
        function_name: str,
        qualifier: str | None,
        body: Any,
        headers: Any,
        response_headers: dict[str, str],
    ) -> bytes:
        result, failed = dispatch(function_name.rsplit(":", 1)[-1], json.loads(body))
        if failed:
            response_headers["x-amz-function-error"] = "Unhandled"
        return json.dumps(result).encode()

    monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)


def deploy_workflow(
    template: dict[str, Any], *, region: str, account: str = "123456789012", short_wait_seconds: int = 1
) -> DeployedWorkflow:
    role = boto3.client("iam", region_name=region).create_role(
        RoleName="run-workflow", AssumeRolePolicyDocument="{}"
    )["Role"]["Arn"]
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("handler.py", "")
    lambda_client = boto3.client("lambda", region_name=region)
    arns = {
        name.value: lambda_client.create_function(
            FunctionName=name.value,
            Runtime="python3.12",
            Role=role,
            Handler="handler.lambda_handler",
            Code={"ZipFile": code.getvalue()},
        )["FunctionArn"]
        for name in names.FunctionName
    }
    definition = state_machine_definition(template, arns, region=region, account=account)
    client = boto3.client("stepfunctions", region_name=region)
    arn = client.create_state_machine(name="wp-agent-runs", definition=json.dumps(definition), roleArn=role)[
        "stateMachineArn"
    ]
    definition["States"][names.State.WAIT_FOR_APPROVAL]["TimeoutSeconds"] = short_wait_seconds
    short = client.create_state_machine(
        name="wp-agent-runs-short", definition=json.dumps(definition), roleArn=role
    )["stateMachineArn"]
    return DeployedWorkflow(client=client, arn=str(arn), short_wait_arn=str(short))
