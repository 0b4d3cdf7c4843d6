"""A target's members and their roles (issue 27), managed by its owners and admins (and API
administrators); anyone else is told the target does not exist, a viewer or editor that they may not.

Each change is stored together with its audit record (the registry's one transaction on the target's
revision; a concurrent change is retried on the fresh target). A member's running sessions follow a
new role from their next turn (service/workflow_tasks.refresh_rights); a removed member's run ends
and their schedules for the target are disabled.
"""

from __future__ import annotations

from wp_agent.agent.audit_events import AuditEventType
from wp_agent.models import field_rules
from wp_agent.models.api import MemberList, MemberRemoved, MemberView
from wp_agent.models.target import Role, Target
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.runtime import AwsRuntime, TargetChangedError, TargetRecord
from wp_agent.service.target_lifecycle import disable_schedules_of
from wp_agent.service.targets import Caller, target_event

_ATTEMPTS = 3


def member_views(target: Target) -> list[MemberView]:
    owners = [MemberView(user_id=u, role=Role.ADMIN, owner=True) for u in target.owners]
    others = [
        MemberView(user_id=u, role=r, owner=False)
        for u, r in sorted(target.members.items())
        if u not in target.owners
    ]
    return owners + others


class MemberService:
    def __init__(self, runtime: AwsRuntime) -> None:
        self._rt = runtime

    def list(self, target_id: str, caller: Caller) -> MemberList:
        target = self._managed(target_id, caller).target
        return MemberList(target_id=target_id, members=member_views(target))

    def put(self, target_id: str, user_id: str, role: Role, caller: Caller) -> MemberView:
        """Give `user_id` this role on the target (already theirs: nothing changes, nothing audited)."""
        self._change(target_id, user_id, role, caller)
        return MemberView(user_id=user_id, role=role, owner=False)

    def remove(self, target_id: str, user_id: str, caller: Caller) -> MemberRemoved:
        """Take `user_id` off the target's members (not a member: nothing changes, removed false) and
        disable their schedules for it: each firing would be refused, the schedule stays listed. Done
        on a repeat too, so a removal whose disabling was cut short is finished by sending it again."""
        old = self._change(target_id, user_id, None, caller)
        disabled = disable_schedules_of(self._rt, target_id, {user_id})
        return MemberRemoved(
            target_id=target_id, user_id=user_id, removed=old is not None, schedules_disabled=disabled
        )

    def _change(self, target_id: str, user_id: str, new: Role | None, caller: Caller) -> Role | None:
        """Set (None: remove) the member's role with its audit record; the role it had before."""
        if not field_rules.matches(field_rules.USER_ID, user_id):
            raise ApiError(ApiErrorCode.VALIDATION_ERROR, fields=["userId"])
        for _attempt in range(_ATTEMPTS):
            record = self._managed(target_id, caller)
            target = record.target
            if target.owned_by(user_id):
                raise ApiError(ApiErrorCode.MEMBER_IS_OWNER, fields=["userId"])
            old = target.members.get(user_id)
            if old is new:
                return old
            members = {u: r for u, r in target.members.items() if u != user_id}
            if new is not None:
                members[user_id] = new
            changed = target.model_copy(update={"members": members})
            details = {f"members.{user_id}": f"{old or '-'} -> {new or '-'}"}
            event = target_event(changed, caller, AuditEventType.TARGET_UPDATED, details)
            try:
                self._rt.registry.change(record, changed, audit=self._rt.audit, event=event)
            except TargetChangedError:
                continue  # someone else changed the target: decide again on what it is now
            return old
        raise ApiError(ApiErrorCode.TARGET_CHANGED)

    def _managed(self, target_id: str, caller: Caller) -> TargetRecord:
        """The live target when the caller may manage its members: an API administrator, an owner or
        an admin member. Another member is refused (403); anyone else is told it does not exist."""
        record = self._rt.registry.record(target_id)
        if record is None or record.deleted_at is not None:
            raise ApiError(ApiErrorCode.TARGET_NOT_FOUND)
        if caller.admin:
            return record
        role = record.target.role_of(caller.user_id) if caller.user_id is not None else None
        if role is None:
            raise ApiError(ApiErrorCode.TARGET_NOT_FOUND)
        if role is not Role.ADMIN:
            raise ApiError(ApiErrorCode.MEMBER_ADMIN_REQUIRED)
        return record
