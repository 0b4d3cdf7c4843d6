"""The DynamoDB tables' keys and secondary indexes, in one place: the adapters query them, the CDK
storage construct creates them (infra/storage_construct.py) and the local stack (`wp-agent api
serve`, the tests) creates the same tables in moto.

Every history read is a Query on one of these keys, never a Scan:
- sessions_by_user / sessions_by_user_target: a user's sessions, newest first (only the sessions'
  STATE items carry the `list_*` attributes, so the indexes hold nothing else);
- audit by_target: a target's audit trail in time order (`sk` is `<timestamp>#<record id>`);
- audit by_user: a requester's records.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final


class LogicalTable(StrEnum):
    SESSIONS = "sessions"
    AUDIT = "audit"
    REGISTRY = "registry"
    RATE_LIMITS = "rate_limits"
    IDEMPOTENCY = "idempotency"


@dataclass(frozen=True)
class Index:
    name: str
    partition_key: str
    sort_key: str
    projected: tuple[str, ...] | None = None  # None: every attribute

    def key_attributes(self) -> tuple[str, str]:
        return self.partition_key, self.sort_key


@dataclass(frozen=True)
class TableLayout:
    partition_key: str
    sort_key: str | None
    ttl_attribute: str | None
    indexes: tuple[Index, ...] = ()

    def create_table_request(self, table_name: str) -> dict[str, Any]:
        """CreateTable parameters (on-demand) for this layout, as boto3 takes them."""
        keys = [(self.partition_key, "HASH"), *([(self.sort_key, "RANGE")] if self.sort_key else [])]
        attributes = {name for name, _ in keys} | {a for i in self.indexes for a in i.key_attributes()}
        request: dict[str, Any] = {
            "TableName": table_name,
            "KeySchema": [{"AttributeName": name, "KeyType": kind} for name, kind in keys],
            "AttributeDefinitions": [{"AttributeName": a, "AttributeType": "S"} for a in sorted(attributes)],
            "BillingMode": "PAY_PER_REQUEST",
        }
        if self.indexes:
            request["GlobalSecondaryIndexes"] = [
                {
                    "IndexName": index.name,
                    "KeySchema": [
                        {"AttributeName": index.partition_key, "KeyType": "HASH"},
                        {"AttributeName": index.sort_key, "KeyType": "RANGE"},
                    ],
                    "Projection": (
                        {"ProjectionType": "ALL"}
                        if index.projected is None
                        else {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(index.projected)}
                    ),
                }
                for index in self.indexes
            ]
        return request


PARTITION_KEY: Final = "pk"
SORT_KEY: Final = "sk"
TTL_ATTRIBUTE: Final = "expires_at"

# What a session listing shows, kept on the session's STATE item and projected into its indexes.
SESSION_LISTING_ATTRIBUTES: Final = ("status", "target_id", "run_id", "title", "started_at", "updated_at")
SESSIONS_BY_USER: Final = Index("sessions_by_user", "list_user", "list_sk", SESSION_LISTING_ATTRIBUTES)
SESSIONS_BY_USER_TARGET: Final = Index(
    "sessions_by_user_target", "list_user_target", "list_sk", SESSION_LISTING_ATTRIBUTES
)
AUDIT_BY_USER: Final = Index("by_user", "user_id", SORT_KEY)
AUDIT_BY_TARGET: Final = Index("by_target", "target_id", SORT_KEY)

LAYOUTS: Final[dict[LogicalTable, TableLayout]] = {
    LogicalTable.SESSIONS: TableLayout(
        PARTITION_KEY, SORT_KEY, TTL_ATTRIBUTE, (SESSIONS_BY_USER, SESSIONS_BY_USER_TARGET)
    ),
    LogicalTable.AUDIT: TableLayout(PARTITION_KEY, SORT_KEY, TTL_ATTRIBUTE, (AUDIT_BY_USER, AUDIT_BY_TARGET)),
    LogicalTable.REGISTRY: TableLayout(PARTITION_KEY, SORT_KEY, None),
    LogicalTable.RATE_LIMITS: TableLayout(PARTITION_KEY, SORT_KEY, TTL_ATTRIBUTE),
    # Powertools Idempotency's DynamoDBPersistenceLayer defaults.
    LogicalTable.IDEMPOTENCY: TableLayout("id", None, "expiration"),
}
