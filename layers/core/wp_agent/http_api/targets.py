"""Registered WordPress targets: register (administrators), read, change, remove, check, read the
target's audit trail (owners and administrators), and manage its members' roles (owners, admin
members and administrators)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import AwareDatetime

from wp_agent.agent.audit_events import AuditEventType
from wp_agent.http_api.routing import (
    Cursor,
    KeyHeader,
    Limit,
    OptionalUserHeader,
    TargetId,
    answers,
    caller_of,
    idempotent,
    json_response,
    request_runtime,
)
from wp_agent.models import field_rules
from wp_agent.models.api import (
    DEFAULT_PAGE_SIZE,
    ActivityPage,
    MemberList,
    MemberRemoved,
    MemberRoleRequest,
    MemberView,
    TargetCheckResult,
    TargetDeleted,
    TargetList,
    TargetRegistration,
    TargetUpdate,
    TargetUpdated,
)
from wp_agent.models.target import Target
from wp_agent.service.api_identity import is_admin
from wp_agent.service.history import HistoryService
from wp_agent.service.members import MemberService
from wp_agent.service.target_lifecycle import TargetLifecycle
from wp_agent.service.targets import TargetService

router = APIGatewayRouter()  # type: ignore[no-untyped-call]
MemberId = Annotated[str, Path(pattern=field_rules.USER_ID, description="the member's user id")]


@router.post(
    "/v1/targets",
    operation_id="registerTarget",
    summary="Register a WordPress target (administrators only)",
    responses=answers(201, "registered", Target),
)
def register_target(
    body: Annotated[TargetRegistration, Body()], idempotency_key: KeyHeader = None
) -> Response[str]:
    arn = router.current_event.request_context.identity.user_arn
    admin = is_admin(arn, request_runtime().settings.wp_agent_admin_principals)
    service = TargetService(request_runtime())
    caller = arn or "unknown"
    return idempotent(
        router,
        "target-register",
        caller,
        idempotency_key,
        lambda: json_response(201, service.register(body, admin=admin, caller=caller)),
    )


@router.get(
    "/v1/targets",
    operation_id="listTargets",
    summary="List the targets the caller owns (administrators: every target)",
    responses=answers(200, "targets", TargetList),
)
def list_targets(user: OptionalUserHeader = None) -> Response[str]:
    caller = caller_of(router, user)
    return json_response(
        200,
        TargetService(request_runtime()).list(None if caller.admin else caller.user_id, admin=caller.admin),
    )


@router.get(
    "/v1/targets/<target_id>",
    operation_id="getTarget",
    summary="Read one target",
    responses=answers(200, "target", Target),
)
def get_target(target_id: TargetId, user: OptionalUserHeader = None) -> Response[str]:
    caller = caller_of(router, user)
    service = TargetService(request_runtime())
    return json_response(
        200, service.get(target_id, None if caller.admin else caller.user_id, admin=caller.admin)
    )


@router.patch(
    "/v1/targets/<target_id>",
    operation_id="updateTarget",
    summary="Change a target: WordPress user, owners, SSH key or pinned host key (audited)",
    responses=answers(200, "changed; keys shown as fingerprints", TargetUpdated),
)
def update_target(
    target_id: TargetId,
    body: Annotated[TargetUpdate, Body()],
    user: OptionalUserHeader = None,
    idempotency_key: KeyHeader = None,
) -> Response[str]:
    caller = caller_of(router, user)
    lifecycle = TargetLifecycle(request_runtime())
    return idempotent(
        router,
        f"target-update:{target_id}",
        caller.principal,
        idempotency_key,
        lambda: json_response(200, lifecycle.update(target_id, caller, body)),
    )


@router.delete(
    "/v1/targets/<target_id>",
    operation_id="deleteTarget",
    summary="Remove a target: no new runs, schedules disabled, SSH secret scheduled for deletion",
    responses=answers(200, "removed (a repeat finishes an interrupted removal)", TargetDeleted),
)
def delete_target(target_id: TargetId, user: OptionalUserHeader = None) -> Response[str]:
    caller = caller_of(router, user)
    return json_response(200, TargetLifecycle(request_runtime()).delete(target_id, caller))


@router.post(
    "/v1/targets/<target_id>/checks",
    operation_id="checkTarget",
    summary="Check a target without the model: reachable, host key, login, wp and WordPress, sites",
    responses=answers(200, "the checks, each with its fix when it failed", TargetCheckResult),
)
def check_target(
    target_id: TargetId, user: OptionalUserHeader = None, idempotency_key: KeyHeader = None
) -> Response[str]:
    caller = caller_of(router, user)
    lifecycle = TargetLifecycle(request_runtime())
    return idempotent(
        router,
        f"target-check:{target_id}",
        caller.principal,
        idempotency_key,
        lambda: json_response(200, lifecycle.check(target_id, caller)),
    )


@router.get(
    "/v1/targets/<target_id>/activity",
    operation_id="getTargetActivity",
    summary="Read a target's audit trail, newest first (owners and administrators)",
    responses=answers(200, "one page of audit records, masked", ActivityPage),
)
def target_activity(
    target_id: TargetId,
    user: OptionalUserHeader = None,
    since: Annotated[AwareDatetime | None, Query(alias="from", description="records at or after")] = None,
    until: Annotated[AwareDatetime | None, Query(alias="to", description="records before")] = None,
    types: Annotated[list[AuditEventType] | None, Query(alias="type", description="only these types")] = None,
    limit: Limit = DEFAULT_PAGE_SIZE,
    cursor: Cursor = None,
) -> Response[str]:
    caller = caller_of(router, user)
    page = HistoryService(request_runtime()).activity(
        target_id, caller, since=since, until=until, types=types, limit=limit, cursor=cursor
    )
    return json_response(200, page)


@router.get(
    "/v1/targets/<target_id>/members",
    operation_id="listTargetMembers",
    summary="List a target's owners (admins) and members with their roles",
    responses=answers(200, "owners first, then members", MemberList),
)
def list_members(target_id: TargetId, user: OptionalUserHeader = None) -> Response[str]:
    caller = caller_of(router, user)
    return json_response(200, MemberService(request_runtime()).list(target_id, caller))


@router.put(
    "/v1/targets/<target_id>/members/<user_id>",
    operation_id="putTargetMember",
    summary="Give a user a role on the target: viewer, editor or admin (audited)",
    responses=answers(200, "the member with the role (the same role again changes nothing)", MemberView),
)
def put_member(
    target_id: TargetId,
    user_id: MemberId,
    body: Annotated[MemberRoleRequest, Body()],
    user: OptionalUserHeader = None,
) -> Response[str]:
    caller = caller_of(router, user)
    return json_response(200, MemberService(request_runtime()).put(target_id, user_id, body.role, caller))


@router.delete(
    "/v1/targets/<target_id>/members/<user_id>",
    operation_id="deleteTargetMember",
    summary="Take a member off the target (their running sessions end at the next turn; audited)",
    responses=answers(200, "removed (removed: false when the user was not a member)", MemberRemoved),
)
def delete_member(target_id: TargetId, user_id: MemberId, user: OptionalUserHeader = None) -> Response[str]:
    caller = caller_of(router, user)
    return json_response(200, MemberService(request_runtime()).remove(target_id, user_id, caller))
