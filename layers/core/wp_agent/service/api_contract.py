"""The published OpenAPI document, finished: every error status the API (or API Gateway in front
of it, whose gateway responses use the same shape) can answer, with our error body, and no trace
of the validation shape Powertools documents but the API never sends (it answers 400 in ours)."""

from __future__ import annotations

import copy
import re
from typing import Any

from wp_agent.service.api_errors import ApiErrorCode

ERROR_SCHEMA = {"$ref": "#/components/schemas/ApiErrorResponse"}
_DESCRIPTIONS = {
    400: "invalid input",
    401: "no or malformed caller (X-Argo-User-Id)",
    403: "not allowed (IAM, or an administrator route)",
    404: "not found (also another user's resource)",
    409: "conflict with the resource's state",
    413: "body too large",
    415: "body is not application/json",
    422: "valid, but cannot be carried out as sent (x-error-codes says when)",
    429: "too many requests (API Gateway throttling)",
    500: "internal error",
    502: "the function failed (API Gateway)",
    503: "a service the request needs is unavailable; retry",
    504: "the function did not answer in time (API Gateway)",
}
_EVERY_OPERATION = (400, 401, 403, 404, 429, 500, 502, 503, 504)
_WITH_BODY = (409, 413, 415)
_POWERTOOLS_ONLY = ("HTTPValidationError", "ValidationError")

# What a request that follows the schema can still be refused for: rules that depend on stored
# state, the clock or another service, or that JSON Schema cannot state. Each is listed on its
# operation's response for the code's status as `x-error-codes` (code -> when), so a client (and the
# contract test) can tell a documented refusal from a rule the document forgot.
Refusals = dict[ApiErrorCode, str]
_MULTISITE_ONLY: Refusals = {
    ApiErrorCode.NOT_MULTISITE: "multisite options (or siteUrl) for a target that is not a multisite"
}
_BODY_LIMITS: Refusals = {
    ApiErrorCode.BODY_TOO_LARGE: "the body is over 1 MiB",
    ApiErrorCode.BODY_TOO_DEEP: "the body nests deeper than 32 levels (free-form history content blocks)",
}
_IDEMPOTENT: Refusals = {
    ApiErrorCode.IDEMPOTENCY_KEY_REUSED: "the Idempotency-Key was used before with another body"
}
REFUSALS: dict[tuple[str, str], Refusals] = {
    ("post", "/v1/sessions/{session_id}/messages"): {
        ApiErrorCode.TARGET_REQUIRED: "the session's first message has no targetId",
        ApiErrorCode.TARGET_MISMATCH: "targetId differs from the session's target",
        **_MULTISITE_ONLY,
    },
    ("post", "/v1/targets"): {
        ApiErrorCode.SECRET_OUTSIDE_PREFIX: "secretArn names a secret outside the deployment's target prefix",
    },
    ("post", "/v1/articles"): {
        **_MULTISITE_ONLY,
        ApiErrorCode.ARTICLE_TOO_LARGE: "the article is too large to keep for its publish job (over ~350 KB)",
    },
    ("post", "/v1/schedules"): {
        ApiErrorCode.INVALID_SCHEDULE_EXPRESSION: (
            "the expression has cron field values EventBridge does not take, fires more often than "
            "every 15 minutes, or never fires again (a past at() or year)"
        ),
        ApiErrorCode.AGENT_INPUT_TOO_LARGE: "agentInput is over the 8 KB a scheduled run can carry",
        ApiErrorCode.SCHEDULE_REJECTED: "EventBridge Scheduler refused the schedule",
        **_MULTISITE_ONLY,
    },
    ("post", "/v1/sessions/{session_id}/runs/{run_id}/undo"): {
        ApiErrorCode.RUN_NOT_FOUND: "the session has no run with this id (or the caller is not its requester)",
        ApiErrorCode.NOTHING_TO_UNDO: "no command of the run changed something that can be undone",
    },
    ("post", "/v1/schedules/proposals"): {
        ApiErrorCode.PROPOSAL_FAILED: "the model gave no valid schedule for the text after its corrections",
    },
}


def finish(generated: dict[str, Any]) -> dict[str, Any]:
    document = copy.deepcopy(generated)
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            responses: dict[str, Any] = operation.setdefault("responses", {})
            responses.pop("422", None)
            refusals = _refusals(method, path, operation)
            codes = set(_EVERY_OPERATION) | set(refusals)
            if method in ("post", "put", "patch", "delete"):
                codes |= set(_WITH_BODY)
            for code in sorted(codes):
                responses.setdefault(
                    str(code),
                    {
                        "description": _DESCRIPTIONS[code],
                        "content": {"application/json": {"schema": ERROR_SCHEMA}},
                    },
                )
            for code, listed in refusals.items():
                responses[str(code)]["x-error-codes"] = listed
    schemas = document.get("components", {}).get("schemas", {})
    for name in _POWERTOOLS_ONLY:
        schemas.pop(name, None)
    return document


def _takes_idempotency_key(operation: dict[str, Any]) -> bool:
    # header names come lower-cased in the generated document
    return any(p.get("name", "").lower() == "idempotency-key" for p in operation.get("parameters", []))


def _refusals(method: str, path: str, operation: dict[str, Any]) -> dict[int, dict[str, str]]:
    """The operation's documented refusals grouped by their codes' HTTP status."""
    listed: Refusals = dict(REFUSALS.get((method, path), {}))
    if "requestBody" in operation:
        listed |= _BODY_LIMITS
    if _takes_idempotency_key(operation):
        listed |= _IDEMPOTENT
    found: dict[int, dict[str, str]] = {}
    for code, when in listed.items():
        found.setdefault(code.status, {})[code.value] = when
    return found


def documented_refusals(operation: dict[str, Any], status: int) -> dict[str, str]:
    """The codes the operation documents for `status` beyond what its schema states."""
    refusals: dict[str, str] = operation.get("responses", {}).get(str(status), {}).get("x-error-codes", {})
    return refusals


def allowed_methods(document: dict[str, Any], path: str) -> list[str]:
    """The methods the document declares for the path (empty when no path matches)."""
    for template, operations in document["paths"].items():
        pattern = "".join(
            "[^/]+" if part.startswith("{") else re.escape(part)
            for part in re.split(r"(\{[^/]+\})", template)
        )
        if re.fullmatch(pattern, path):
            return sorted(method.upper() for method in operations)
    return []
