"""EventBridge events: how the Argo Note backend learns about approvals and finished runs.

source = "argo.wp-agent"; detail-type is one of DETAIL_TYPES; detail is camelCase JSON (README),
described per detail-type by models/events.py and its JSON Schemas, with the `eventId` a consumer
de-duplicates on (EventBridge delivers at least once).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from wp_agent.adapters.aws.clients import client
from wp_agent.models.events import (
    APPROVAL_DECIDED,
    APPROVAL_REQUESTED,
    ARTICLE_FAILED,
    ARTICLE_PUBLISHED,
    DETAIL_TYPES,
    RUN_CANCELLED,
    RUN_COMPLETED,
    RUN_FAILED,
    RUN_UNDONE,
    SOURCE,
    event_id,
)

logger = logging.getLogger(__name__)

__all__ = [
    "APPROVAL_DECIDED",
    "APPROVAL_REQUESTED",
    "ARTICLE_FAILED",
    "ARTICLE_PUBLISHED",
    "DETAIL_TYPES",
    "RUN_CANCELLED",
    "RUN_COMPLETED",
    "RUN_FAILED",
    "RUN_UNDONE",
    "SOURCE",
    "EventPublisher",
]


class EventPublisher:
    def __init__(self, bus_name: str) -> None:
        self._bus_name = bus_name

    def publish(self, detail_type: str, detail: dict[str, Any]) -> None:
        response = client("events").put_events(Entries=[self.entry(detail_type, detail)])
        if response.get("FailedEntryCount"):
            # Events are notifications; the session record stays the source of truth.
            logger.error(
                "event not delivered", extra={"detail_type": detail_type, "entries": response.get("Entries")}
            )

    def entry(self, detail_type: str, detail: dict[str, Any]) -> dict[str, Any]:
        """The PutEvents entry: the detail with its de-duplication id first."""
        if detail_type not in DETAIL_TYPES:
            raise ValueError(f"unknown detail type {detail_type!r}")
        detail = {"eventId": event_id(detail_type, detail), **detail}
        return {
            "Source": SOURCE,
            "DetailType": detail_type,
            "Detail": json.dumps(detail, ensure_ascii=False),
            "EventBusName": self._bus_name,
        }
