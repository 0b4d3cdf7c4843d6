"""What every route module shares: the declared headers and path parameters, the response helpers,
who the caller is, the runtime of this request, and Idempotency-Key handling.

The runtime of the request being served is held per thread (a context variable), not in the
resolver: a Lambda container serves one request at a time, but in one process (the tests'
containers, several at once) each request must run with its own container's runtime."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from wp_agent.models import field_rules
from wp_agent.models.api import MAX_PAGE_SIZE, ApiErrorResponse
from wp_agent.models.base import CamelModel
from wp_agent.service.api_errors import ApiError
from wp_agent.service.api_identity import USER_HEADER, is_admin, user_id_from
from wp_agent.service.openapi_clients import REPLAYED_HEADER
from wp_agent.service.runtime import AwsRuntime
from wp_agent.service.targets import Caller

_runtime: ContextVar[Callable[[], AwsRuntime]] = ContextVar("runtime")

UserHeader = Annotated[
    str,
    Header(
        alias=USER_HEADER,
        pattern=field_rules.USER_ID,
        description="the requester's user id, set by the backend (without it: 401 USER_ID_REQUIRED)",
    ),
]
OptionalUserHeader = Annotated[
    str | None,
    Header(
        alias=USER_HEADER,
        pattern=field_rules.USER_ID,
        description="the requester's user id; an administrator principal may leave it out",
    ),
]
KeyHeader = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        pattern=field_rules.IDEMPOTENCY_KEY,
        description="retry-safe key: the same key and body answer as the first time (kept 1 hour)",
    ),
]
SessionId = Annotated[str, Path(pattern=field_rules.SESSION_ID)]
ApprovalId = Annotated[str, Path(pattern=field_rules.APPROVAL_ID)]
RunId = Annotated[str, Path(pattern=field_rules.RUN_ID)]
TargetId = Annotated[str, Path(pattern=field_rules.TARGET_ID)]
ArticleId = Annotated[str, Path(pattern=field_rules.ARTICLE_ID)]
ScheduleId = Annotated[str, Path(pattern=field_rules.SCHEDULE_ID)]
Limit = Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE, description="items per page")]
Cursor = Annotated[
    str | None,
    Query(max_length=2_048, pattern=r"^[A-Za-z0-9_\-]+$", description="`nextCursor` of the previous page"),
]


def answers(status: int, description: str, model: type[CamelModel]) -> dict[int, OpenAPIResponse]:
    """A route's success answer; its error answers are added by service/api_contract.py."""
    return {status: {"description": description, "content": {"application/json": {"model": model}}}}


ERROR_BODY: dict[str, Any] = {"application/json": {"model": ApiErrorResponse}}


def json_response(status: int, model: CamelModel) -> Response[str]:
    return Response(status_code=status, content_type="application/json", body=model.to_json())


def error_response(error: ApiError) -> Response[str]:
    return Response(
        status_code=error.status,
        content_type="application/json",
        body=json.dumps(error.body(), ensure_ascii=False),
    )


@contextmanager
def serving(runtime: Callable[[], AwsRuntime]) -> Iterator[None]:
    """The routes of one request run with `runtime` (the Lambda's, or `wp-agent api serve`'s)."""
    token = _runtime.set(runtime)
    try:
        yield
    finally:
        _runtime.reset(token)


def request_runtime() -> AwsRuntime:
    """The runtime this request runs with."""
    return _runtime.get()()


def caller_of(router: APIGatewayRouter, user: str | None) -> Caller:
    """The caller of an owner-or-administrator route: an administrator principal needs no user id."""
    arn = router.current_event.request_context.identity.user_arn
    admin = is_admin(arn, request_runtime().settings.wp_agent_admin_principals)
    user_id = user_id_from(user) if user is not None or not admin else None
    return Caller(user_id=user_id, admin=admin, principal=user_id or arn or "admin")


def idempotent(
    router: APIGatewayRouter, route: str, user: str, key: str | None, compute: Callable[[], Response[str]]
) -> Response[str]:
    requests = request_runtime().idempotent_requests
    requests.lambda_context = router.lambda_context
    computed = False

    def stored() -> dict[str, Any]:
        nonlocal computed
        computed = True
        response = compute()
        return {"status": response.status_code, "body": response.body}

    body = router.current_event.body or ""
    result = requests.call(key, {"route": route, "user": user}, body, stored)
    # As Stripe says it: this answer is the stored one of an earlier request with the same key.
    replayed = {REPLAYED_HEADER: "true"} if key is not None and not computed else None
    return Response(
        status_code=int(result["status"]),
        content_type="application/json",
        body=str(result["body"]),
        headers=replayed,
    )
