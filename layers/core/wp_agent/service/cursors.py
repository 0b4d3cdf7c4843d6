"""Opaque page cursors: where a listing stopped, bound to the query that made it.

A cursor carries the storage key to continue after and a digest of the query (route, caller, filters),
so it only continues the listing it came from: another caller's, another filter's, an edited or a
made-up cursor is 400 INVALID_CURSOR before anything is read (DynamoDB would refuse a start key from
another partition with a server error).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from wp_agent.service.api_errors import ApiError, ApiErrorCode

MAX_CURSOR_CHARS = 2_048


def _digest(query: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(query, sort_keys=True, default=str).encode()).hexdigest()[:24]


def encode(key: dict[str, str] | None, query: Mapping[str, Any]) -> str | None:
    if key is None:
        return None
    text = json.dumps({"k": key, "q": _digest(query)}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def decode(cursor: str | None, query: Mapping[str, Any]) -> dict[str, str] | None:
    """The start key of the next page (None without a cursor); INVALID_CURSOR unless the cursor came
    from this very query (the store checks that the key is one of its partition: `invalid()`)."""
    if cursor is None:
        return None
    key = _key_in(cursor, query)
    if key is None:
        raise invalid()
    return key


def _key_in(cursor: str, query: Mapping[str, Any]) -> dict[str, str] | None:
    if len(cursor) > MAX_CURSOR_CHARS:
        return None
    try:
        parsed = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8"))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    if not isinstance(parsed, dict) or parsed.get("q") != _digest(query):
        return None
    key = parsed.get("k")
    if not isinstance(key, dict) or not key:
        return None
    if not all(isinstance(k, str) and isinstance(v, str) and v for k, v in key.items()):
        return None
    return {str(k): str(v) for k, v in key.items()}


def invalid() -> ApiError:
    return ApiError(ApiErrorCode.INVALID_CURSOR, fields=["cursor"])
