"""The run workflow in moto: the synthesized state machine definition (committed as
run_workflow.asl.json, kept equal to what the CDK app synthesizes by tests/infra), deployed with
stand-in Lambda functions whose invocations moto hands to an in-process dispatcher.

Needs moto (extra `[local]`); call inside an active `mock_aws` with MOTO_CONFIG.
"""

from __future__ import annotations

import contextlib
import io
import json
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

MOTO_CONFIG: Any = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}
FUNCTION_NAMES = ("api", "turn", "approval", "workflow_tasks", "publish_article")
DEFINITION_FILE = "run_workflow.asl.json"
WAIT_FOR_APPROVAL_STATE = "WaitForApproval"
# (function name, event) -> (response payload, whether it is a function error)
LambdaDispatch = Callable[[str, dict[str, Any]], tuple[dict[str, Any], bool]]


@dataclass(frozen=True)
class DeployedWorkflow:
    client: Any
    arn: str
    short_wait_arn: str  # the same definition with a short WaitForApproval timeout


def function_placeholder(name: str) -> str:
    return f"${{Function:{name}}}"


def committed_definition() -> str:
    """The definition as committed: function ARNs, region and account as ${…} placeholders."""
    return resources.files("wp_agent.local_api").joinpath(DEFINITION_FILE).read_text(encoding="utf-8")


def render(template: str, function_arns: Mapping[str, str], *, region: str, account: str) -> dict[str, Any]:
    text = template.replace("${Region}", region).replace("${Account}", account)
    for name, arn in function_arns.items():
        text = text.replace(function_placeholder(name), arn)
    if "${" in text:
        raise ValueError("the definition names something no stand-in was created for")
    definition: dict[str, Any] = json.loads(text)
    return definition


def moto_invoke(dispatch: LambdaDispatch) -> Callable[..., bytes]:
    """A replacement for moto's (Docker-free) LambdaSimpleBackend.invoke that hands every invocation
    to `dispatch`."""

    def invoke(
        backend: Any,
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

    return invoke


@contextlib.contextmanager
def lambda_invocations_to(dispatch: LambdaDispatch) -> Iterator[None]:
    """Route moto's Lambda invocations to `dispatch` while the block runs."""
    from moto.awslambda_simple.models import LambdaSimpleBackend

    original = LambdaSimpleBackend.invoke
    LambdaSimpleBackend.invoke = moto_invoke(dispatch)  # type: ignore[method-assign]
    try:
        yield
    finally:
        LambdaSimpleBackend.invoke = original  # type: ignore[method-assign]


def deploy_workflow(
    definition: Callable[[Mapping[str, str]], dict[str, Any]],
    *,
    region: str,
    short_wait_seconds: int = 1,
) -> DeployedWorkflow:
    """Stand-in functions, then the state machine (and a copy whose approval wait is short).
    `definition` renders the definition for the stand-ins' ARNs."""
    import boto3

    role = boto3.client("iam", region_name=region).create_role(
        RoleName="run-workflow", AssumeRolePolicyDocument="{}"
    )["Role"]["Arn"]
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("handler.py", "")
    lambda_client = boto3.client("lambda", region_name=region)
    arns = {
        name: lambda_client.create_function(
            FunctionName=name,
            Runtime="python3.12",
            Role=role,
            Handler="handler.lambda_handler",
            Code={"ZipFile": code.getvalue()},
        )["FunctionArn"]
        for name in FUNCTION_NAMES
    }
    rendered = definition(arns)
    client = boto3.client("stepfunctions", region_name=region)
    arn = client.create_state_machine(name="wp-agent-runs", definition=json.dumps(rendered), roleArn=role)[
        "stateMachineArn"
    ]
    rendered["States"][WAIT_FOR_APPROVAL_STATE]["TimeoutSeconds"] = short_wait_seconds
    short = client.create_state_machine(
        name="wp-agent-runs-short", definition=json.dumps(rendered), roleArn=role
    )["stateMachineArn"]
    return DeployedWorkflow(client=client, arn=str(arn), short_wait_arn=str(short))
