"""What the services need from the outside beyond the agent's ports (agent/ports.py); the AWS
adapters implement them and service/runtime.py wires them in."""

from __future__ import annotations

from typing import Any, Protocol


class EventSink(Protocol):
    """Announces an event to the backend (detail-type from models.events, camelCase detail)."""

    def publish(self, detail_type: str, detail: dict[str, Any]) -> None: ...
