"""Lambda: the HTTP API (API Gateway REST, IAM auth) — validates, calls the services, shapes responses.

The caller's user id comes from the `X-Argo-User-Id` header set by the Argo Note backend; the
API itself only accepts SigV4-signed requests. Errors are `{"error": {"code", "message", "fields"?}}`.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Body, Header, Path
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from aws_lambda_powertools.utilities.typing import LambdaContext

from wp_agent.config import ApiSettings
from wp_agent.errors import ConfigurationError
from wp_agent.models import field_rules
from wp_agent.models.api import (
    ApiErrorResponse,
    ApprovalDecided,
    ApprovalDecisionRequest,
    ArticleAccepted,
    ArticleJobView,
    ArticlePublishRequest,
    RunAccepted,
    SessionMessageRequest,
    SessionView,
    TargetList,
    TargetRegistration,
    UndoPreview,
    UndoRequest,
)
from wp_agent.models.base import CamelModel
from wp_agent.models.schedule import (
    ScheduleCreateRequest,
    ScheduleList,
    ScheduleProposalRequest,
    ScheduleProposalView,
    ScheduleView,
)
from wp_agent.models.target import Target
from wp_agent.service import api_contract
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.api_identity import is_admin, user_id_from
from wp_agent.service.api_requests import unreadable_body, validation_refusal
from wp_agent.service.articles import ArticleService
from wp_agent.service.idempotency import IdempotentRequests
from wp_agent.service.lambda_setup import handler_tools
from wp_agent.service.schedules import ScheduleService
from wp_agent.service.sessions import SessionService
from wp_agent.service.targets import TargetService
from wp_agent.service.undo import undo_run
from wp_agent.telemetry import REQUESTS_DURATION_SECONDS

logger, tracer, runtime = handler_tools(ApiSettings)
app = APIGatewayRestResolver(enable_validation=True)
_idempotency: dict[str, IdempotentRequests] = {}

UserHeader = Annotated[
    str | None,
    Header(
        alias="X-Argo-User-Id",
        pattern=field_rules.USER_ID,
        description="requester's user id (set by the backend); without it: 401",
    ),
]
KeyHeader = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        pattern=field_rules.IDEMPOTENCY_KEY,
        description="retry-safe POST key: the same key and body answer as the first time",
    ),
]
SessionId = Annotated[str, Path(pattern=field_rules.SESSION_ID)]
ApprovalId = Annotated[str, Path(pattern=field_rules.APPROVAL_ID)]
RunId = Annotated[str, Path(pattern=field_rules.RUN_ID)]
TargetId = Annotated[str, Path(pattern=field_rules.TARGET_ID)]
ArticleId = Annotated[str, Path(pattern=field_rules.ARTICLE_ID)]
ScheduleId = Annotated[str, Path(pattern=field_rules.SCHEDULE_ID)]
_ERRORS: dict[int, OpenAPIResponse] = {
    code: {"description": text, "content": {"application/json": {"model": ApiErrorResponse}}}
    for code, text in {
        400: "invalid input",
        403: "forbidden",
        404: "not found",
        409: "conflict",
        413: "body too large",
    }.items()
}


def _answer(status: int, description: str, model: type[CamelModel]) -> dict[int, OpenAPIResponse]:
    """OpenAPI responses of a route: its success body plus the shared error bodies."""
    return {
        status: {"description": description, "content": {"application/json": {"model": model}}},
        **_ERRORS,
    }


def _json(status: int, model: CamelModel) -> Response[str]:
    return Response(status_code=status, content_type="application/json", body=model.to_json())


def _error(error: ApiError) -> Response[str]:
    return Response(
        status_code=error.status,
        content_type="application/json",
        body=json.dumps(error.body(), ensure_ascii=False),
    )


def _idempotent(
    route: str, user: str, key: str | None, compute: Callable[[], Response[str]]
) -> Response[str]:
    settings = runtime().settings
    requests = _idempotency.setdefault("api", IdempotentRequests(settings.wp_agent_idempotency_table))
    requests.lambda_context = app.lambda_context

    def stored() -> dict[str, Any]:
        response = compute()
        return {"status": response.status_code, "body": response.body}

    result = requests.call(key, {"route": route, "user": user}, app.current_event.body or "", stored)
    return Response(
        status_code=int(result["status"]), content_type="application/json", body=str(result["body"])
    )


# Services raise domain refusals (ApiError with an ApiErrorCode); the code carries the HTTP status.
@app.exception_handler(ApiError)  # type: ignore[untyped-decorator]
def _api_error(error: ApiError) -> Response[str]:
    return _error(error)


@app.exception_handler(RequestValidationError)  # type: ignore[untyped-decorator]
def _validation_error(error: RequestValidationError) -> Response[str]:
    return _error(validation_refusal(error.errors()))


@app.not_found
def _no_route(error: Exception) -> Response[str]:
    allowed = allowed_methods(app.current_event.path)
    # A declared method that still found no route: a path parameter no resource can have.
    if allowed and app.current_event.http_method.upper() not in allowed:
        response = _error(
            ApiError(
                ApiErrorCode.METHOD_NOT_ALLOWED, f"このURLで使えるメソッドは {', '.join(allowed)} です。"
            )
        )
        response.headers["Allow"] = ", ".join(allowed)
        return response
    return _error(ApiError(ApiErrorCode.ROUTE_NOT_FOUND))


@app.exception_handler(Exception)  # type: ignore[untyped-decorator]
def _unexpected(error: Exception) -> Response[str]:
    logger.exception("unhandled error", extra={"type": "error"})
    return _error(ApiError(ApiErrorCode.INTERNAL_ERROR))


@app.exception_handler(ConfigurationError)  # type: ignore[untyped-decorator]
def _configuration_error(error: ConfigurationError) -> Response[str]:
    logger.error("configuration error", extra={"setting": error.setting})
    return _error(ApiError(ApiErrorCode.CONFIGURATION_ERROR))


# -- sessions ------------------------------------------------------------------------------------


@app.post(
    "/v1/sessions/<session_id>/messages",
    responses={
        202: {"description": "run started", "content": {"application/json": {"model": RunAccepted}}},
        **_ERRORS,
    },
)
def post_message(
    session_id: SessionId,
    body: Annotated[SessionMessageRequest, Body()],
    user: UserHeader = None,
    idempotency_key: KeyHeader = None,
) -> Response[str]:
    caller = user_id_from(user)
    service = SessionService(runtime())
    return _idempotent(
        f"messages:{session_id}",
        caller,
        idempotency_key,
        lambda: _json(202, service.post_message(session_id, caller, body)),
    )


@app.get(
    "/v1/sessions/<session_id>",
    responses={
        200: {"description": "session", "content": {"application/json": {"model": SessionView}}},
        **_ERRORS,
    },
)
def get_session(session_id: SessionId, user: UserHeader = None) -> Response[str]:
    return _json(200, SessionService(runtime()).view(session_id, user_id_from(user)))


@app.post(
    "/v1/sessions/<session_id>/approvals/<approval_id>",
    responses={
        200: {
            "description": "decision recorded",
            "content": {"application/json": {"model": ApprovalDecided}},
        },
        **_ERRORS,
    },
)
def decide(
    session_id: SessionId,
    approval_id: ApprovalId,
    body: Annotated[ApprovalDecisionRequest, Body()],
    user: UserHeader = None,
    idempotency_key: KeyHeader = None,
) -> Response[str]:
    caller = user_id_from(user)
    service = SessionService(runtime())
    return _idempotent(
        f"approval:{session_id}:{approval_id}",
        caller,
        idempotency_key,
        lambda: _json(200, service.decide(session_id, approval_id, caller, body)),
    )


@app.post(
    "/v1/sessions/<session_id>/cancel",
    responses={
        200: {"description": "cancelled", "content": {"application/json": {"model": SessionView}}},
        **_ERRORS,
    },
)
def cancel(session_id: SessionId, user: UserHeader = None) -> Response[str]:
    return _json(200, SessionService(runtime()).cancel(session_id, user_id_from(user)))


@app.post(
    "/v1/sessions/<session_id>/runs/<run_id>/undo",
    responses={
        200: {
            "description": "dryRun: what can be undone",
            "content": {"application/json": {"model": UndoPreview}},
        },
        202: {"description": "undo run started", "content": {"application/json": {"model": RunAccepted}}},
        **_ERRORS,
    },
)
def undo(
    session_id: SessionId,
    run_id: RunId,
    body: Annotated[UndoRequest, Body()],
    user: UserHeader = None,
    idempotency_key: KeyHeader = None,
) -> Response[str]:
    caller = user_id_from(user)
    service = SessionService(runtime())

    def answer() -> Response[str]:
        result = undo_run(service, session_id, run_id, caller, body)
        return _json(200 if isinstance(result, UndoPreview) else 202, result)

    return _idempotent(f"undo:{session_id}:{run_id}", caller, idempotency_key, answer)


# -- targets -------------------------------------------------------------------------------------


def _caller_is_admin() -> bool:
    arn = app.current_event.request_context.identity.user_arn
    return is_admin(arn, runtime().settings.wp_agent_admin_principals)


@app.post(
    "/v1/targets",
    responses={
        201: {"description": "registered", "content": {"application/json": {"model": Target}}},
        **_ERRORS,
    },
)
def register_target(body: Annotated[TargetRegistration, Body()]) -> Response[str]:
    caller = app.current_event.request_context.identity.user_arn or "unknown"
    return _json(201, TargetService(runtime()).register(body, admin=_caller_is_admin(), caller=caller))


@app.get(
    "/v1/targets",
    responses={
        200: {"description": "targets", "content": {"application/json": {"model": TargetList}}},
        **_ERRORS,
    },
)
def list_targets(user: UserHeader = None) -> Response[str]:
    admin = _caller_is_admin()
    return _json(200, TargetService(runtime()).list(None if admin else user_id_from(user), admin=admin))


@app.get(
    "/v1/targets/<target_id>",
    responses={200: {"description": "target", "content": {"application/json": {"model": Target}}}, **_ERRORS},
)
def get_target(target_id: TargetId, user: UserHeader = None) -> Response[str]:
    admin = _caller_is_admin()
    return _json(
        200, TargetService(runtime()).get(target_id, None if admin else user_id_from(user), admin=admin)
    )


# -- articles (spec §4.4) -------------------------------------------------------------------------


@app.post("/v1/articles", responses=_answer(202, "publish job accepted", ArticleAccepted))
def publish_article(
    body: Annotated[ArticlePublishRequest, Body()], user: UserHeader = None, idempotency_key: KeyHeader = None
) -> Response[str]:
    caller = user_id_from(user)
    service = ArticleService(runtime())
    return _idempotent(
        "articles",
        caller,
        idempotency_key,
        lambda: _json(202, service.submit(caller, body, idempotency_key=idempotency_key)),
    )


@app.get(
    "/v1/articles/<article_id>",
    responses=_answer(200, "publish job and its PublishArticleOutput", ArticleJobView),
)
def get_article(article_id: ArticleId, user: UserHeader = None) -> Response[str]:
    return _json(200, ArticleService(runtime()).view(user_id_from(user), article_id))


# -- schedules (spec §11.2) ------------------------------------------------------------------------


def _schedules() -> ScheduleService:
    return ScheduleService(runtime().settings, model=runtime().model)


@app.post("/v1/schedules", responses=_answer(201, "schedule created", ScheduleView))
def create_schedule(
    body: Annotated[ScheduleCreateRequest, Body()], user: UserHeader = None, idempotency_key: KeyHeader = None
) -> Response[str]:
    caller = user_id_from(user)
    return _idempotent(
        "schedules",
        caller,
        idempotency_key,
        lambda: _json(201, _schedules().create(caller, body, idempotency_key=idempotency_key)),
    )


@app.post(
    "/v1/schedules/proposals",
    responses=_answer(200, "a proposal to confirm (nothing is created)", ScheduleProposalView),
)
def propose_schedule(
    body: Annotated[ScheduleProposalRequest, Body()], user: UserHeader = None
) -> Response[str]:
    return _json(200, _schedules().propose(user_id_from(user), body))


@app.get("/v1/schedules", responses=_answer(200, "the caller's schedules", ScheduleList))
def list_schedules(user: UserHeader = None) -> Response[str]:
    return _json(200, _schedules().list(user_id_from(user)))


@app.get("/v1/schedules/<schedule_id>", responses=_answer(200, "schedule", ScheduleView))
def get_schedule(schedule_id: ScheduleId, user: UserHeader = None) -> Response[str]:
    return _json(200, _schedules().get(user_id_from(user), schedule_id))


@app.delete("/v1/schedules/<schedule_id>", responses={204: {"description": "deleted"}, **_ERRORS})
def delete_schedule(schedule_id: ScheduleId, user: UserHeader = None) -> Response[str]:
    _schedules().delete(user_id_from(user), schedule_id)
    return Response(status_code=204, body="")  # no body, so no content type


@functools.cache
def openapi_document() -> dict[str, Any]:
    """The served OpenAPI document (committed as openapi.json; a test keeps the two equal)."""
    generated = json.loads(app.get_openapi_json_schema(title="wp-agent API", version="1.0.0"))
    return api_contract.finish(generated)


def allowed_methods(path: str) -> list[str]:
    return api_contract.allowed_methods(openapi_document(), path)


@app.get(
    "/v1/openapi.json",
    responses={
        200: {"description": "this document", "content": {"application/json": {"schema": {"type": "object"}}}}
    },
)
def openapi() -> Response[str]:
    return Response(status_code=200, content_type="application/json", body=json.dumps(openapi_document()))


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    # Before any parsing: a body that is not one readable JSON object is refused here.
    refused = unreadable_body(event.get("httpMethod") or "", event.get("headers"), event.get("body"))
    if refused is not None:
        return {
            "statusCode": refused.status,
            "headers": {"Content-Type": "application/json"},
            "body": json.dumps(refused.body(), ensure_ascii=False),
        }
    started = time.perf_counter()
    try:
        return app.resolve(event, context)
    finally:
        runtime().telemetry.seconds(REQUESTS_DURATION_SECONDS, time.perf_counter() - started)
