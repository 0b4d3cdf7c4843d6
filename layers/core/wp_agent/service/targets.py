"""Registering and listing WordPress targets (administrators register; owners and members read theirs)."""

from __future__ import annotations

from dataclasses import dataclass

from wp_agent import clock
from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.models.agent_io import MultisiteOptions
from wp_agent.models.api import TargetList, TargetRegistration
from wp_agent.models.target import Role, Target
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.runtime import AwsRuntime, TargetRecord


@dataclass(frozen=True)
class Caller:
    """Who asks: the user the backend names (X-Argo-User-Id) and whether the IAM principal is an
    administrator (WP_AGENT_ADMIN_PRINCIPALS); `principal` is what the audit records as the actor."""

    user_id: str | None
    admin: bool
    principal: str

    def may_manage(self, target: Target) -> bool:
        return manages(target, self.user_id, admin=self.admin)


def manages(target: Target, user_id: str | None, *, admin: bool) -> bool:
    """An API administrator or an owner of the target (members only use it)."""
    return admin or (user_id is not None and target.owned_by(user_id))


def readable_record(runtime: AwsRuntime, target_id: str, caller: Caller) -> TargetRecord:
    """The target (deleted ones too) when the caller owns or administers it. A member, who can read
    the target, is told it is not theirs to change (403); anyone else that it does not exist (404)."""
    record = runtime.registry.record(target_id)
    if record is None:
        raise ApiError(ApiErrorCode.TARGET_NOT_FOUND)
    if not caller.may_manage(record.target):
        member = caller.user_id is not None and record.target.role_of(caller.user_id) is not None
        if member and record.deleted_at is None:
            raise ApiError(ApiErrorCode.OWNER_REQUIRED)
        raise ApiError(ApiErrorCode.TARGET_NOT_FOUND)
    return record


# What a member (not an owner or an administrator) reads of a target: not where its SSH key is kept,
# and of the members only themselves (an admin member, who manages them, all of them: as …/members).
MASKED_SECRET_ARN = "arn:aws:secretsmanager:***"  # noqa: S105 - a placeholder, not a secret


def as_seen_by(target: Target, user_id: str | None, *, admin: bool) -> Target:
    if manages(target, user_id, admin=admin):
        return target
    role = target.members.get(user_id) if user_id is not None else None
    members = target.members if role is Role.ADMIN else ({user_id: role} if user_id and role else {})
    return target.model_copy(update={"members": members, "secret_arn": MASKED_SECRET_ARN})


def target_event(
    target: Target, caller: Caller, event_type: AuditEventType, details: dict[str, str] | None = None
) -> AuditEvent:
    """An audit record of the target's lifecycle (its trail is the target's own pseudo-session)."""
    return AuditEvent(
        type=event_type,
        user_id=caller.principal,
        session_id=f"target-{target.target_id}",
        target_id=target.target_id,
        details=details or None,
    )


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
            body.model_dump() | {"created_by": caller, "created_at": clock.now_iso()}
        )
        event = target_event(
            target,
            Caller(None, admin=True, principal=caller),
            AuditEventType.TARGET_REGISTERED,
            {"owners": ",".join(target.owners), "host": f"{target.host}:{target.port}"},
        )
        if not self._rt.registry.create(target, audit=self._rt.audit, event=event):
            raise ApiError(
                ApiErrorCode.TARGET_EXISTS, f"対象サイト「{target.target_id}」は既に登録されています。"
            )
        return target

    def list(self, user_id: str | None, *, admin: bool) -> TargetList:
        targets = self._rt.registry.list()
        readable = [t for t in targets if admin or (user_id and t.role_of(user_id))]
        return TargetList(targets=[as_seen_by(t, user_id, admin=admin) for t in readable])

    def get(self, target_id: str, user_id: str | None, *, admin: bool) -> Target:
        target = self._rt.registry.get(target_id)
        if target is None or not (admin or (user_id and target.role_of(user_id))):
            raise ApiError(ApiErrorCode.TARGET_NOT_FOUND)
        return as_seen_by(target, user_id, admin=admin)
