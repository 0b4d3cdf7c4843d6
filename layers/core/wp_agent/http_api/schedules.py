"""Scheduled runs (spec §11.2): EventBridge Scheduler schedules that start a run."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from wp_agent.http_api.routing import (
    KeyHeader,
    ScheduleId,
    UserHeader,
    answers,
    idempotent,
    json_response,
    request_runtime,
)
from wp_agent.models.schedule import (
    ScheduleCreateRequest,
    ScheduleList,
    ScheduleProposalRequest,
    ScheduleProposalView,
    ScheduleView,
)
from wp_agent.service.api_identity import user_id_from
from wp_agent.service.schedules import ScheduleService

router = APIGatewayRouter()  # type: ignore[no-untyped-call]


def _schedules() -> ScheduleService:
    runtime = request_runtime()
    return ScheduleService(runtime.settings, model=runtime.model)


@router.post(
    "/v1/schedules",
    operation_id="createSchedule",
    summary="Create a schedule that starts a run at the times it names",
    responses=answers(201, "schedule created", ScheduleView),
)
def create_schedule(
    body: Annotated[ScheduleCreateRequest, Body()], user: UserHeader, idempotency_key: KeyHeader = None
) -> Response[str]:
    caller = user_id_from(user)
    return idempotent(
        router,
        "schedules",
        caller,
        idempotency_key,
        lambda: json_response(201, _schedules().create(caller, body, idempotency_key=idempotency_key)),
    )


@router.post(
    "/v1/schedules/proposals",
    operation_id="proposeSchedule",
    summary="Turn a Japanese description into a schedule to confirm (nothing is created)",
    responses=answers(200, "a proposal to confirm (nothing is created)", ScheduleProposalView),
)
def propose_schedule(
    body: Annotated[ScheduleProposalRequest, Body()], user: UserHeader, idempotency_key: KeyHeader = None
) -> Response[str]:
    user_id = user_id_from(user)
    return idempotent(
        router,
        "schedule-proposal",
        user_id,
        idempotency_key,
        lambda: json_response(200, _schedules().propose(user_id, body)),
    )


@router.get(
    "/v1/schedules",
    operation_id="listSchedules",
    summary="List the caller's schedules",
    responses=answers(200, "the caller's schedules", ScheduleList),
)
def list_schedules(user: UserHeader) -> Response[str]:
    return json_response(200, _schedules().list(user_id_from(user)))


@router.get(
    "/v1/schedules/<schedule_id>",
    operation_id="getSchedule",
    summary="Read one schedule with its next run times",
    responses=answers(200, "schedule", ScheduleView),
)
def get_schedule(schedule_id: ScheduleId, user: UserHeader) -> Response[str]:
    return json_response(200, _schedules().get(user_id_from(user), schedule_id))


@router.delete(
    "/v1/schedules/<schedule_id>",
    operation_id="deleteSchedule",
    summary="Delete a schedule",
    responses={204: {"description": "deleted"}},
)
def delete_schedule(schedule_id: ScheduleId, user: UserHeader) -> Response[str]:
    _schedules().delete(user_id_from(user), schedule_id)
    return Response(status_code=204, body="")  # no body, so no content type
