"""Changing, removing and checking a registered target (owners and administrators only; anyone else is
told it does not exist). Every change is stored together with its audit record (one transaction on
the target's revision); keys appear in records and answers only as SHA256 fingerprints.

- PATCH: the WordPress user, owners and network administrators, the description, a new SSH key pair,
  a new pinned host key. A key is written to the target's secret as a new version first (with a
  request token derived from the new value, so a repeat after a lost answer writes nothing new), then
  the change and its record; an owner taken off the target loses its schedules for it (disabled).
- DELETE: the target becomes a tombstone at once (no new run, article or scheduled run starts; a
  running run ends at its next turn), its schedules are disabled, its secret is scheduled for
  deletion with a recovery window. A repeat finishes what an interrupted attempt left undone.
- checks: the doctor over the API, without a model call, audited.
"""

from __future__ import annotations

import hashlib
import json
import logging

from wp_agent import clock
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.errors import WpAgentError
from wp_agent.executors.ssh_keys import describe_key, parse_host_keys, parse_private_key, parse_secret
from wp_agent.models.api import (
    TargetChange,
    TargetCheckResult,
    TargetCheckView,
    TargetDeleted,
    TargetUpdate,
    TargetUpdated,
)
from wp_agent.models.target import Target, UpdateAllowance
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.runtime import (
    AwsRuntime,
    SecretStoreError,
    TargetChangedError,
    TargetRecord,
    disable_schedule,
    required_setting,
)
from wp_agent.service.targets import Caller, readable_record, target_event

logger = logging.getLogger(__name__)

SECRET_RECOVERY_DAYS = 30
_ATTEMPTS = 3


class TargetLifecycle:
    def __init__(self, runtime: AwsRuntime) -> None:
        self._rt = runtime

    # -- PATCH ------------------------------------------------------------------------------------

    def update(self, target_id: str, caller: Caller, body: TargetUpdate) -> TargetUpdated:
        record = self._live(target_id, caller)
        rotated_secret, key_changes = self._rotate_keys(record.target, body)
        for attempt in range(_ATTEMPTS):
            target, changes = _apply(record.target, body)
            changes += key_changes
            if not changes:
                return TargetUpdated(target=record.target, changes=[])
            details = {c.field: f"{c.old or '-'} -> {c.new or '-'}" for c in changes}
            event = target_event(target, caller, AuditEventType.TARGET_UPDATED, details)
            try:
                self._rt.registry.change(record, target, audit=self._rt.audit, event=event)
            except TargetChangedError:
                if attempt + 1 == _ATTEMPTS:
                    raise ApiError(ApiErrorCode.TARGET_CHANGED) from None
                record = self._live(target_id, caller)
                continue
            break
        if rotated_secret:
            self._forget_cached_keys()
        removed = set(record.target.owners) - set(target.owners)
        disable_schedules_of(self._rt, target.target_id, removed)
        return TargetUpdated(target=target, changes=changes)

    def _rotate_keys(self, target: Target, body: TargetUpdate) -> tuple[bool, list[TargetChange]]:
        """Write the new key and/or host key into the target's secret; what changed, as fingerprints."""
        if body.ssh_key is None and body.host_key is None:
            return False, []
        material = parse_secret(self._read_secret(target.secret_arn), source="secretArn")
        value = {"privateKey": material.private_key, "hostKey": material.host_key or ""}
        passphrase = material.passphrase
        changes: list[TargetChange] = []
        if body.ssh_key is not None:
            old = _fingerprint_of_key(material.private_key, passphrase)
            try:
                new_key = parse_private_key(
                    body.ssh_key.private_key, body.ssh_key.passphrase, source="sshKey.privateKey"
                )
            except WpAgentError:
                raise ApiError(ApiErrorCode.INVALID_SSH_KEY, fields=["sshKey.privateKey"]) from None
            value["privateKey"] = body.ssh_key.private_key
            passphrase = body.ssh_key.passphrase
            changes.append(TargetChange(field="sshKey", old=old, new=describe_key(new_key)))
        if body.host_key is not None:
            try:
                keys = parse_host_keys(body.host_key, target.host, target.port, source="hostKey")
            except WpAgentError:
                raise ApiError(ApiErrorCode.INVALID_HOST_KEY, fields=["hostKey"]) from None
            old = _fingerprints_of_host_keys(material.host_key or "", target)
            changes.append(
                TargetChange(field="hostKey", old=old, new="、".join(sorted(describe_key(k) for k in keys)))
            )
            value["hostKey"] = body.host_key
        if passphrase:
            value["passphrase"] = passphrase
        # A key given again is written and recorded again: a repeat after a lost answer keeps its record.
        text = json.dumps(value, sort_keys=True)
        token = hashlib.sha256(f"{target.secret_arn}\n{text}".encode()).hexdigest()[:64]
        try:
            self._rt.target_secrets.write(target.secret_arn, text, request_token=token)
        except SecretStoreError as exc:
            logger.warning("could not write the target's secret", extra={"error_code": exc.code})
            raise ApiError(ApiErrorCode.SECRET_UNAVAILABLE) from None
        return True, changes

    def _read_secret(self, secret_arn: str) -> str:
        try:
            return self._rt.target_secrets.read(secret_arn)
        except SecretStoreError as exc:
            logger.warning("could not read the target's secret", extra={"error_code": exc.code})
            raise ApiError(ApiErrorCode.SECRET_UNAVAILABLE) from None

    @staticmethod
    def _forget_cached_keys() -> None:
        from wp_agent.executors.ssh_keys import clear_secret_cache

        clear_secret_cache()

    # -- DELETE -----------------------------------------------------------------------------------

    def delete(self, target_id: str, caller: Caller) -> TargetDeleted:
        record = readable_record(self._rt, target_id, caller)
        target = record.target
        deleted_at = record.deleted_at
        if deleted_at is None:
            deleted_at = clock.now_iso()
            details = {
                "secretRecoveryWindowDays": str(SECRET_RECOVERY_DAYS),
                "owners": ",".join(target.owners),
            }
            event = target_event(target, caller, AuditEventType.TARGET_DELETED, details)
            try:
                self._rt.registry.change(
                    record, target, audit=self._rt.audit, event=event, deleted_at=deleted_at
                )
            except TargetChangedError:
                raise ApiError(ApiErrorCode.TARGET_CHANGED) from None
        disabled = disable_schedules_of(self._rt, target_id, set(target.owners))
        deletion, window = self._delete_secret(target)
        message = f"対象サイト「{target_id}」を削除しました。新しい実行は受け付けません。"
        if disabled:
            message += f"スケジュール{disabled}件を停止しました。"
        if deletion is not None:
            message += f"SSH鍵のシークレットは {deletion} に削除されます（それまでは Secrets Manager で復元できます）。"
        elif window == 0:
            message += "SSH鍵のシークレットは他の対象サイトでも使われているため、削除していません。"
        return TargetDeleted(
            target_id=target_id,
            deleted_at=deleted_at,
            schedules_disabled=disabled,
            secret_deletion_date=deletion,
            secret_recovery_window_days=window,
            message=message,
        )

    def _delete_secret(self, target: Target) -> tuple[str | None, int]:
        """When the secret goes (None: shared with a live target, or already gone) and its window."""
        if any(t.secret_arn == target.secret_arn for t in self._rt.registry.list()):
            return None, 0
        try:
            deletion = self._rt.target_secrets.schedule_deletion(
                target.secret_arn, recovery_days=SECRET_RECOVERY_DAYS
            )
        except SecretStoreError as exc:
            logger.warning("could not schedule the secret's deletion", extra={"error_code": exc.code})
            raise ApiError(
                ApiErrorCode.SECRET_UNAVAILABLE,
                "対象サイトは削除しましたが、SSH鍵のシークレットの削除を予約できませんでした。同じ操作をもう一度送ってください。",
            ) from None
        return deletion, SECRET_RECOVERY_DAYS

    # -- checks -----------------------------------------------------------------------------------

    def check(self, target_id: str, caller: Caller) -> TargetCheckResult:
        record = self._live(target_id, caller)
        checks = self._rt.check_target(record.target)
        ok = all(check.ok for check in checks)
        failed = next((c for c in checks if not c.ok), None)
        summary = "すべての点検に合格しました。" if failed is None else f"{failed.label}: {failed.detail}"
        self._audit(
            record.target,
            caller,
            AuditEventType.TARGET_CHECKED,
            {"ok": str(ok).lower(), **({"failed": failed.name} if failed else {})},
        )
        return TargetCheckResult(
            target_id=target_id,
            ok=ok,
            checked_at=clock.now_iso(),
            summary=summary,
            checks=[
                TargetCheckView(name=c.name, label=c.label, ok=c.ok, detail=c.detail, fix=c.fix)
                for c in checks
            ],
        )

    # -- shared -----------------------------------------------------------------------------------

    def _live(self, target_id: str, caller: Caller) -> TargetRecord:
        record = readable_record(self._rt, target_id, caller)
        if record.deleted_at is not None:
            raise ApiError(ApiErrorCode.TARGET_NOT_FOUND)
        return record

    def _audit(self, target: Target, caller: Caller, kind: AuditEventType, details: dict[str, str]) -> None:
        self._rt.audit.append(target_event(target, caller, kind, details))


def disable_schedules_of(runtime: AwsRuntime, target_id: str, users: set[str]) -> int:
    """Disable these users' schedules for this target (they stay listed; nothing fires): an owner
    removed, the target deleted, a member taken off. Disabling one already disabled counts again,
    so a repeat after a lost answer says the same."""
    schedules = [
        schedule
        for user in sorted(users)
        for schedule in runtime.schedules.list_for_owner(user)
        if schedule.target_id == target_id
    ]
    if not schedules:
        return 0
    group = required_setting(runtime.settings.wp_agent_schedule_group, "WP_AGENT_SCHEDULE_GROUP")
    return sum(1 for schedule in schedules if disable_schedule(group, schedule.schedule_id))


def _apply(target: Target, body: TargetUpdate) -> tuple[Target, list[TargetChange]]:
    """The target with the body's plain fields applied, and what they changed."""
    fields = body.model_fields_set & {
        "wp_user",
        "owners",
        "network_admins",
        "description",
        "update_allowance",
        "tags",
    }
    update = {name: getattr(body, name) for name in fields}
    changed = target.model_copy(update=update)
    changed = Target.model_validate(changed.model_dump())  # owners/admins de-duplicated as on create
    changes: list[TargetChange] = []
    for name in sorted(fields):
        old, new = getattr(target, name), getattr(changed, name)
        if old != new:
            changes.append(TargetChange(field=_camel(name), old=_shown(old), new=_shown(new)))
    return changed, changes


def _shown(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, UpdateAllowance):
        return ",".join(f"{name}={level}" for name, level in value)
    return ",".join(value) if isinstance(value, list) else str(value)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _fingerprint_of_key(text: str, passphrase: str | None) -> str | None:
    try:
        return describe_key(parse_private_key(text, passphrase, source="secret"))
    except WpAgentError:
        return None


def _fingerprints_of_host_keys(text: str, target: Target) -> str | None:
    try:
        keys = parse_host_keys(text, target.host, target.port, source="secret")
    except WpAgentError:
        return None
    return "、".join(sorted(describe_key(k) for k in keys)) or None
