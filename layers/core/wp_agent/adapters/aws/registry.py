"""Registered WordPress targets (and schedules) in the registry table.

A target is one item (pk TARGET#<id>, sk TARGET) with a `revision` counter: every change is a
conditional write on the revision it read, in one transaction with the change's audit record, so a
change is never stored without its record (nor the record without the change). A deleted target
keeps its item as a tombstone (`deleted_at`): it is no longer found, while its owners can still read
its audit trail; registering the same id again replaces the tombstone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wp_agent.adapters.aws.audit_log import DynamoAuditLog
from wp_agent.adapters.aws.clients import resource
from wp_agent.agent.audit_events import AuditEvent
from wp_agent.models.target import Target

_STORAGE_ONLY = frozenset({"pk", "sk", "revision", "deleted_at"})


@dataclass(frozen=True)
class TargetRecord:
    target: Target
    revision: int
    deleted_at: str | None = None


class TargetChangedError(Exception):
    """Another writer changed (or deleted) the target since it was read."""


def _key(target_id: str) -> dict[str, str]:
    return {"pk": f"TARGET#{target_id}", "sk": "TARGET"}


def _target(item: dict[str, Any]) -> Target:
    return Target.model_validate({k: v for k, v in item.items() if k not in _STORAGE_ONLY}, strict=False)


class TargetRegistry:
    def __init__(self, table_name: str) -> None:
        self._table_name = table_name

    @property
    def _table(self) -> Any:
        return resource("dynamodb").Table(self._table_name)

    def put(self, target: Target, *, replace: bool = False) -> bool:
        """Store a target; False when a live one exists and `replace` is not set."""
        from botocore.exceptions import ClientError

        item = {**_key(target.target_id), **target.model_dump(mode="json", exclude_none=True), "revision": 1}
        kwargs: dict[str, Any] = {"Item": item}
        if not replace:
            kwargs["ConditionExpression"] = "attribute_not_exists(pk) OR attribute_exists(deleted_at)"
        try:
            self._table.put_item(**kwargs)
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def create(self, target: Target, *, audit: DynamoAuditLog, event: AuditEvent) -> bool:
        """Register a target with its audit record, in one transaction; False when a live one exists."""
        from botocore.exceptions import ClientError

        item = {**_key(target.target_id), **target.model_dump(mode="json", exclude_none=True), "revision": 1}
        try:
            self._table.meta.client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self._table_name,
                            "Item": item,
                            "ConditionExpression": "attribute_not_exists(pk) OR attribute_exists(deleted_at)",
                        }
                    },
                    {"Put": audit.put_request(event)},
                ]
            )
        except ClientError as exc:
            if _refused_by_condition(exc, on_item=0):
                return False
            if exc.response["Error"]["Code"] == "TransactionCanceledException":
                raise TargetChangedError(target.target_id) from exc
            raise
        return True

    def get(self, target_id: str) -> Target | None:
        """The live target (None when it does not exist or was deleted)."""
        record = self.record(target_id)
        return None if record is None or record.deleted_at is not None else record.target

    def record(self, target_id: str) -> TargetRecord | None:
        """The target with its revision, deleted ones included."""
        item = self._table.get_item(Key=_key(target_id), ConsistentRead=True).get("Item")
        if item is None:
            return None
        return TargetRecord(_target(item), int(item.get("revision", 0)), item.get("deleted_at"))

    def list(self) -> list[Target]:
        from boto3.dynamodb.conditions import Attr

        targets: list[Target] = []
        kwargs: dict[str, Any] = {
            "FilterExpression": Attr("sk").eq("TARGET") & Attr("deleted_at").not_exists()
        }
        while True:
            page = self._table.scan(**kwargs)
            targets.extend(_target(i) for i in page["Items"])
            if "LastEvaluatedKey" not in page:
                return sorted(targets, key=lambda t: t.target_id)
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def change(
        self,
        current: TargetRecord,
        target: Target,
        *,
        audit: DynamoAuditLog,
        event: AuditEvent,
        deleted_at: str | None = None,
    ) -> None:
        """Store the changed target (or its tombstone) and its audit record together, if nobody changed
        the target since `current` was read; TargetChangedError otherwise. Sending the same change
        again after a lost answer is harmless: the audit record's put is idempotent and the
        revision check refuses a second change."""
        from botocore.exceptions import ClientError

        item: dict[str, Any] = {
            **_key(target.target_id),
            **target.model_dump(mode="json", exclude_none=True),
            "revision": current.revision + 1,
        }
        if deleted_at is not None:
            item["deleted_at"] = deleted_at
        if current.revision:
            condition = {
                "ConditionExpression": "revision = :read AND attribute_not_exists(deleted_at)",
                "ExpressionAttributeValues": {":read": current.revision},
            }
        else:  # written before targets had revisions
            condition = {"ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(revision)"}
        record_put = audit.put_request(event)
        try:
            self._table.meta.client.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": self._table_name, "Item": item, **condition}},
                    {"Put": record_put},
                ]
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "TransactionCanceledException":
                raise TargetChangedError(target.target_id) from exc
            raise


def _refused_by_condition(exc: Exception, *, on_item: int) -> bool:
    """Whether a cancelled transaction failed the condition of its `on_item`-th write."""
    response = getattr(exc, "response", {})
    if response.get("Error", {}).get("Code") != "TransactionCanceledException":
        return False
    reasons = response.get("CancellationReasons") or []
    return len(reasons) > on_item and reasons[on_item].get("Code") == "ConditionalCheckFailed"
