"""API Gateway REST (proxy) events for invoking the `api` handler in-process, as IAM-authenticated calls."""

from __future__ import annotations

import json
import uuid
from typing import Any

BACKEND_ROLE_ARN = "arn:aws:sts::123456789012:assumed-role/ArgoBackend/session"
ADMIN_ROLE_ARN = "arn:aws:sts::123456789012:assumed-role/ArgoAdmin/ops"


def rest_event(
    method: str,
    path: str,
    *,
    body: Any = None,
    user: str | None = "user-1",
    headers: dict[str, str] | None = None,
    caller_arn: str = BACKEND_ROLE_ARN,
    raw_body: str | None = None,
) -> dict[str, Any]:
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    if user is not None:
        all_headers["X-Argo-User-Id"] = user
    text = (
        raw_body
        if raw_body is not None
        else (json.dumps(body, ensure_ascii=False) if body is not None else None)
    )
    return {
        "resource": path,
        "path": path,
        "httpMethod": method,
        "headers": all_headers,
        "multiValueHeaders": {k: [v] for k, v in all_headers.items()},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": path,
            "httpMethod": method,
            "path": f"/prod{path}",
            "stage": "prod",
            "requestId": str(uuid.uuid4()),
            "accountId": "123456789012",
            "identity": {"userArn": caller_arn, "caller": caller_arn, "sourceIp": "127.0.0.1"},
        },
        "body": text,
        "isBase64Encoded": False,
    }


class LambdaContextStub:
    function_name = "api"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:ap-northeast-1:123456789012:function:api"
    aws_request_id = "req-1"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 29_000


def call(handler: Any, event: dict[str, Any]) -> tuple[int, Any]:
    response = handler(event, LambdaContextStub())
    body = response.get("body")
    return int(response["statusCode"]), json.loads(body) if body else None
