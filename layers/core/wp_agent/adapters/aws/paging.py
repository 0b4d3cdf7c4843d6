"""One page of a DynamoDB Query, newest first, with the key to continue from.

A filter (status, record types) is applied by DynamoDB after it reads the items, so a page may need
several reads; each page reads at most `MAX_READS` batches and then stops with a continuation key
(possibly with fewer items than asked for), so no request reads unboundedly much. The key continues
exactly after the last item returned, never after one that was read and not shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MAX_READS = 5
FILTERED_READ_BATCH = 200


class InvalidStartKeyError(ValueError):
    """A start key that is not a key of this query's partition (a forged or foreign cursor)."""


@dataclass(frozen=True)
class Page:
    items: list[dict[str, Any]]
    next_key: dict[str, str] | None


def query_page(
    table: Any,
    *,
    key_condition: Any,
    partition: tuple[str, str],
    key_attributes: Sequence[str],
    limit: int,
    start_key: dict[str, str] | None = None,
    index_name: str | None = None,
    filter_expression: Any | None = None,
) -> Page:
    """Up to `limit` items, newest first (descending sort key); `partition` is the (attribute,
    value) the key condition names, which a start key must share."""
    if start_key is not None:
        name, value = partition
        if set(start_key) != set(key_attributes) or start_key.get(name) != value:
            raise InvalidStartKeyError("the start key is not one of this query")
    kwargs: dict[str, Any] = {"KeyConditionExpression": key_condition, "ScanIndexForward": False}
    if index_name is not None:
        kwargs["IndexName"] = index_name
    if filter_expression is not None:
        kwargs["FilterExpression"] = filter_expression
    if start_key:
        kwargs["ExclusiveStartKey"] = start_key
    found: list[dict[str, Any]] = []
    last: dict[str, Any] | None = None
    for _ in range(MAX_READS):
        # One more than asked: whether another page exists is then known without an empty page.
        kwargs["Limit"] = FILTERED_READ_BATCH if filter_expression is not None else limit + 1 - len(found)
        response = table.query(**kwargs)
        items: list[dict[str, Any]] = response["Items"]
        last = response.get("LastEvaluatedKey")
        for position, item in enumerate(items):
            if len(found) == limit:
                return Page(found, _key_of(found[-1], key_attributes))
            found.append(item)
            if len(found) == limit and position == len(items) - 1 and last is None:
                return Page(found, None)
        if last is None:
            return Page(found, None)
        kwargs["ExclusiveStartKey"] = last
    if last is None:  # pragma: no cover - the loop returns when the reads run out of items
        return Page(found, None)
    # Out of reads for this page: continue where the reads stopped (past items that were filtered out).
    return Page(found, {name: str(last[name]) for name in key_attributes if name in last})


def _key_of(item: dict[str, Any], key_attributes: Sequence[str]) -> dict[str, str]:
    return {name: str(item[name]) for name in key_attributes}
