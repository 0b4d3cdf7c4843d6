"""Fleet runs: one instruction over many targets — planned once on a canary, approved once, the canary
first, then the rest with bounded concurrency; one report (service/fleets.py)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from wp_agent.http_api.routing import (
    KeyHeader,
    UserHeader,
    answers,
    idempotent,
    json_response,
    request_runtime,
)
from wp_agent.models import field_rules
from wp_agent.models.fleet import FleetDecisionRequest, FleetReport, FleetRunAccepted, FleetRunRequest
from wp_agent.service.api_identity import user_id_from
from wp_agent.service.fleets import FleetService

router = APIGatewayRouter()  # type: ignore[no-untyped-call]
FleetRunId = Annotated[str, Path(pattern=field_rules.FLEET_RUN_ID)]


@router.post(
    "/v1/fleet-runs",
    operation_id="startFleetRun",
    summary="Run one instruction over many targets: planned on the canary, one approval, then every site",
    responses=answers(202, "fleet run accepted: its plan is made on the canary first", FleetRunAccepted),
)
def start_fleet_run(
    body: Annotated[FleetRunRequest, Body()], user: UserHeader, idempotency_key: KeyHeader = None
) -> Response[str]:
    caller = user_id_from(user)
    service = FleetService(request_runtime())
    return idempotent(
        router, "fleet-runs", caller, idempotency_key, lambda: json_response(202, service.start(caller, body))
    )


@router.get(
    "/v1/fleet-runs/<fleet_run_id>",
    operation_id="getFleetRun",
    summary="Read a fleet run: its plan, its approval, every site's result",
    responses=answers(200, "the fleet run's report", FleetReport),
)
def get_fleet_run(fleet_run_id: FleetRunId, user: UserHeader) -> Response[str]:
    return json_response(200, FleetService(request_runtime()).view(user_id_from(user), fleet_run_id))


@router.post(
    "/v1/fleet-runs/<fleet_run_id>/decision",
    operation_id="decideFleetRun",
    summary="Approve or reject a fleet run's plan (one decision for every site)",
    responses=answers(200, "the decision taken; the fleet run's report", FleetReport),
)
def decide_fleet_run(
    fleet_run_id: FleetRunId,
    body: Annotated[FleetDecisionRequest, Body()],
    user: UserHeader,
    idempotency_key: KeyHeader = None,
) -> Response[str]:
    caller = user_id_from(user)
    service = FleetService(request_runtime())
    return idempotent(
        router,
        f"fleet-decision:{fleet_run_id}",
        caller,
        idempotency_key,
        lambda: json_response(200, service.decide(caller, fleet_run_id, body)),
    )
