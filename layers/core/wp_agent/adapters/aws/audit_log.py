"""AuditLog on DynamoDB: append-only records, kept 90 days, or 1 year for destructive/approval ones.

pk = SESSION#<session id>, sk = <timestamp>#<record id>: a session's records in time order; the
by_target index gives a target's trail in time order (table_layout.py)."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from decimal import Decimal
from typing import Any

from wp_agent.adapters.aws.clients import resource
from wp_agent.adapters.aws.paging import Page, query_page
from wp_agent.adapters.aws.table_layout import AUDIT_BY_TARGET, PARTITION_KEY, SORT_KEY
from wp_agent.agent.audit_events import AuditEvent

SHORT_RETENTION_DAYS = 90
LONG_RETENTION_DAYS = 365


class DynamoAuditLog:
    def __init__(self, table_name: str) -> None:
        self._table_name = table_name

    def append(self, event: AuditEvent) -> None:
        """Idempotent: the item is derived from the record alone (key, expiry, digest), so a put
        retried after its answer was lost writes the same item; anything else under an existing key
        is refused (append-only)."""
        resource("dynamodb").Table(self._table_name).put_item(**self._put(event))

    def put_request(self, event: AuditEvent) -> dict[str, Any]:
        """The same put as a TransactWriteItems `Put` (a change and its record written together)."""
        return {"TableName": self._table_name, **self._put(event)}

    @staticmethod
    def _put(event: AuditEvent) -> dict[str, Any]:
        days = LONG_RETENTION_DAYS if event.long_retention else SHORT_RETENTION_DAYS
        written = datetime.fromisoformat(event.timestamp.replace("Z", "+00:00"))
        item: dict[str, Any] = {
            "pk": f"SESSION#{event.session_id}",
            "sk": f"{event.timestamp}#{event.record_id}",
            "expires_at": int(written.timestamp()) + days * 86_400,
            **{k: v for k, v in event.model_dump(mode="json").items() if v is not None},
        }
        item["digest"] = hashlib.sha256(json.dumps(item, sort_keys=True).encode()).hexdigest()
        return {
            "Item": item,
            "ConditionExpression": "attribute_not_exists(pk) OR digest = :digest",
            "ExpressionAttributeValues": {":digest": item["digest"]},
        }

    def for_session(self, session_id: str) -> list[dict[str, Any]]:
        """All records of a session in time order (operators and tests)."""
        from boto3.dynamodb.conditions import Key

        table = resource("dynamodb").Table(self._table_name)
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"KeyConditionExpression": Key("pk").eq(f"SESSION#{session_id}")}
        while True:
            page = table.query(**kwargs)
            items.extend(page["Items"])
            if "LastEvaluatedKey" not in page:
                return items
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def for_run(self, session_id: str, run_id: str) -> list[AuditEvent]:
        """One run's records in time order (a Query on its session, filtered by run)."""
        from boto3.dynamodb.conditions import Attr, Key

        table = resource("dynamodb").Table(self._table_name)
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("pk").eq(f"SESSION#{session_id}"),
            "FilterExpression": Attr("run_id").eq(run_id),
        }
        while True:
            page = table.query(**kwargs)
            items.extend(page["Items"])
            if "LastEvaluatedKey" not in page:
                return [event_from_item(item) for item in items]
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def page_for_target(
        self,
        target_id: str,
        *,
        since: str,
        until: str,
        types: list[str] | None,
        limit: int,
        start_key: dict[str, str] | None = None,
    ) -> Page:
        """A target's records with since <= timestamp < until, newest first, optionally of some types."""
        from boto3.dynamodb.conditions import Attr, Key

        # sk is "<timestamp>#<record id>": a record at `until` sorts after "<until>", one at `since` after "<since>".
        condition = Key(AUDIT_BY_TARGET.partition_key).eq(target_id) & Key(SORT_KEY).between(since, until)
        return query_page(
            resource("dynamodb").Table(self._table_name),
            index_name=AUDIT_BY_TARGET.name,
            key_condition=condition,
            partition=(AUDIT_BY_TARGET.partition_key, target_id),
            key_attributes=(PARTITION_KEY, SORT_KEY, AUDIT_BY_TARGET.partition_key),
            filter_expression=Attr("type").is_in(types) if types else None,
            limit=limit,
            start_key=start_key,
        )


_STORAGE_ONLY = frozenset({"pk", "sk", "expires_at", "digest"})


def event_from_item(item: dict[str, Any]) -> AuditEvent:
    """The record as it was written (DynamoDB numbers come back as Decimal)."""
    fields = {k: (int(v) if isinstance(v, Decimal) else v) for k, v in item.items() if k not in _STORAGE_ONLY}
    return AuditEvent.model_validate(fields)
