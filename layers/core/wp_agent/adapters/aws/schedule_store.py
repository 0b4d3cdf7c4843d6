"""Schedules in the registry table, so reading and authorising them never needs a Scheduler call.

Each schedule is two items written and deleted in one transaction:
    pk=SCHEDULE#<id>          sk=SCHEDULE              — the schedule, found by id
    pk=OWNER#<ownerId>        sk=SCHEDULE#<id>         — the same attributes, listed by owner (Query)
Schedules are never updated in place (delete and create instead), so the copies cannot drift.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from wp_agent.adapters.aws.clients import resource
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.schedule import SCHEDULE_ID

ITEM_SK = "SCHEDULE"


class ScheduleRecord(BaseModel):
    """One schedule as stored (snake_case attributes, like the target items of the same table)."""

    model_config = ConfigDict(extra="ignore")
    schedule_id: str = Field(pattern=SCHEDULE_ID)
    owner_id: str = Field(min_length=1, max_length=128)
    target_id: str
    name: str
    expression: str
    timezone: str
    agent_input: AgentInput
    created_at: str

    def item(self, *, pk: str, sk: str) -> dict[str, Any]:
        # agentInput is kept as a JSON string: DynamoDB has no floats and rejects empty sets, and
        # the conversation history inside an AgentInput is arbitrary JSON.
        return {
            "pk": pk,
            "sk": sk,
            **self.model_dump(exclude={"agent_input"}),
            "agent_input": self.agent_input.to_json(),
        }

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> ScheduleRecord:
        return cls.model_validate(
            {**item, "agent_input": AgentInput.model_validate_json(str(item["agent_input"]))}
        )


def _schedule_key(schedule_id: str) -> dict[str, str]:
    return {"pk": f"SCHEDULE#{schedule_id}", "sk": ITEM_SK}


def _owner_key(owner_id: str, schedule_id: str) -> dict[str, str]:
    return {"pk": f"OWNER#{owner_id}", "sk": f"SCHEDULE#{schedule_id}"}


class ScheduleStore:
    def __init__(self, table_name: str) -> None:
        self._table_name = table_name

    @property
    def _table(self) -> Any:
        return resource("dynamodb").Table(self._table_name)

    def put(self, record: ScheduleRecord) -> bool:
        """Write both items; False (nothing written) when a schedule with this id exists."""
        from botocore.exceptions import ClientError

        by_id = _schedule_key(record.schedule_id)
        by_owner = _owner_key(record.owner_id, record.schedule_id)
        try:
            self._put_both(record, by_id, by_owner)
        except ClientError as exc:
            reasons = exc.response.get("CancellationReasons") or []
            if any(reason.get("Code") == "ConditionalCheckFailed" for reason in reasons):
                return False
            raise
        return True

    def _put_both(self, record: ScheduleRecord, by_id: dict[str, str], by_owner: dict[str, str]) -> None:
        self._table.meta.client.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": self._table_name,
                        "Item": record.item(**by_id),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
                {
                    "Put": {
                        "TableName": self._table_name,
                        "Item": record.item(**by_owner),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )

    def get(self, schedule_id: str) -> ScheduleRecord | None:
        item = self._table.get_item(Key=_schedule_key(schedule_id), ConsistentRead=True).get("Item")
        return None if item is None else ScheduleRecord.from_item(item)

    def list_for_owner(self, owner_id: str) -> list[ScheduleRecord]:
        from boto3.dynamodb.conditions import Key

        records: list[ScheduleRecord] = []
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("pk").eq(f"OWNER#{owner_id}") & Key("sk").begins_with("SCHEDULE#")
        }
        while True:
            page = self._table.query(**kwargs)
            records.extend(ScheduleRecord.from_item(item) for item in page["Items"])
            if "LastEvaluatedKey" not in page:
                return records
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def count_for_owner(self, owner_id: str) -> int:
        from boto3.dynamodb.conditions import Key

        total = 0
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("pk").eq(f"OWNER#{owner_id}") & Key("sk").begins_with("SCHEDULE#"),
            "Select": "COUNT",
        }
        while True:
            page = self._table.query(**kwargs)
            total += int(page["Count"])
            if "LastEvaluatedKey" not in page:
                return total
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def delete(self, record: ScheduleRecord) -> None:
        self._table.meta.client.transact_write_items(
            TransactItems=[
                {"Delete": {"TableName": self._table_name, "Key": _schedule_key(record.schedule_id)}},
                {
                    "Delete": {
                        "TableName": self._table_name,
                        "Key": _owner_key(record.owner_id, record.schedule_id),
                    }
                },
            ]
        )
