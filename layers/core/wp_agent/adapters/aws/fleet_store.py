"""Fleet runs in the sessions table (pk FLEET#<id>, sk RUN): the whole record as one JSON document, each
change conditional on the version read (the map's sites report side by side: a writer that lost reads
again and applies its change to what the other wrote)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any, TypeVar

from wp_agent import clock
from wp_agent.adapters.aws.clients import resource
from wp_agent.models.fleet import FleetRecord

RUN_SK = "RUN"
T = TypeVar("T")
_ATTEMPTS = 12


class FleetChangedError(Exception):
    """Another writer kept changing the fleet run; the change was not made."""


class FleetStore:
    def __init__(self, table_name: str, *, ttl_days: int = 90) -> None:
        self._table_name = table_name
        self._ttl_seconds = ttl_days * 86_400

    @property
    def _table(self) -> Any:
        return resource("dynamodb").Table(self._table_name)

    @staticmethod
    def _key(fleet_run_id: str) -> dict[str, str]:
        return {"pk": f"FLEET#{fleet_run_id}", "sk": RUN_SK}

    def create(self, record: FleetRecord) -> bool:
        """Store a new fleet run; False (nothing written) when one with this id exists."""
        from botocore.exceptions import ClientError

        record.version = 1
        try:
            self._table.put_item(
                Item={
                    **self._key(record.report.fleet_run_id),
                    "user_id": record.user_id,
                    "record": record.model_dump_json(),
                    "version": record.version,
                    "expires_at": clock.epoch_seconds() + self._ttl_seconds,
                },
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def get(self, fleet_run_id: str) -> FleetRecord | None:
        item = self._table.get_item(Key=self._key(fleet_run_id), ConsistentRead=True).get("Item")
        return FleetRecord.model_validate_json(item["record"]) if item else None

    def change(self, fleet_run_id: str, change: Callable[[FleetRecord], T]) -> tuple[FleetRecord, T]:
        """Apply `change` to the stored record and save it, again on a fresh read when another writer saved
        first. `change` may raise to refuse (nothing is written); KeyError when there is no such run."""
        from botocore.exceptions import ClientError

        for _ in range(_ATTEMPTS):
            record = self.get(fleet_run_id)
            if record is None:
                raise KeyError(fleet_run_id)
            read = record.version
            outcome = change(record)
            record.version = read + 1
            record.updated_at = clock.now_iso()
            try:
                self._table.update_item(
                    Key=self._key(fleet_run_id),
                    UpdateExpression="SET #r = :record, version = :new",
                    ConditionExpression="version = :read",
                    ExpressionAttributeNames={"#r": "record"},
                    ExpressionAttributeValues={
                        ":record": record.model_dump_json(),
                        ":new": read + 1,
                        ":read": read,
                    },
                )
            except ClientError as exc:
                if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    raise
                time.sleep(random.uniform(0.01, 0.1))  # noqa: S311 - spreading retries, not a secret
                continue
            return record, outcome
        raise FleetChangedError(fleet_run_id)
