"""The serverless stack on moto, for end-to-end tests of a run:

- the state machine is the *synthesized* definition (CDK app), executed by moto's interpreter;
- its Lambda invocations, and the API's, are dispatched in-process to the real handlers in functions/,
  each in a container of its function as Lambda runs them (tests/fakes/lambda_containers.py: one
  invocation at a time per container, warm reuse, module state of its own);
- the turn's SSH goes to the real sshd rig (real WP-CLI on a real WordPress), the key in Secrets Manager;
- the model is the scripted Anthropic server; EventBridge events land in an SQS queue to inspect.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.dynamodb.responses import DynamoHandler
from moto.stepfunctions.parser.models import stepfunctions_parser_backends

import functions.api.handler as api_handler
import functions.approval.handler as approval_handler
import functions.publish_article.handler as publish_article_handler
import functions.turn.handler as turn_handler
import functions.workflow_tasks.handler as workflow_tasks_handler
from tests.fakes import aws as aws_fakes
from tests.fakes.anthropic_server import ScriptedAnthropicServer
from tests.fakes.apigw import LambdaContextStub, call, rest_event
from tests.fakes.cdk_synth import template_once
from tests.fakes.lambda_containers import FunctionContainers, SameRequestGate
from tests.fakes.moto_workflow import deploy_workflow, dispatch_lambda_invocations
from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import TestWordPress
from wp_agent.adapters.aws.audit_log import DynamoAuditLog
from wp_agent.adapters.aws.clients import reset_clients
from wp_agent.adapters.aws.registry import TargetRegistry
from wp_agent.executors.ssh import close_pooled_connections
from wp_agent.executors.ssh_keys import clear_secret_cache
from wp_agent.local_api.workflow import MOTO_CONFIG
from wp_agent.models.target import Target

REGION = aws_fakes.REGION
ACCOUNT = "123456789012"
# The handler modules as imported once (tests patch and read these); invocations run in containers,
# each a fresh import of the same module.
HANDLERS: dict[str, Any] = {
    "api": api_handler,
    "turn": turn_handler,
    "approval": approval_handler,
    "workflow_tasks": workflow_tasks_handler,
    "publish_article": publish_article_handler,
}
TARGET_ID = "site-a"
ANTHROPIC_TEST_KEY = "sk-ant-api03-TESTONLY-0123456789abcdefghijklmnopqrstuvwxyz"
OWNER = "user-1"


def synthesized_once(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The CDK app's template, synthesised once per test run and shared by the workers and the infra
    tests (tests/fakes/cdk_synth.py). (The `synthesized_template` fixture, tests/integration/conftest.py.)"""
    return template_once(tmp_path_factory)


class LambdaDiedError(BaseException):
    """Raised inside a handler to play a Lambda that was killed mid-invocation (timeout, crash)."""


def _containers() -> dict[str, FunctionContainers]:
    return {name: FunctionContainers(module.__name__) for name, module in HANDLERS.items()}


@dataclass
class Dispatcher:
    """What moto's Lambda backend calls: the real handler in a container of its function, with
    optional one-shot sabotage. The API's invocations use `functions["api"]` the same way."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    before: dict[str, Callable[[dict[str, Any]], None]] = field(default_factory=dict)
    functions: dict[str, FunctionContainers] = field(default_factory=_containers)
    _in_flight: int = 0
    _changed: threading.Condition = field(default_factory=threading.Condition)

    def invoke(self, name: str, event: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        with self._changed:
            self._in_flight += 1
        try:
            return self._run(name, event)
        finally:
            with self._changed:
                self._in_flight -= 1
                self._changed.notify_all()

    def _run(self, name: str, event: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        self.calls.append((name, event))
        hook = self.before.pop(name, None)
        try:
            if hook is not None:
                hook(event)
            return self.functions[name].lambda_handler(event, LambdaContextStub()), False
        except LambdaDiedError:
            return {"errorType": "Sandbox.Timedout", "errorMessage": "Task timed out"}, True
        except Exception as exc:  # noqa: BLE001 - any handler error is reported as Lambda reports it
            return {"errorType": type(exc).__name__, "errorMessage": str(exc)[:200]}, True

    def wait_idle(self, timeout: float) -> None:
        """Until no handler runs. A stopped execution's Lambda runs on (as on AWS), in moto's thread."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._in_flight == 0, timeout):
                raise AssertionError(f"{self._in_flight} Lambda invocations still running after {timeout} s")


@dataclass
class ServerlessStack:
    rig: SshdRig
    model: ScriptedAnthropicServer
    dispatcher: Dispatcher
    sfn: Any
    machine_arn: str
    short_wait_machine_arn: str
    queue_url: str
    site: TestWordPress
    api_gate: SameRequestGate = field(default_factory=SameRequestGate)

    # -- the API, as the backend calls it -------------------------------------------------------

    def api(self, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        event = rest_event(method, path, **kwargs)
        with self.api_gate.entered(event):  # Powertools' resolver keeps one current event per process
            return call(self.dispatcher.functions["api"].lambda_handler, event)

    def wait_for(
        self, session_id: str, *statuses: str, timeout: float = 60.0, user: str = OWNER
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status, view = self.api("GET", f"/v1/sessions/{session_id}", user=user)
            if status == 200 and view["status"] in statuses:
                return dict(view)
            time.sleep(0.1)
        raise AssertionError(f"session {session_id} did not reach {statuses}; last: {view}")

    def execution(self, run_id: str) -> dict[str, Any]:
        arn = f"{self.machine_arn.replace(':stateMachine:', ':execution:')}:{run_id}"
        described = self.sfn.describe_execution(executionArn=arn)
        return dict(described)

    def wait_for_execution(self, execution_arn: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = str(self.sfn.describe_execution(executionArn=execution_arn)["status"])
            if status != "RUNNING":
                return status
            time.sleep(0.1)
        raise AssertionError("execution still running")

    def history(self, execution_arn: str) -> list[dict[str, Any]]:
        """The execution's events as moto recorded them. Read from its backend, not through its API:
        when a StopExecution lands mid-task, moto's evaluator can record an event its own response
        serializer then fails on (a payload where a number belongs)."""
        backend = stepfunctions_parser_backends[ACCOUNT][REGION]
        return [dict(event) for event in backend.get_execution_history(execution_arn)["events"]]

    def settle(self, timeout: float = 60.0) -> None:
        """Stop what still runs and wait until no handler is in flight, so nothing of this test
        (a session write, an SSH connection) happens during the next one."""
        for machine in (self.machine_arn, self.short_wait_machine_arn):
            running = self.sfn.list_executions(stateMachineArn=machine, statusFilter="RUNNING")["executions"]
            for execution in running:
                self.sfn.stop_execution(executionArn=execution["executionArn"], cause="test ended")
        self.dispatcher.wait_idle(timeout)

    def events(self, expected: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        """The events delivered to the backend's queue, waiting until `expected` have arrived (a run's
        status is saved before its event is sent, so a poller can see the status first)."""
        sqs = boto3.client("sqs", region_name=REGION)
        found: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            batch = sqs.receive_message(
                QueueUrl=self.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0
            ).get("Messages", [])
            for message in batch:
                found.append(json.loads(message["Body"]))
                sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
            if len(found) >= expected and not batch:
                return found
            if not batch:
                time.sleep(0.05)
        return found

    def events_until(self, detail_type: str, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Every event delivered until one of `detail_type` has arrived (or the time is up)."""
        found: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found += self.events(1, timeout=max(0.1, deadline - time.monotonic()))
            if any(e["detail-type"] == detail_type for e in found):
                break
        return found

    def audit(self, session_id: str) -> list[dict[str, Any]]:
        return DynamoAuditLog(aws_fakes.TABLES["audit"]).for_session(session_id)


def _reset_handlers() -> None:
    for module in HANDLERS.values():
        module.runtime.reset()
    reset_clients()
    clear_secret_cache()
    # Warm Lambdas keep their SSH connection: close it, or the next test finds it in the shared pool
    # (and the rig counts it among its connections).
    close_pooled_connections()


@contextmanager
def running_stack(
    sshd_server: SshdRig,
    rig_site: TestWordPress,
    scripted_anthropic: ScriptedAnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
    synthesized_template: dict[str, Any],
) -> Iterator[ServerlessStack]:
    template = synthesized_template
    dispatcher = Dispatcher()

    environment = {
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "WP_AGENT_EVENT_BUS": "wp-agent",
        "WP_AGENT_ADMIN_PRINCIPALS": "arn:aws:sts::123456789012:assumed-role/ArgoAdmin/",
        "ANTHROPIC_BASE_URL": scripted_anthropic.base_url,
        "WP_AGENT_API_RETRY_BASE_SECONDS": "0.01",
        "WP_CLI_MODE": "ssh",
        "WP_AGENT_HEALTH_CONNECT": sshd_server.health_connect,
        "POWERTOOLS_SERVICE_NAME": "wp-agent",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "WpAgent",
        **aws_fakes.deployment_env(),
    }
    for key, value in environment.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    dispatch_lambda_invocations(monkeypatch, dispatcher.invoke)
    monkeypatch.setattr(DynamoHandler, "call_action", aws_fakes._atomic_call_action)
    _reset_handlers()
    site = rig_site
    with mock_aws(config=MOTO_CONFIG):
        aws_fakes.create_tables()
        secrets = boto3.client("secretsmanager", region_name=REGION)
        key_secret = secrets.create_secret(
            Name=f"wp-agent/targets/{TARGET_ID}",
            SecretString=json.dumps(
                {
                    "privateKey": Path(sshd_server.client_key_path).read_text(encoding="utf-8"),
                    "hostKey": sshd_server.host_key_line,
                }
            ),
        )["ARN"]
        api_key = secrets.create_secret(Name="wp-agent/anthropic-api-key", SecretString=ANTHROPIC_TEST_KEY)[
            "ARN"
        ]
        monkeypatch.setenv("ANTHROPIC_API_KEY_SECRET_ARN", api_key)
        TargetRegistry(aws_fakes.TABLES["registry"]).put(
            Target(
                target_id=TARGET_ID,
                host=sshd_server.host,
                port=sshd_server.port,
                user=sshd_server.user,
                wp_path=sshd_server.wp_path,
                secret_arn=key_secret,
                owners=[OWNER],
                multisite=True,
                network_admins=[OWNER],
            )
        )
        events = boto3.client("events", region_name=REGION)
        events.create_event_bus(Name="wp-agent")
        sqs = boto3.client("sqs", region_name=REGION)
        queue_url = sqs.create_queue(QueueName="backend-events")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        events.put_rule(
            Name="to-backend", EventBusName="wp-agent", EventPattern=json.dumps({"source": ["argo.wp-agent"]})
        )
        events.put_targets(
            Rule="to-backend", EventBusName="wp-agent", Targets=[{"Id": "q", "Arn": queue_arn}]
        )

        boto3.client("scheduler", region_name=REGION).create_schedule_group(Name="wp-agent")
        monkeypatch.setenv("WP_AGENT_SCHEDULER_ROLE_ARN", f"arn:aws:iam::{ACCOUNT}:role/wp-agent-scheduler")
        deployed = deploy_workflow(template, region=REGION, account=ACCOUNT, short_wait_seconds=2)
        sfn, machine, short = deployed.client, deployed.arn, deployed.short_wait_arn
        monkeypatch.setenv("WP_AGENT_STATE_MACHINE_ARN", machine)
        stack = ServerlessStack(
            rig=sshd_server,
            model=scripted_anthropic,
            dispatcher=dispatcher,
            sfn=sfn,
            machine_arn=machine,
            short_wait_machine_arn=short,
            queue_url=queue_url,
            site=site,
        )
        try:
            yield stack
        finally:  # (as a fixture's teardown: also after a failed test)
            try:
                stack.settle()
                for function in dispatcher.functions.values():
                    function.close()
            finally:
                _reset_handlers()
