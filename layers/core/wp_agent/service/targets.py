"""Registering and listing WordPress targets (administrators register; owners read their own)."""

from __future__ import annotations

from wp_agent.models.agent_io import MultisiteOptions, utc_now_iso
from wp_agent.models.api import TargetList, TargetRegistration
from wp_agent.models.target import Target
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.runtime import AwsRuntime


def check_multisite_access(
    target: Target, user_id: str, options: MultisiteOptions | None, *, field: str
) -> None:
    """Multisite options need a multisite target; networkWide needs one of its network admins."""
    if options is None:
        return
    if not target.multisite:
        raise ApiError(ApiErrorCode.NOT_MULTISITE, fields=[field])
    if options.network_wide and not target.network_admin(user_id):
        raise ApiError(
            ApiErrorCode.NETWORK_ADMIN_REQUIRED,
            fields=[f"{field}.networkWide"],
        )


class TargetService:
    def __init__(self, runtime: AwsRuntime) -> None:
        self._rt = runtime

    def register(self, body: TargetRegistration, *, admin: bool, caller: str) -> Target:
        if not admin:
            raise ApiError(ApiErrorCode.ADMIN_REQUIRED)
        secret_name = body.secret_arn.split(":secret:", 1)[-1]
        if not secret_name.startswith(self._rt.settings.wp_agent_target_secret_prefix):
            raise ApiError(
                ApiErrorCode.SECRET_OUTSIDE_PREFIX,
                f"SSH鍵のシークレット名は {self._rt.settings.wp_agent_target_secret_prefix} で始まる必要があります。",
                fields=["secretArn"],
            )
        target = Target.model_validate(
            body.model_dump() | {"created_by": caller, "created_at": utc_now_iso()}
        )
        if not self._rt.registry.put(target):
            raise ApiError(
                ApiErrorCode.TARGET_EXISTS, f"対象サイト「{target.target_id}」は既に登録されています。"
            )
        return target

    def list(self, user_id: str | None, *, admin: bool) -> TargetList:
        targets = self._rt.registry.list()
        return TargetList(targets=[t for t in targets if admin or (user_id and t.owned_by(user_id))])

    def get(self, target_id: str, user_id: str | None, *, admin: bool) -> Target:
        target = self._rt.registry.get(target_id)
        if target is None or not (admin or (user_id and target.owned_by(user_id))):
            raise ApiError(ApiErrorCode.TARGET_NOT_FOUND)
        return target
