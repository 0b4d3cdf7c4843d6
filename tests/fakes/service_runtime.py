"""The services' AwsRuntime on moto tables, with the far ends recorded instead of called: the Step
Functions workflow, the event bus, the model and WP-CLI. For races the serverless rig cannot time."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cached_property
from typing import Any

from tests.fakes.agent_doubles import RecordingWpCli, ScriptedModel
from tests.fakes.aws import TABLES
from wp_agent.adapters.aws.events import DETAIL_TYPES, EventPublisher
from wp_agent.adapters.aws.workflow import ApprovalWaits, RunWorkflow
from wp_agent.agent.approval_protocol import ResumeOutcome
from wp_agent.agent.model_client import ModelClient
from wp_agent.config import LambdaSettings
from wp_agent.executors.port import WpCli
from wp_agent.models.target import Target
from wp_agent.service.runtime import AwsRuntime
from wp_agent.telemetry import NoTelemetry, Telemetry

STATE_MACHINE_ARN = "arn:aws:states:ap-northeast-1:123456789012:stateMachine:wp-agent-run"
TARGET = Target(
    target_id="site-a",
    host="127.0.0.1",
    secret_arn="arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:wp-agent/targets/site-a",
    owners=["u1"],
)


class RecordingWorkflow(RunWorkflow):
    def __init__(self) -> None:
        super().__init__(STATE_MACHINE_ARN)
        self.started: list[str] = []
        self.stopped: list[str] = []
        self.ended: set[str] = set()  # executions that ended without the session knowing
        self.resumed: list[dict[str, Any]] = []
        self.resume_outcomes: list[ResumeOutcome] = []  # what the next resumes find; then RESUMED
        self.on_resume: Callable[[str], None] | None = None  # called with the token before answering
        self._answered: set[str] = set()

    def _start(self, name: str, payload: dict[str, str]) -> str:
        self.started.append(name)
        return self.execution_arn(name)

    def stop(self, execution_arn: str, *, cause: str) -> None:
        self.stopped.append(execution_arn)

    def has_ended(self, execution_arn: str) -> bool:
        return execution_arn in self.ended

    def resume(
        self, task_token: str, decision: dict[str, Any], *, attempts: int = 3, pause: float = 0.3
    ) -> ResumeOutcome:
        self.resumed.append({**decision, "token": task_token})
        if self.on_resume is not None:
            self.on_resume(task_token)
        if self.resume_outcomes:
            return self.resume_outcomes.pop(0)
        if task_token in self._answered:
            return ResumeOutcome.TIMED_OUT  # as Step Functions answers for a task already closed
        self._answered.add(task_token)
        return ResumeOutcome.RESUMED


class RecordingEvents(EventPublisher):
    def __init__(self) -> None:
        super().__init__("wp-agent")
        self.published: list[tuple[str, dict[str, Any]]] = []

    def publish(self, detail_type: str, detail: dict[str, Any]) -> None:
        assert detail_type in DETAIL_TYPES, detail_type
        self.published.append((detail_type, json.loads(json.dumps(detail))))  # as the bus would carry it

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.published]


class RecordedRuntime(AwsRuntime):
    """Needs the `aws` fixture (the tables) and the target registered with `register_target()`."""

    def __init__(self, model: ScriptedModel | None = None, wp: RecordingWpCli | None = None) -> None:
        super().__init__(
            LambdaSettings(
                anthropic_api_key="test",
                wp_agent_sessions_table=TABLES["sessions"],
                wp_agent_audit_table=TABLES["audit"],
                wp_agent_registry_table=TABLES["registry"],
            )
        )
        self.scripted_model = model or ScriptedModel([])
        self.recording_wp = wp or RecordingWpCli()
        self.recording_workflow = RecordingWorkflow()
        self.recording_events = RecordingEvents()

    def register_target(self) -> None:
        self.registry.put(TARGET, replace=True)

    @cached_property
    def workflow(self) -> RunWorkflow:
        return self.recording_workflow

    @cached_property
    def approval_waits(self) -> ApprovalWaits:
        return self.recording_workflow

    @cached_property
    def events(self) -> EventPublisher:
        return self.recording_events

    @cached_property
    def telemetry(self) -> Telemetry:
        return NoTelemetry()

    @cached_property
    def model(self) -> ModelClient:
        return self.scripted_model

    def wp_cli_for(self, target: Target) -> WpCli:
        return self.recording_wp
