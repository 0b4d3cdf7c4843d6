"""Fixtures for the integration tests that need more than the shared doubles."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from jsonschema import Draft4Validator

from wp_agent.adapters.aws.events import EventPublisher
from wp_agent.models import events

if TYPE_CHECKING:
    from tests.fakes.anthropic_server import ScriptedAnthropicServer
    from tests.fakes.serverless import ServerlessStack
    from tests.fakes.sshd import SshdRig
    from tests.fakes.wordpress import TestWordPress


# The serverless stack's fixtures import the CDK app, moto's state machines and every handler (~4 s): only
# when a test asks for them, not in every pytest process that collects an integration test (the date
# runs, the contract run).
@pytest.fixture(scope="session")
def synthesized_template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from tests.fakes.serverless import synthesized_once

    return synthesized_once(tmp_path_factory)


@pytest.fixture
def serverless(
    sshd_server: SshdRig,
    rig_site: TestWordPress,
    scripted_anthropic: ScriptedAnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
    synthesized_template: dict[str, Any],
) -> Iterator[ServerlessStack]:
    from tests.fakes.serverless import running_stack

    with running_stack(sshd_server, rig_site, scripted_anthropic, monkeypatch, synthesized_template) as stack:
        yield stack


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
