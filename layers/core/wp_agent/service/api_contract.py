"""The published OpenAPI document, finished: every error status the API (or API Gateway in front
of it, whose gateway responses use the same shape) can answer, with our error body, and no trace
of the validation shape Powertools documents but the API never sends (it answers 400 in ours)."""

from __future__ import annotations

import copy
import re
from typing import Any

ERROR_SCHEMA = {"$ref": "#/components/schemas/ApiErrorResponse"}
_DESCRIPTIONS = {
    400: "invalid input",
    401: "no or malformed caller (X-Argo-User-Id)",
    403: "not allowed (IAM, or an administrator route)",
    404: "not found (also another user's resource)",
    409: "conflict with the resource's state",
    413: "body too large",
    415: "body is not application/json",
    422: "Idempotency-Key reused with another body",
    429: "too many requests (API Gateway throttling)",
    500: "internal error",
    502: "the function failed (API Gateway)",
    503: "a service the request needs is unavailable; retry",
    504: "the function did not answer in time (API Gateway)",
}
_EVERY_OPERATION = (400, 401, 403, 404, 429, 500, 502, 503, 504)
_WITH_BODY = (409, 413, 415)
_POWERTOOLS_ONLY = ("HTTPValidationError", "ValidationError")


def finish(generated: dict[str, Any]) -> dict[str, Any]:
    document = copy.deepcopy(generated)
    for operations in document["paths"].values():
        for method, operation in operations.items():
            responses: dict[str, Any] = operation.setdefault("responses", {})
            responses.pop("422", None)
            codes = list(_EVERY_OPERATION)
            if method in ("post", "put", "patch", "delete"):
                codes += _WITH_BODY
            if any(p.get("name") == "Idempotency-Key" for p in operation.get("parameters", [])):
                codes.append(422)
            for code in codes:
                responses.setdefault(
                    str(code),
                    {
                        "description": _DESCRIPTIONS[code],
                        "content": {"application/json": {"schema": ERROR_SCHEMA}},
                    },
                )
    schemas = document.get("components", {}).get("schemas", {})
    for name in _POWERTOOLS_ONLY:
        schemas.pop(name, None)
    return document


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
