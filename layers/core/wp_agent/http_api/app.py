"""The HTTP API's resolver: the routes of every resource module, how errors answer, and the published
OpenAPI document. `handle` serves one API Gateway REST (proxy) event with a runtime: the api Lambda's
(functions/api/handler.py), or `wp-agent api serve`'s on a laptop.

The caller's user id comes from the `X-Argo-User-Id` header set by the Argo Note backend; on AWS the
API only accepts SigV4-signed requests. Errors are `{"error": {"code", "message", "fields"?}}`.
The resolver keeps the current request in class-level state (Powertools), so one process serves one
request at a time through it, as a Lambda container does.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from wp_agent.errors import ConfigurationError
from wp_agent.http_api import articles, fleets, schedules, sessions, targets
from wp_agent.http_api.routing import error_response, serving
from wp_agent.service import api_contract
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.api_requests import unreadable_body, validation_refusal
from wp_agent.service.openapi_clients import REQUEST_ID_HEADER
from wp_agent.service.runtime import AwsRuntime
from wp_agent.telemetry import REQUESTS_DURATION_SECONDS

logger = logging.getLogger(__name__)

TITLE = "wp-agent API"
VERSION = "1.0.0"

app = APIGatewayRestResolver(enable_validation=True)
for module in (sessions, targets, articles, schedules, fleets):
    app.include_router(module.router)


# Services raise domain refusals (ApiError with an ApiErrorCode); the code carries the HTTP status.
@app.exception_handler(ApiError)  # type: ignore[untyped-decorator]
def _api_error(error: ApiError) -> Response[str]:
    return error_response(error)


@app.exception_handler(RequestValidationError)  # type: ignore[untyped-decorator]
def _validation_error(error: RequestValidationError) -> Response[str]:
    return error_response(validation_refusal(error.errors()))


@app.not_found
def _no_route(error: Exception) -> Response[str]:
    allowed = allowed_methods(app.current_event.path)
    # A declared method that still found no route: a path parameter no resource can have.
    if allowed and app.current_event.http_method.upper() not in allowed:
        response = error_response(
            ApiError(
                ApiErrorCode.METHOD_NOT_ALLOWED, f"このURLで使えるメソッドは {', '.join(allowed)} です。"
            )
        )
        response.headers["Allow"] = ", ".join(allowed)
        return response
    return error_response(ApiError(ApiErrorCode.ROUTE_NOT_FOUND))


@app.exception_handler(Exception)  # type: ignore[untyped-decorator]
def _unexpected(error: Exception) -> Response[str]:
    logger.exception("unhandled error", extra={"type": "error"})
    return error_response(ApiError(ApiErrorCode.INTERNAL_ERROR))


@app.exception_handler(ConfigurationError)  # type: ignore[untyped-decorator]
def _configuration_error(error: ConfigurationError) -> Response[str]:
    logger.error("configuration error", extra={"setting": error.setting})
    return error_response(ApiError(ApiErrorCode.CONFIGURATION_ERROR))


@app.get(
    "/v1/openapi.json",
    operation_id="getOpenApiDocument",
    summary="This OpenAPI document",
    responses={
        200: {"description": "this document", "content": {"application/json": {"schema": {"type": "object"}}}}
    },
)
def openapi() -> Response[str]:
    return Response(status_code=200, content_type="application/json", body=json.dumps(openapi_document()))


@functools.cache
def openapi_document() -> dict[str, Any]:
    """The served OpenAPI document (committed as openapi.json; a test keeps the two equal)."""
    generated = json.loads(app.get_openapi_json_schema(title=TITLE, version=VERSION))
    return api_contract.finish(generated)


def allowed_methods(path: str) -> list[str]:
    return api_contract.allowed_methods(openapi_document(), path)


def handle(event: dict[str, Any], context: Any, runtime: Callable[[], AwsRuntime]) -> dict[str, Any]:
    """One API Gateway REST proxy event -> its proxy response, with the runtime the routes use."""
    # Before any parsing: a body that is not one readable JSON object is refused here.
    refused = unreadable_body(event.get("httpMethod") or "", event.get("headers"), event.get("body"))
    if refused is not None:
        answer = {
            "statusCode": refused.status,
            "headers": {"Content-Type": "application/json"},
            "body": json.dumps(refused.body(), ensure_ascii=False),
        }
        return _with_request_id(answer, event)
    started = time.perf_counter()
    try:
        with serving(runtime):
            return _with_request_id(app.resolve(event, context), event)
    finally:
        runtime().telemetry.seconds(REQUESTS_DURATION_SECONDS, time.perf_counter() - started)


def _with_request_id(answer: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """Every answer names its request (API Gateway's request id; `api serve` makes one per request),
    the id the logs and a support request refer to."""
    request_id = str((event.get("requestContext") or {}).get("requestId") or "")
    if not request_id:
        return answer
    if "multiValueHeaders" in answer:  # the answer's own form (API Gateway merges the two forms)
        answer["multiValueHeaders"][REQUEST_ID_HEADER] = [request_id]
    else:
        answer.setdefault("headers", {})[REQUEST_ID_HEADER] = request_id
    return answer
