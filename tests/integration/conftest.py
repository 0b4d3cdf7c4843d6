"""Fixtures for the integration tests that need more than the shared doubles."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft4Validator

from tests.fakes.serverless import serverless, synthesized_template  # noqa: F401 - fixtures (imports the CDK app)
from wp_agent.adapters.aws.events import EventPublisher
from wp_agent.models import events


@pytest.fixture(autouse=True)
def every_event_follows_its_schema(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every event any integration test emits is checked against its committed JSON Schema (the
    envelope EventBridge wraps it in included) as it is sent."""
    validators = {kind: Draft4Validator(events.committed_schema(kind)) for kind in events.DETAIL_TYPES}
    real = EventPublisher.entry
    sent: list[dict[str, Any]] = []

    def checked(publisher: EventPublisher, detail_type: str, detail: dict[str, Any]) -> dict[str, Any]:
        entry = real(publisher, detail_type, detail)
        event = {
            "version": "0",
            "id": "local",
            "detail-type": entry["DetailType"],
            "source": entry["Source"],
            "account": "123456789012",
            "time": "2026-01-01T00:00:00Z",
            "region": "ap-northeast-1",
            "resources": [],
            "detail": json.loads(entry["Detail"]),
        }
        problems = [error.message for error in validators[detail_type].iter_errors(event)]
        assert not problems, f"{detail_type} event breaks its schema: {problems}"
        sent.append(event)
        return entry

    monkeypatch.setattr(EventPublisher, "entry", checked)
    return sent
