"""What the API refuses before any route reads a request: a body that is not one readable JSON
object (too large, another media type, malformed, nested too deep, not encodable as UTF-8, not an
object). Each refusal is a 4xx in our error shape; nothing is parsed twice by a library that could
fail on it with a 500."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from wp_agent.models import field_rules
from wp_agent.models.api import MAX_BODY_BYTES, ViolatedRule
from wp_agent.service.api_contract import document_name
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
    """400 for a request that breaks the published schema: every field named as the document names
    it, with each rule it broke (its limit, allowed values or documented pattern: `violations`), and
    the field's own code when it has one; 401 when the caller is not named at all."""
    errors = list(errors)
    if any(
        e.get("type") == "missing" and tuple(e.get("loc", ()))[:2] == ("header", "x-argo-user-id")
        for e in errors
    ):
        # No caller: 401 whatever else is wrong (before the request is looked at any further).
        return ApiError(ApiErrorCode.USER_ID_REQUIRED, fields=[USER_HEADER])
    places = {_place(e) for e in errors}
    violations: list[dict[str, object]] = []
    for error in errors:
        violation = _violation(error)
        if violation not in violations:
            violations.append(violation)
    code = _OWN_CODES.get(next(iter(places))) if len(places) == 1 else None
    fields = sorted({str(v["field"]) for v in violations})
    listed = ", ".join(
        f"{v['field']}（{v['message']}）" for v in sorted(violations, key=lambda v: str(v["field"]))
    )
    return ApiError(
        (code or ApiErrorCode.VALIDATION_ERROR),
        f"入力内容が正しくありません: {listed}",
        fields=fields,
        violations=violations,
    )


# pydantic's error types -> (the JSON Schema keyword of the rule, the context key of its limit, what
# to send). The limit is put into the Japanese text; {allowed} is the list of allowed values.
_RULES: dict[str, tuple[ViolatedRule, str, str]] = {
    "missing": ("required", "", "指定してください"),
    "string_too_short": ("minLength", "min_length", "{limit}文字以上にしてください"),
    "string_too_long": ("maxLength", "max_length", "{limit}文字以内にしてください"),
    "too_short": ("minItems", "min_length", "{limit}個以上にしてください"),
    "too_long": ("maxItems", "max_length", "{limit}個以内にしてください"),
    "greater_than_equal": ("minimum", "ge", "{limit}以上にしてください"),
    "less_than_equal": ("maximum", "le", "{limit}以下にしてください"),
    "greater_than": ("exclusiveMinimum", "gt", "{limit}より大きくしてください"),
    "less_than": ("exclusiveMaximum", "lt", "{limit}より小さくしてください"),
    "literal_error": ("enum", "", "{allowed} のどれかにしてください"),
    "enum": ("enum", "", "{allowed} のどれかにしてください"),
    "extra_forbidden": ("unknownField", "", "この項目はありません（項目名を確かめてください）"),
    "string_pattern_mismatch": ("pattern", "", "形式が正しくありません"),
    "value_error": ("value", "", "この値は使えません"),
    "assertion_error": ("value", "", "この値は使えません"),
}
_TYPES_JA = {
    "string": "文字列",
    "int": "整数",
    "float": "数値",
    "bool": "true か false",
    "dict": "JSON オブジェクト",
    "model": "JSON オブジェクト",
    "list": "配列",
    "datetime": "日時（ISO 8601）",
    "date": "日付（YYYY-MM-DD）",
}


def _place(error: Mapping[str, Any]) -> tuple[str, str]:
    location, name = (*(str(part) for part in error.get("loc", ())), "", "")[:2]
    return location, name


def _violation(error: Mapping[str, Any]) -> dict[str, object]:
    loc = tuple(str(part) for part in error.get("loc", ()))
    location = loc[0] if loc and loc[0] in _LOCATIONS else "body"
    parts = [part for part in loc if part not in _LOCATIONS]
    if parts and location != "body":
        parts[0] = document_name(location, parts[0])
    field = ".".join(parts) or "body"
    kind = str(error.get("type", ""))
    context: Mapping[str, Any] = error.get("ctx") or {}
    rule, limit_key, text = _RULES.get(kind, ("type", "", ""))
    limit = context.get(limit_key) if limit_key else None
    allowed = re.findall(r"'([^']*)'", str(context.get("expected", ""))) if rule == "enum" else None
    if (limit_key and limit is None) or (rule == "enum" and not allowed):
        text = "値が範囲外です" if limit_key else "使える値ではありません"
    else:
        text = text.format(limit=limit, allowed=", ".join(allowed or []))  # our templates only
    if rule == "pattern":
        text = field_rules.REASONS_JA.get(str(context.get("pattern", "")), "") or text
    elif rule == "type":
        expected = _TYPES_JA.get(kind.split("_", maxsplit=1)[0], "")
        text = f"{expected}で指定してください" if expected else "値の種類が正しくありません"
    violation: dict[str, object] = {"field": field, "rule": rule}
    if limit is not None:
        violation["limit"] = limit
    if allowed:
        violation["allowed"] = allowed
    violation["message"] = text
    return violation
