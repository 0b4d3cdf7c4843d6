"""AuditLog on DynamoDB: append-only records, kept 90 days, or 1 year for destructive/approval ones."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from wp_agent.adapters.aws.clients import resource
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
        days = LONG_RETENTION_DAYS if event.long_retention else SHORT_RETENTION_DAYS
        written = datetime.fromisoformat(event.timestamp.replace("Z", "+00:00"))
        item: dict[str, Any] = {
            "pk": f"SESSION#{event.session_id}",
            "sk": f"{event.timestamp}#{event.record_id}",
            "expires_at": int(written.timestamp()) + days * 86_400,
            **{k: v for k, v in event.model_dump(mode="json").items() if v is not None},
        }
        item["digest"] = hashlib.sha256(json.dumps(item, sort_keys=True).encode()).hexdigest()
        resource("dynamodb").Table(self._table_name).put_item(
            Item=item,
            ConditionExpression="attribute_not_exists(pk) OR digest = :digest",
            ExpressionAttributeValues={":digest": item["digest"]},
        )

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
