"""The event contract: one JSON Schema (draft 4, as EventBridge's schema registry takes it) per
detail-type, committed in the package and equal to what the detail models say; every emitted event
is checked against its schema (tests/integration/conftest.py checks every event the suite emits).
Regenerate the schemas after a change: `.venv/bin/python -m tests.integration.test_event_contract`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft4Validator

from wp_agent.models import events

SCHEMAS = Path(events.__file__).resolve().parent / "event_schemas"


def test_the_committed_schemas_are_the_models() -> None:
    for detail_type in events.DETAIL_TYPES:
        assert events.committed_schema(detail_type) == events.event_schema(detail_type), (
            f"event_schemas/{events.schema_file_name(detail_type)} is stale: regenerate it (module docstring)"
        )
    assert sorted(p.name for p in SCHEMAS.glob("*.json")) == sorted(
        events.schema_file_name(t) for t in events.DETAIL_TYPES
    )


@pytest.mark.parametrize("detail_type", events.DETAIL_TYPES)
def test_each_schema_is_valid_draft_4(detail_type: str) -> None:
    Draft4Validator.check_schema(events.committed_schema(detail_type))


def envelope(detail_type: str, detail: dict[str, Any]) -> dict[str, Any]:
    return {
        "version": "0",
        "id": "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
        "detail-type": detail_type,
        "source": events.SOURCE,
        "account": "123456789012",
        "time": "2026-11-23T00:00:00Z",
        "region": "ap-northeast-1",
        "resources": [],
        "detail": detail,
    }


def test_a_detail_missing_its_event_id_or_with_a_stray_field_is_refused() -> None:
    validator = Draft4Validator(events.committed_schema(events.RUN_COMPLETED))
    detail = {"sessionId": "s", "runId": "r", "userId": "u", "targetId": "t", "status": "Completed"}
    assert not validator.is_valid(envelope(events.RUN_COMPLETED, detail))
    detail["eventId"] = events.event_id(events.RUN_COMPLETED, detail)
    assert validator.is_valid(envelope(events.RUN_COMPLETED, detail))
    assert not validator.is_valid(envelope(events.RUN_COMPLETED, detail | {"secret": "x"}))
    assert not validator.is_valid(envelope(events.RUN_COMPLETED, detail | {"status": "Running"}))


def test_the_same_announcement_carries_the_same_event_id() -> None:
    first = {"runId": "run_1", "status": "Completed"}
    assert events.event_id(events.RUN_COMPLETED, first) == events.event_id(
        events.RUN_COMPLETED, first | {"response": "again"}
    )
    assert events.event_id(events.RUN_COMPLETED, first) != events.event_id(events.RUN_FAILED, first)
    assert events.event_id(events.RUN_COMPLETED, first) != events.event_id(
        events.RUN_COMPLETED, {"runId": "run_2"}
    )


if __name__ == "__main__":
    SCHEMAS.mkdir(exist_ok=True)
    for stale in SCHEMAS.glob("*.json"):
        stale.unlink()
    for kind in events.DETAIL_TYPES:
        text = json.dumps(events.event_schema(kind), ensure_ascii=False, indent=2) + "\n"
        (SCHEMAS / events.schema_file_name(kind)).write_text(text, encoding="utf-8")
