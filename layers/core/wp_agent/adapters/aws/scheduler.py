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
