"""Sessions: send an instruction, follow and decide a run, cancel it, undo it, and read the history."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from wp_agent.agent.session_state import SessionStatus
from wp_agent.http_api.routing import (
    ApprovalId,
    Cursor,
    KeyHeader,
    Limit,
    RunId,
    SessionId,
    UserHeader,
    answers,
    idempotent,
    json_response,
    request_runtime,
)
from wp_agent.models import field_rules
from wp_agent.models.api import (
    DEFAULT_PAGE_SIZE,
    ApprovalDecided,
    ApprovalDecisionRequest,
    RunAccepted,
    RunView,
    SessionMessageRequest,
    SessionPage,
    SessionView,
    UndoPreview,
    UndoRequest,
)
from wp_agent.service.api_identity import user_id_from
from wp_agent.service.history import HistoryService
from wp_agent.service.sessions import SessionService
from wp_agent.service.undo import undo_run

router = APIGatewayRouter()  # type: ignore[no-untyped-call]


@router.post(
    "/v1/sessions/<session_id>/messages",
    operation_id="postMessage",
    summary="Send an instruction: starts a run in the session (created on its first message)",
    responses=answers(202, "run started", RunAccepted),
)
def post_message(
    session_id: SessionId,
    body: Annotated[SessionMessageRequest, Body()],
    user: UserHeader,
    idempotency_key: KeyHeader = None,
) -> Response[str]:
    caller = user_id_from(user)
    service = SessionService(request_runtime())
    return idempotent(
        router,
        f"messages:{session_id}",
        caller,
        idempotency_key,
        lambda: json_response(202, service.post_message(session_id, caller, body)),
    )


@router.get(
    "/v1/sessions/<session_id>",
    operation_id="getSession",
    summary="Read a session: its current run's status, pending approval and result",
    responses=answers(200, "session", SessionView),
)
def get_session(session_id: SessionId, user: UserHeader) -> Response[str]:
    return json_response(200, SessionService(request_runtime()).view(session_id, user_id_from(user)))


@router.post(
    "/v1/sessions/<session_id>/approvals/<approval_id>",
    operation_id="decideApproval",
    summary="Approve or reject the commands a run holds (the requester only)",
    responses=answers(200, "decision recorded", ApprovalDecided),
)
def decide(
    session_id: SessionId,
    approval_id: ApprovalId,
    body: Annotated[ApprovalDecisionRequest, Body()],
    user: UserHeader,
    idempotency_key: KeyHeader = None,
) -> Response[str]:
    caller = user_id_from(user)
    service = SessionService(request_runtime())
    return idempotent(
        router,
        f"approval:{session_id}:{approval_id}",
        caller,
        idempotency_key,
        lambda: json_response(200, service.decide(session_id, approval_id, caller, body)),
    )


@router.post(
    "/v1/sessions/<session_id>/cancel",
    operation_id="cancelRun",
    summary="Cancel the session's running run (a command already running finishes)",
    responses=answers(200, "cancelled", SessionView),
)
def cancel(session_id: SessionId, user: UserHeader, idempotency_key: KeyHeader = None) -> Response[str]:
    user_id = user_id_from(user)
    service = SessionService(request_runtime())
    return idempotent(
        router,
        f"cancel:{session_id}",
        user_id,
        idempotency_key,
        lambda: json_response(200, service.cancel(session_id, user_id)),
    )


@router.post(
    "/v1/sessions/<session_id>/runs/<run_id>/undo",
    operation_id="undoRun",
    summary="Undo what a run changed (dryRun: only say what can be undone)",
    responses={
        **answers(200, "dryRun: what can be undone", UndoPreview),
        **answers(202, "undo run started", RunAccepted),
    },
)
def undo(
    session_id: SessionId,
    run_id: RunId,
    body: Annotated[UndoRequest, Body()],
    user: UserHeader,
    idempotency_key: KeyHeader = None,
) -> Response[str]:
    caller = user_id_from(user)
    service = SessionService(request_runtime())

    def answer() -> Response[str]:
        result = undo_run(service, session_id, run_id, caller, body)
        return json_response(200 if isinstance(result, UndoPreview) else 202, result)

    return idempotent(router, f"undo:{session_id}:{run_id}", caller, idempotency_key, answer)


@router.get(
    "/v1/sessions",
    operation_id="listSessions",
    summary="List the caller's sessions, newest first",
    responses=answers(200, "one page of sessions", SessionPage),
)
def list_sessions(
    user: UserHeader,
    target_id: Annotated[str | None, Query(alias="targetId", pattern=field_rules.TARGET_ID)] = None,
    status: Annotated[SessionStatus | None, Query(description="only sessions in this status")] = None,
    limit: Limit = DEFAULT_PAGE_SIZE,
    cursor: Cursor = None,
) -> Response[str]:
    history = HistoryService(request_runtime())
    page = history.sessions(
        user_id_from(user), target_id=target_id, status=status, limit=limit, cursor=cursor
    )
    return json_response(200, page)


@router.get(
    "/v1/sessions/<session_id>/runs/<run_id>",
    operation_id="getRun",
    summary="Read one run: instruction, answer, status and each command with its decision and outcome",
    responses=answers(200, "the run", RunView),
)
def get_run(session_id: SessionId, run_id: RunId, user: UserHeader) -> Response[str]:
    return json_response(200, HistoryService(request_runtime()).run(session_id, run_id, user_id_from(user)))
