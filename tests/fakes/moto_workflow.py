"""The synthesized run workflow deployed into moto (inside an active `mock_aws`), Lambdas dispatched
in-process: shared by the workflow-routing tests and the serverless end-to-end tests. The moto side
is the package's (wp_agent.local_api.workflow, which `wp-agent api serve` runs too); here the
definition comes straight from the CDK app's synthesized template."""

from __future__ import annotations

from typing import Any

import pytest
from moto.awslambda_simple.models import LambdaSimpleBackend

from infra.definition import state_machine_definition
from wp_agent.local_api.workflow import DeployedWorkflow, LambdaDispatch, moto_invoke
from wp_agent.local_api.workflow import deploy_workflow as deploy_into_moto


def dispatch_lambda_invocations(monkeypatch: pytest.MonkeyPatch, dispatch: LambdaDispatch) -> None:
    """Route moto's Lambda invocations to `dispatch` for the rest of the test."""
    monkeypatch.setattr(LambdaSimpleBackend, "invoke", moto_invoke(dispatch))


def deploy_workflow(
    template: dict[str, Any], *, region: str, account: str = "123456789012", short_wait_seconds: int = 1
) -> DeployedWorkflow:
    """The synthesized definition, rendered for moto's stand-in functions."""
    return deploy_into_moto(
        lambda arns: state_machine_definition(template, arns, region=region, account=account),
        region=region,
        short_wait_seconds=short_wait_seconds,
    )
