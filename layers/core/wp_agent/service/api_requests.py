"""What the API refuses before any route reads a request: a body that is not one readable JSON
object (too large, another media type, malformed, nested too deep, not encodable as UTF-8, not an
object). Each refusal is a 4xx in our error shape; nothing is parsed twice by a library that could
fail on it with a 500."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from wp_agent.models import field_rules
from wp_agent.models.api import MAX_BODY_BYTES
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.api_identity import USER_HEADER

MAX_JSON_DEPTH = 32
METHODS_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})


def unreadable_body(method: str, headers: Mapping[str, str] | None, body: str | None) -> ApiError | None:
    """Why this request's body cannot be taken, or None."""
    if method.upper() not in METHODS_WITH_BODY or not body:
        return None
    if len(body.encode("utf-8", "surrogatepass")) > MAX_BODY_BYTES:
        return ApiError(
            ApiErrorCode.BODY_TOO_LARGE, f"リクエスト本文が大きすぎます（最大{MAX_BODY_BYTES // 1024}KB）。"
        )
    content_type = next((v for k, v in (headers or {}).items() if k.lower() == "content-type"), "")
    media_type, _, parameters = content_type.partition(";")
    charset = parameters.strip().lower().removeprefix("charset=").strip('"')
    if media_type.strip().lower() != "application/json" or charset not in ("", "utf-8"):
        return ApiError(
            ApiErrorCode.UNSUPPORTED_MEDIA_TYPE,
            fields=["Content-Type"],
        )
    try:
        parsed = json.loads(body)
    except RecursionError:
        return _too_deep()
    except ValueError:
        return _invalid("本文を JSON として読み取れません。")
    if not isinstance(parsed, dict):
        return _invalid("本文は JSON オブジェクト（{...}）で送ってください。")
    if _depth(parsed) > MAX_JSON_DEPTH:
        return _too_deep()
    try:
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return _invalid("本文に UTF-8 で表せない文字（対になっていないサロゲート）が含まれています。")
    return None


def _too_deep() -> ApiError:
    # Its own code: free-form parts of a valid body (history content blocks) may nest this deep,
    # a limit JSON Schema cannot state (the document lists it among the operations' refusals).
    return ApiError(
        ApiErrorCode.BODY_TOO_DEEP, f"本文の入れ子が深すぎます（最大{MAX_JSON_DEPTH}段）。", fields=["body"]
    )


def _invalid(message: str) -> ApiError:
    return ApiError(ApiErrorCode.VALIDATION_ERROR, message, fields=["body"])


def _depth(value: Any) -> int:
    """Nesting depth of parsed JSON, without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


# A parameter or field whose refusal keeps the code it had before the document stated its rule.
_OWN_CODES = {
    ("header", "x-argo-user-id"): ApiErrorCode.INVALID_USER_ID,
    ("header", "idempotency-key"): ApiErrorCode.INVALID_IDEMPOTENCY_KEY,
    ("path", "session_id"): ApiErrorCode.INVALID_SESSION_ID,
    ("body", "timezone"): ApiErrorCode.INVALID_TIMEZONE,
    ("body", "expression"): ApiErrorCode.INVALID_SCHEDULE_EXPRESSION,
}
_LOCATIONS = ("body", "header", "path", "query")


def validation_refusal(errors: Iterable[Mapping[str, Any]]) -> ApiError:
    """400 for a request that breaks the published schema: every field named, with the rule it broke
    when that is a pattern (field_rules), and the field's own code when it has one; 401 when the
    caller is not named at all."""
    errors = list(errors)
    named: dict[str, str] = {}
    places: set[tuple[str, str]] = set()
    for error in errors:
        loc = tuple(str(part) for part in error.get("loc", ()))
        location, name = (*loc, "", "")[:2]
        places.add((location, name))
        field = ".".join(part for part in loc if part not in _LOCATIONS) or "body"
        pattern = str((error.get("ctx") or {}).get("pattern", ""))
        named.setdefault(field, field_rules.REASONS_JA.get(pattern, ""))
    if ("header", "x-argo-user-id") in places and any(
        e.get("type") == "missing" and tuple(e.get("loc", ()))[:2] == ("header", "x-argo-user-id")
        for e in errors
    ):
        # No caller: 401 whatever else is wrong (before the request is looked at any further).
        return ApiError(ApiErrorCode.USER_ID_REQUIRED, fields=[USER_HEADER])
    code = _OWN_CODES.get(next(iter(places))) if len(places) == 1 else None
    listed = ", ".join(f"{field}（{reason}）" if reason else field for field, reason in sorted(named.items()))
    return ApiError(
        (code or ApiErrorCode.VALIDATION_ERROR), f"入力内容が正しくありません: {listed}", fields=sorted(named)
    )
