"""EventBridge Scheduler: the boto3 client the schedules service drives, and how its failures read."""

from __future__ import annotations

from typing import Any

from wp_agent.adapters.aws.clients import client


def scheduler_client() -> Any:
    return client("scheduler")


def failure_code(exc: Exception) -> str:
    """The AWS error code of a failed call (ValidationException, ResourceNotFoundException, …), or
    the exception's type name when the call never got an answer."""
    from botocore.exceptions import ClientError

    return str(exc.response["Error"]["Code"]) if isinstance(exc, ClientError) else type(exc).__name__


# What UpdateSchedule takes back from GetSchedule (it replaces the whole schedule).
_KEPT_ON_UPDATE = (
    "ScheduleExpression",
    "ScheduleExpressionTimezone",
    "FlexibleTimeWindow",
    "Target",
    "Description",
    "StartDate",
    "EndDate",
    "KmsKeyArn",
    "ActionAfterCompletion",
)


def disable_schedule(group: str, name: str) -> bool:
    """Set a schedule's state to DISABLED (it stays, and fires no more); False when it does not exist."""
    from botocore.exceptions import ClientError

    scheduler = scheduler_client()
    try:
        current = scheduler.get_schedule(GroupName=group, Name=name)
    except ClientError as exc:
        if exc.response["Error"]["Code"] == "ResourceNotFoundException":
            return False
        raise
    if current.get("State") == "DISABLED":
        return True
    kept = {key: current[key] for key in _KEPT_ON_UPDATE if key in current}
    scheduler.update_schedule(GroupName=group, Name=name, State="DISABLED", **kept)
    return True
