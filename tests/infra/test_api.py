"""API Gateway: routes, IAM auth everywhere, validation, stage logging/metrics/tracing/throttling."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aws_cdk.assertions import Match, Template

from infra import names
from infra.api_construct import GATEWAY_ANSWERS, ROUTES
from tests.infra.conftest import BACKEND_PRINCIPALS
from tests.infra.template_queries import flatten, function, only, resources
from wp_agent.models.api import ApiErrorResponse

EXPECTED_ROUTES = {
    ("POST", "/v1/sessions/{sessionId}/messages"),
    ("GET", "/v1/sessions/{sessionId}"),
    ("POST", "/v1/sessions/{sessionId}/approvals/{approvalId}"),
    ("POST", "/v1/sessions/{sessionId}/cancel"),
    ("POST", "/v1/sessions/{sessionId}/runs/{runId}/undo"),
    ("GET", "/v1/targets"),
    ("POST", "/v1/targets"),
    ("GET", "/v1/targets/{targetId}"),
    ("POST", "/v1/articles"),
    ("GET", "/v1/articles/{articleId}"),
    ("GET", "/v1/schedules"),
    ("POST", "/v1/schedules"),
    ("POST", "/v1/schedules/proposals"),
    ("GET", "/v1/schedules/{scheduleId}"),
    ("DELETE", "/v1/schedules/{scheduleId}"),
    ("GET", "/v1/openapi.json"),
    ("GET", "/v1/sessions"),
    ("GET", "/v1/sessions/{sessionId}/runs/{runId}"),
    ("PATCH", "/v1/targets/{targetId}"),
    ("DELETE", "/v1/targets/{targetId}"),
    ("POST", "/v1/targets/{targetId}/checks"),
    ("GET", "/v1/targets/{targetId}/activity"),
    ("GET", "/v1/targets/{targetId}/members"),
    ("PUT", "/v1/targets/{targetId}/members/{userId}"),
    ("DELETE", "/v1/targets/{targetId}/members/{userId}"),
    ("POST", "/v1/fleet-runs"),
    ("GET", "/v1/fleet-runs/{fleetRunId}"),
    ("POST", "/v1/fleet-runs/{fleetRunId}/decision"),
}


def _paths(template: dict[str, Any]) -> dict[str, str]:
    """API Gateway resource logical id -> full path."""
    api_resources = resources(template, "AWS::ApiGateway::Resource")
    rest_api_id, _ = only(template, "AWS::ApiGateway::RestApi")

    def path_of(logical_id: str) -> str:
        properties = api_resources[logical_id]["Properties"]
        parent = properties["ParentId"]
        prefix = (
            ""
            if "Fn::GetAtt" in parent and parent["Fn::GetAtt"][0] == rest_api_id
            else path_of(parent["Ref"])
        )
        return f"{prefix}/{properties['PathPart']}"

    return {logical_id: path_of(logical_id) for logical_id in api_resources}


def _methods(template: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    paths = _paths(template)
    return {
        (method["Properties"]["HttpMethod"], paths[method["Properties"]["ResourceId"]["Ref"]]): method[
            "Properties"
        ]
        for method in resources(template, "AWS::ApiGateway::Method").values()
    }


def test_routes_are_exactly_the_contract(template: dict[str, Any]) -> None:
    assert set(_methods(template)) == EXPECTED_ROUTES
    assert {(route.method, route.path) for route in ROUTES} == EXPECTED_ROUTES


def test_every_method_requires_sigv4(template: dict[str, Any]) -> None:
    for route, method in _methods(template).items():
        assert method["AuthorizationType"] == "AWS_IAM", route
        assert "AuthorizerId" not in method, route


def test_every_method_proxies_to_the_live_alias(template: dict[str, Any]) -> None:
    alias_id, _ = only(template, "AWS::Lambda::Alias")
    for route, method in _methods(template).items():
        integration = method["Integration"]
        assert integration["Type"] == "AWS_PROXY", route
        assert integration["IntegrationHttpMethod"] == "POST", route
        assert f"<{alias_id}>/invocations" in flatten(integration["Uri"]), route


def test_validation_body_where_there_is_a_body(template: dict[str, Any]) -> None:
    validators = resources(template, "AWS::ApiGateway::RequestValidator")
    by_id = {
        key: (v["Properties"]["ValidateRequestBody"], v["Properties"]["ValidateRequestParameters"])
        for key, v in validators.items()
        if "ValidateRequestBody" in v["Properties"]
    }
    params_only = [key for key, v in validators.items() if "ValidateRequestBody" not in v["Properties"]]
    assert len(by_id) == 1
    assert next(iter(by_id.values())) == (True, True)
    assert len(params_only) == 1
    assert validators[params_only[0]]["Properties"]["ValidateRequestParameters"] is True
    body_validator = next(iter(by_id))
    model_id, model = only(template, "AWS::ApiGateway::Model")
    assert model["Properties"]["Schema"]["type"] == "object"
    bodies = {(route.method, route.path) for route in ROUTES if route.body}
    for route, method in _methods(template).items():
        validator = method["RequestValidatorId"]["Ref"]
        if route in bodies:
            assert validator == body_validator, route
            assert method["RequestModels"] == {"application/json": {"Ref": model_id}}, route
        else:
            assert validator == params_only[0], route
            assert "RequestModels" not in method, route
    assert ("POST", "/v1/sessions/{sessionId}/messages") in bodies
    assert ("POST", "/v1/sessions/{sessionId}/approvals/{approvalId}") in bodies


def test_path_parameters_are_required(template: dict[str, Any]) -> None:
    for (verb, path), method in _methods(template).items():
        expected = {
            f"method.request.path.{segment[1:-1]}": True
            for segment in path.split("/")
            if segment.startswith("{")
        }
        assert method.get("RequestParameters", {}) == expected, (verb, path)


def test_stage_logging_metrics_tracing_and_throttling(assertions: Template, template: dict[str, Any]) -> None:
    _, stage = only(template, "AWS::ApiGateway::Stage")
    properties = stage["Properties"]
    assert properties["StageName"] == names.API_STAGE_NAME
    assert properties["TracingEnabled"] is True
    assert properties["MethodSettings"] == [
        {
            "DataTraceEnabled": False,
            "HttpMethod": "*",
            "LoggingLevel": "ERROR",
            "MetricsEnabled": True,
            "ResourcePath": "/*",
            "ThrottlingBurstLimit": 100,
            "ThrottlingRateLimit": 50,
        }
    ]
    access_log = properties["AccessLogSetting"]
    log_format = json.loads(access_log["Format"])
    assert {"requestId", "userArn", "status", "resourcePath", "integrationLatency"} <= set(log_format)
    log_group_id = access_log["DestinationArn"]["Fn::GetAtt"][0]
    assert template["Resources"][log_group_id]["Properties"]["RetentionInDays"] == 90
    assertions.has_resource_properties(
        "AWS::ApiGateway::RestApi", {"EndpointConfiguration": {"Types": ["REGIONAL"]}}
    )
    assertions.resource_count_is("AWS::ApiGateway::Account", 1)


def test_execution_log_group_exists_before_the_stage(template: dict[str, Any]) -> None:
    _, stage = only(template, "AWS::ApiGateway::Stage")
    rest_api_id, _ = only(template, "AWS::ApiGateway::RestApi")
    (log_group_id,) = [
        key
        for key, group in resources(template, "AWS::Logs::LogGroup").items()
        if flatten(group["Properties"].get("LogGroupName", "")).startswith("API-Gateway-Execution-Logs_")
    ]
    group = template["Resources"][log_group_id]["Properties"]
    assert flatten(group["LogGroupName"]) == f"API-Gateway-Execution-Logs_<{rest_api_id}>/prod"
    assert group["RetentionInDays"] == 90
    assert log_group_id in stage["DependsOn"]


def test_one_invoke_permission_for_the_api_on_the_alias(template: dict[str, Any]) -> None:
    _, permission = only(template, "AWS::Lambda::Permission")
    alias_id, _ = only(template, "AWS::Lambda::Alias")
    rest_api_id, _ = only(template, "AWS::ApiGateway::RestApi")
    assert permission["Properties"]["FunctionName"] == {"Ref": alias_id}
    assert permission["Properties"]["Principal"] == "apigateway.amazonaws.com"
    assert flatten(permission["Properties"]["SourceArn"]).endswith(f"<{rest_api_id}>/*/*/*")
    api_function_id, _ = function(template, names.FunctionName.API)
    assert api_function_id not in json.dumps(permission)


def test_api_url_is_an_output(assertions: Template) -> None:
    assertions.has_output(names.Output.API_URL, {"Value": Match.any_value()})


def test_only_the_backend_principals_may_invoke(template: dict[str, Any]) -> None:
    _, api = only(template, "AWS::ApiGateway::RestApi")
    statements = {s["Sid"]: s for s in api["Properties"]["Policy"]["Statement"]}
    allow, deny = statements["BackendOnly"], statements["DenyEveryoneElse"]
    assert (allow["Effect"], allow["Action"], allow["Resource"]) == (
        "Allow",
        "execute-api:Invoke",
        "execute-api:/*",
    )
    assert allow["Condition"] == {"ArnLike": {"aws:PrincipalArn": list(BACKEND_PRINCIPALS)}}
    assert flatten(allow["Principal"]["AWS"]).endswith(":iam::123456789012:root")
    assert (deny["Effect"], deny["Principal"], deny["Action"]) == ("Deny", {"AWS": "*"}, "execute-api:Invoke")
    assert deny["Condition"] == {"ArnNotLike": {"aws:PrincipalArn": list(BACKEND_PRINCIPALS)}}


def test_the_gateways_own_answers_use_the_error_shape_and_are_documented(template: dict[str, Any]) -> None:
    answers = {
        r["Properties"]["ResponseType"]: r["Properties"]
        for r in resources(template, "AWS::ApiGateway::GatewayResponse").values()
    }
    assert set(answers) == {a.type.response_type for a in GATEWAY_ANSWERS}
    # no signature or an unserved path, a bad or expired one, IAM, throttling, a failed or slow function
    assert {
        "MISSING_AUTHENTICATION_TOKEN", "INVALID_SIGNATURE", "EXPIRED_TOKEN", "ACCESS_DENIED", "THROTTLED",
        "INTEGRATION_FAILURE", "INTEGRATION_TIMEOUT", "DEFAULT_4XX", "DEFAULT_5XX",
    } <= set(answers)  # fmt: skip
    committed = Path(__file__).resolve().parents[2] / "openapi.json"
    operations = [
        operation
        for methods in json.loads(committed.read_text(encoding="utf-8"))["paths"].values()
        for operation in methods.values()
    ]
    for response_type, answer in answers.items():
        body = ApiErrorResponse.model_validate_json(answer["ResponseTemplates"]["application/json"])
        assert body.error.code.isupper()
        assert any("\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" for c in body.error.message)
        status = answer.get("StatusCode")
        if status is None:  # DEFAULT_4XX / DEFAULT_5XX keep the status of what fell back to them
            continue
        needs_body = response_type in ("BAD_REQUEST_BODY", "REQUEST_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE")
        for operation in operations:
            if needs_body and "requestBody" not in operation:
                continue
            assert status in operation["responses"], (response_type, operation["operationId"])
