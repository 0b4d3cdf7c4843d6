"""Registered WordPress targets (and schedules) in the registry table."""

from __future__ import annotations

from typing import Any

from wp_agent.adapters.aws.clients import resource
from wp_agent.models.target import Target


class TargetRegistry:
    def __init__(self, table_name: str) -> None:
        self._table_name = table_name

    @property
    def _table(self) -> Any:
        return resource("dynamodb").Table(self._table_name)

    def put(self, target: Target, *, replace: bool = False) -> bool:
        """Store a target; False when it exists and `replace` is not set."""
        from botocore.exceptions import ClientError

        item = {
            "pk": f"TARGET#{target.target_id}",
            "sk": "TARGET",
            **target.model_dump(mode="json", exclude_none=True),
        }
        kwargs: dict[str, Any] = {"Item": item}
        if not replace:
            kwargs["ConditionExpression"] = "attribute_not_exists(pk)"
        try:
            self._table.put_item(**kwargs)
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def get(self, target_id: str) -> Target | None:
        item = self._table.get_item(Key={"pk": f"TARGET#{target_id}", "sk": "TARGET"}).get("Item")
        if item is None:
            return None
        return Target.model_validate({k: v for k, v in item.items() if k not in {"pk", "sk"}}, strict=False)

    def list(self) -> list[Target]:
        from boto3.dynamodb.conditions import Attr

        targets: list[Target] = []
        kwargs: dict[str, Any] = {"FilterExpression": Attr("sk").eq("TARGET")}
        while True:
            page = self._table.scan(**kwargs)
            targets.extend(
                Target.model_validate({k: v for k, v in i.items() if k not in {"pk", "sk"}}, strict=False)
                for i in page["Items"]
            )
            if "LastEvaluatedKey" not in page:
                return sorted(targets, key=lambda t: t.target_id)
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
