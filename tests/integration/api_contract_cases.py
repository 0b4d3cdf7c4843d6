"""Schemathesis' property-based requests from the served OpenAPI document, through an HTTP -> API Gateway
event adapter on moto: no server error, no response that the document does not describe, and no request
that follows the schema refused for a reason the document does not state.

Not a test_*.py module: schemathesis generates its cases (the coverage phase's among them) when pytest
collects the module, about 20 s of CPU, and every pytest-xdist worker collects every test module.
tests/integration/test_api_contract.py runs this one in a pytest process of its own instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import CheckContext, not_a_server_error
from schemathesis.core.transport import Response
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

import functions.api.handler as api
from tests.fakes.apigw import LambdaContextStub, rest_event
from tests.integration.test_api import env  # noqa: F401 - the fixture
from tests.integration.test_api_contract import served_document
from wp_agent.service.api_contract import documented_refusals


def apigw_wsgi_app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    """WSGI -> an API Gateway REST proxy event for the api handler -> WSGI response."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(length).decode("utf-8", "surrogateescape") if length else None
    headers = {
        key[5:].replace("_", "-").title(): value for key, value in environ.items() if key.startswith("HTTP_")
    }
    if environ.get("CONTENT_TYPE"):
        headers["Content-Type"] = environ["CONTENT_TYPE"]
    event = rest_event(environ["REQUEST_METHOD"], environ.get("PATH_INFO") or "/", user=None, raw_body=body)
    event["headers"] = headers
    event["multiValueHeaders"] = {k: [v] for k, v in headers.items()}
    response = api.lambda_handler(event, LambdaContextStub())
    merged = dict(response.get("headers") or {})
    merged.update({k: v[-1] for k, v in (response.get("multiValueHeaders") or {}).items()})
    status = int(response["statusCode"])
    start_response(f"{status} X", list(merged.items()))
    return [str(response.get("body") or "").encode("utf-8")]


schema = schemathesis.openapi.from_dict(served_document())  # the served document, not the committed copy


@pytest.fixture
def api_on_moto(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Scheduler group the schedule routes need (test_api's `env` sets up the rest)."""
    import boto3

    from tests.fakes.aws import REGION

    boto3.client("scheduler", region_name=REGION).create_schedule_group(Name="wp-agent")
    monkeypatch.setenv("WP_AGENT_SCHEDULER_ROLE_ARN", "arn:aws:iam::123456789012:role/scheduler")


@schemathesis.check
def schema_valid_requests_are_refused_only_as_documented(
    ctx: CheckContext, response: Response, case: schemathesis.Case[Any]
) -> bool | None:
    """Schemathesis' positive-data check (a request that follows the schema is not refused with
    400/413/422...), except for a refusal the operation lists in `x-error-codes`: a rule of stored
    state, the clock or another service that JSON Schema cannot state."""
    meta = case.meta
    if meta is not None and any(not part.mode.is_positive for part in meta.components.values()):
        # The coverage phase can pair a positive header case with a body it could not make valid
        # (a schema with `not`/`anyOf`) and still label the whole case positive: not schema-valid.
        return None
    if response.status_code in (400, 413, 422):
        body = json.loads(response.content or b"{}")
        code = body.get("error", {}).get("code")
        if code in documented_refusals(case.operation.definition.raw, response.status_code):
            return None
    return positive_data_acceptance(ctx, response, case)


@schemathesis.check
def every_error_code_is_listed_for_its_status(
    ctx: CheckContext, response: Response, case: schemathesis.Case[Any]
) -> bool | None:
    """An error answer carries a code the operation lists under `x-error-codes` for that status
    (a probe with a method the path does not serve is schemathesis' own 405 check)."""
    if response.status_code < 400 or case.method.upper() != case.operation.method.upper():
        return None
    code = json.loads(response.content or b"{}").get("error", {}).get("code")
    listed = (
        case.operation.definition.raw["responses"].get(str(response.status_code), {}).get("x-error-codes", {})
    )
    if code not in listed:
        raise AssertionError(f"{response.status_code} {code} is not listed for {case.operation.label}")
    return None


@pytest.mark.usefixtures("env", "api_on_moto")
@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_no_server_error_and_every_response_as_documented(case: schemathesis.Case[Any]) -> None:
    response = case.call(app=apigw_wsgi_app)
    case.validate_response(
        response,
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
            schema_valid_requests_are_refused_only_as_documented,
            every_error_code_is_listed_for_its_status,
        ],
    )
