"""Who is calling: the user id the backend sets, and whether the IAM principal is an administrator."""

from __future__ import annotations

from wp_agent.models.target import validate_user_id
from wp_agent.service.api_errors import ApiError, ApiErrorCode

USER_HEADER = "X-Argo-User-Id"


def user_id_from(header_value: str | None) -> str:
    if not header_value:
        raise ApiError(
            ApiErrorCode.USER_ID_REQUIRED,
            f"{USER_HEADER} ヘッダーで利用者IDを指定してください。",
            fields=[USER_HEADER],
        )
    try:
        return validate_user_id(header_value)
    except ValueError as exc:
        raise ApiError(
            ApiErrorCode.INVALID_USER_ID, f"{USER_HEADER} の値が正しくありません。", fields=[USER_HEADER]
        ) from exc


def is_admin(caller_arn: str | None, admin_principals: str) -> bool:
    """An entry matches exactly, or as a prefix when it ends with '/' or '*'
    (e.g. `arn:aws:sts::123456789012:assumed-role/ArgoAdmin/`)."""
    if not caller_arn:
        return False
    for entry in (e.strip() for e in admin_principals.split(",")):
        if not entry:
            continue
        if entry.endswith("*") and caller_arn.startswith(entry[:-1]):
            return True
        if entry.endswith("/") and caller_arn.startswith(entry):
            return True
        if caller_arn == entry:
            return True
    return False
