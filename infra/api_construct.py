"""API Gateway (REST, regional) in front of the api function; SigV4 (IAM) auth on every method.

The Argo Note backend signs each request with its IAM identity. A resource policy lets only the
configured backend principals (context `backendPrincipals`) invoke the API — an explicit deny for
every other principal, so no identity policy in the account can open it: the API trusts the
X-Argo-User-Id header of its caller, so anyone able to invoke it could act as any user. The api
function additionally checks admin routes against WP_AGENT_ADMIN_PRINCIPALS. Request validation here is coarse on
purpose: path parameters are required and JSON bodies must be objects. The field-level schema lives
once, in the handler's pydantic models (Powertools `enable_validation`), and is published at
GET /v1/openapi.json; copying it into API Gateway models would let the two drift.

What API Gateway answers itself (no or a bad signature, throttling, a function that failed or took
too long, an unserved path) comes in the API's error shape too (GATEWAY_ANSWERS); the OpenAPI
document lists those statuses for every operation.

Throttling: 50 requests/s steady, bursts of 100, for the whole stage. The only caller is one
backend; even a busy month (10,000 runs) averages well under 1 request/s, so this ceiling is
never met by legitimate use while capping what a leaked credential or a retry storm can do to
Lambda concurrency, DynamoDB and the Anthropic rate limit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aws_cdk import RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra import names
from infra.nag import acknowledge
from wp_agent.service.api_errors import ApiErrorCode, GatewayErrorCode

# Spec §10.1: access logs are kept 90 days.
ACCESS_LOG_RETENTION = logs.RetentionDays.THREE_MONTHS


@dataclass(frozen=True)
class Route:
    """One method of the API; `body` says whether it takes a JSON body."""

    method: str
    path: str
    body: bool


OPENAPI_DOCUMENT = Path(__file__).resolve().parents[1] / "openapi.json"


def routes_of(document: dict[str, Any]) -> tuple[Route, ...]:
    """Every operation of the published document (the committed openapi.json, which a test keeps
    equal to the served one), so the gateway serves exactly what the contract names."""
    return tuple(
        Route(method.upper(), path, body="requestBody" in operation)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    )


ROUTES: tuple[Route, ...] = routes_of(json.loads(OPENAPI_DOCUMENT.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class GatewayAnswer:
    """What API Gateway itself answers (before or instead of the function), in the API's error shape.
    `status` None keeps the status of the response that fell back to this one (DEFAULT_4XX/5XX)."""

    type: apigw.ResponseType
    status: int | None
    code: GatewayErrorCode | ApiErrorCode
    message_ja: str

    @property
    def body(self) -> str:
        error = {"code": self.code.value, "message": self.message_ja, "fields": []}
        return json.dumps({"error": error}, ensure_ascii=False)


_R = apigw.ResponseType
G = GatewayErrorCode
C = ApiErrorCode
GATEWAY_ANSWERS: tuple[GatewayAnswer, ...] = (
    GatewayAnswer(
        _R.MISSING_AUTHENTICATION_TOKEN,
        403,
        G.MISSING_AUTHENTICATION_TOKEN,
        # API Gateway says this both for an unsigned request and for a path it does not serve.
        "リクエストに署名（SigV4）がないか、このURLとメソッドの組み合わせは提供していません。",
    ),
    GatewayAnswer(
        _R.INVALID_SIGNATURE, 403, G.INVALID_SIGNATURE, "リクエストの署名（SigV4）が正しくありません。"
    ),
    GatewayAnswer(_R.EXPIRED_TOKEN, 403, G.EXPIRED_TOKEN, "認証情報の有効期限が切れています。"),
    GatewayAnswer(_R.ACCESS_DENIED, 403, G.ACCESS_DENIED, "このAPIを呼び出す権限がありません。"),
    GatewayAnswer(
        _R.THROTTLED, 429, G.THROTTLED, "リクエストが多すぎます。しばらく待ってから再度お試しください。"
    ),
    GatewayAnswer(
        _R.BAD_REQUEST_BODY, 400, C.VALIDATION_ERROR, "本文は JSON オブジェクト（{...}）で送ってください。"
    ),
    GatewayAnswer(_R.BAD_REQUEST_PARAMETERS, 400, C.VALIDATION_ERROR, "URLのパラメータが足りません。"),
    GatewayAnswer(_R.REQUEST_TOO_LARGE, 413, C.BODY_TOO_LARGE, "リクエストが大きすぎます。"),
    GatewayAnswer(
        _R.UNSUPPORTED_MEDIA_TYPE,
        415,
        C.UNSUPPORTED_MEDIA_TYPE,
        "本文は Content-Type: application/json（UTF-8）で送ってください。",
    ),
    GatewayAnswer(
        _R.INTEGRATION_TIMEOUT,
        504,
        G.GATEWAY_TIMEOUT,
        "処理が時間内に終わりませんでした。状態を確認してから再度お試しください。",
    ),
    GatewayAnswer(
        _R.INTEGRATION_FAILURE,
        504,
        G.INTEGRATION_FAILURE,
        "APIの処理を呼び出せませんでした。しばらくしてから再度お試しください。",
    ),
    GatewayAnswer(
        _R.DEFAULT_4_XX, None, G.GATEWAY_REFUSED, "API Gateway がリクエストを受け付けませんでした。"
    ),
    # e.g. 502 when the function failed before it could answer
    GatewayAnswer(
        _R.DEFAULT_5_XX,
        None,
        G.GATEWAY_ERROR,
        "APIでエラーが発生しました。しばらくしてから再度お試しください。",
    ),
)

# One JSON line per request; userArn is the SigV4 caller.
ACCESS_LOG_FORMAT = {
    "requestId": "$context.requestId",
    "extendedRequestId": "$context.extendedRequestId",
    "requestTime": "$context.requestTime",
    "httpMethod": "$context.httpMethod",
    "resourcePath": "$context.resourcePath",
    "path": "$context.path",
    "status": "$context.status",
    "protocol": "$context.protocol",
    "responseLength": "$context.responseLength",
    "responseLatency": "$context.responseLatency",
    "integrationLatency": "$context.integration.latency",
    "integrationStatus": "$context.integration.status",
    "sourceIp": "$context.identity.sourceIp",
    "userArn": "$context.identity.userArn",
    "caller": "$context.identity.caller",
    "userAgent": "$context.identity.userAgent",
    "errorMessage": "$context.error.message",
    "xrayTraceId": "$context.xrayTraceId",
}


def invoke_policy(backend_principals: tuple[str, ...]) -> iam.PolicyDocument:
    """Invoke for the backend principals only: allowed by ARN (their accounts as principals, the
    exact role/user by aws:PrincipalArn), everyone else denied explicitly."""
    accounts = sorted({arn.split(":")[4] for arn in backend_principals})
    condition = {"aws:PrincipalArn": list(backend_principals)}
    return iam.PolicyDocument(
        statements=[
            iam.PolicyStatement(
                sid="BackendOnly",
                effect=iam.Effect.ALLOW,
                principals=[iam.AccountPrincipal(account) for account in accounts],
                actions=["execute-api:Invoke"],
                resources=["execute-api:/*"],
                conditions={"ArnLike": condition},
            ),
            iam.PolicyStatement(
                sid="DenyEveryoneElse",
                effect=iam.Effect.DENY,
                principals=[iam.AnyPrincipal()],
                actions=["execute-api:Invoke"],
                resources=["execute-api:/*"],
                conditions={"ArnNotLike": condition},
            ),
        ]
    )


class ApiConstruct(Construct):
    """The REST API, its stage settings, validators and routes."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        handler: lambda_.IFunction,
        backend_principals: tuple[str, ...],
    ) -> None:
        super().__init__(scope, construct_id)
        self.access_logs = logs.LogGroup(
            self, "AccessLogs", retention=ACCESS_LOG_RETENTION, removal_policy=RemovalPolicy.DESTROY
        )
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            description="wp-agent: Argo Note WP-CLI Agent API (SigV4)",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            policy=invoke_policy(backend_principals),
            # Stage logging needs the account-level CloudWatch role; it is shared by every API in
            # the account and region, so it outlives this stack.
            cloud_watch_role=True,
            cloud_watch_role_removal_policy=RemovalPolicy.RETAIN,
            default_method_options=apigw.MethodOptions(authorization_type=apigw.AuthorizationType.IAM),
            deploy_options=apigw.StageOptions(
                stage_name=names.API_STAGE_NAME,
                access_log_destination=apigw.LogGroupLogDestination(self.access_logs),
                access_log_format=apigw.AccessLogFormat.custom(json.dumps(ACCESS_LOG_FORMAT)),
                # ERROR, not INFO: the access log already has a line per request, and INFO
                # execution logs cost ~20 lines per call. Switch to INFO while debugging.
                logging_level=apigw.MethodLoggingLevel.ERROR,
                # Bodies hold instructions and command output: never in execution logs.
                data_trace_enabled=False,
                metrics_enabled=True,
                tracing_enabled=True,
                throttling_rate_limit=names.API_THROTTLE_RATE_LIMIT,
                throttling_burst_limit=names.API_THROTTLE_BURST_LIMIT,
            ),
        )
        # API Gateway would create its execution-log group itself, without retention; create it first.
        self.execution_logs = logs.LogGroup(
            self,
            "ExecutionLogs",
            log_group_name=f"API-Gateway-Execution-Logs_{self.rest_api.rest_api_id}/{names.API_STAGE_NAME}",
            retention=ACCESS_LOG_RETENTION,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.rest_api.deployment_stage.node.add_dependency(self.execution_logs)
        self.body_validator = self.rest_api.add_request_validator(
            "BodyValidator", validate_request_body=True, validate_request_parameters=True
        )
        self.parameters_validator = self.rest_api.add_request_validator(
            "ParametersValidator", validate_request_parameters=True
        )
        self.json_object_model = self.rest_api.add_model(
            "JsonObject",
            content_type="application/json",
            model_name="JsonObject",
            schema=apigw.JsonSchema(
                schema=apigw.JsonSchemaVersion.DRAFT4,
                title="JsonObject",
                type=apigw.JsonSchemaType.OBJECT,
            ),
        )
        # One invoke permission for the whole API (api-id/*/*/*) instead of one per method, which
        # would put 14 statements into the alias's resource policy. It also covers console test calls.
        integration = apigw.LambdaIntegration(handler, proxy=True, scope_permission_to_method=False)
        for route in ROUTES:
            self._add_route(route, integration)
        for answer in GATEWAY_ANSWERS:
            self.rest_api.add_gateway_response(
                f"Gateway{answer.type.response_type.title().replace('_', '')}",
                type=answer.type,
                status_code=None if answer.status is None else str(answer.status),
                templates={"application/json": answer.body},
            )

        acknowledge(
            self.rest_api,
            "AwsSolutions-COG4",
            "Callers are AWS principals (the Argo Note backend) authenticated with SigV4: every "
            "method uses AWS_IAM authorization, there are no end-user tokens to check with Cognito.",
        )
        acknowledge(
            self.rest_api,
            "AwsSolutions-APIG3",
            "IAM-authenticated, server-to-server API: unsigned requests are rejected before any "
            "integration runs and stage throttling caps the rate. WAF ($5/month + rules + requests) "
            "adds little here; attach a web ACL if the API is ever exposed to browsers.",
        )
        acknowledge(
            self.rest_api,
            "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
            "AmazonAPIGatewayPushToCloudWatchLogs]",
            "The account-level API Gateway logging role: AWS's documented managed policy for it; "
            "API Gateway writes execution logs to log groups it creates itself.",
        )

    @property
    def url(self) -> str:
        return self.rest_api.url

    def _add_route(self, route: Route, integration: apigw.LambdaIntegration) -> None:
        resource = self.rest_api.root.resource_for_path(route.path)
        path_parameters = [segment[1:-1] for segment in route.path.split("/") if segment.startswith("{")]
        resource.add_method(
            route.method,
            integration,
            authorization_type=apigw.AuthorizationType.IAM,
            request_parameters={f"method.request.path.{name}": True for name in path_parameters},
            request_validator=self.body_validator if route.body else self.parameters_validator,
            request_models={"application/json": self.json_object_model} if route.body else None,
        )
