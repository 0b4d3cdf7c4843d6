"""The serverless stack in moto for one local target: the tables (table_layout.py, as the CDK
storage construct makes them), the event bus, the schedule group, the target's secret and its
registration, the synthesized state machine with its Lambda tasks dispatched in-process to the real
task handlers, and the runtime the API's routes use.

Everything AWS is moto inside this process: nothing reaches an AWS account, whatever credentials
the environment holds (moto's `mock_aws` intercepts every boto3 call while the stack runs).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wp_agent import clock
from wp_agent.adapters.aws.clients import reset_clients
from wp_agent.adapters.aws.table_layout import LAYOUTS, LogicalTable
from wp_agent.config import (
    ApiSettings,
    ApprovalSettings,
    CliSettings,
    LambdaSettings,
    PublishArticleSettings,
    TurnSettings,
    WorkflowTasksSettings,
    WpCliMode,
    WpCliSettings,
)
from wp_agent.local_api import workflow
from wp_agent.local_api.runtime import EventListener, LocalRuntime
from wp_agent.models.target import Target
from wp_agent.service import task_handlers
from wp_agent.service.runtime import function_settings

logger = logging.getLogger(__name__)

REGION = "ap-northeast-1"
ACCOUNT = "123456789012"
TABLE_NAMES: dict[LogicalTable, str] = {
    table: f"wp-agent-{table.value.replace('_', '-')}" for table in LogicalTable
}
EVENT_BUS = "wp-agent"
SCHEDULE_GROUP = "wp-agent"
SCHEDULER_ROLE = f"arn:aws:iam::{ACCOUNT}:role/wp-agent-scheduler"
# The caller's IAM identity as the API sees it locally: no signature, never an administrator.
LOCAL_PRINCIPAL = f"arn:aws:iam::{ACCOUNT}:user/wp-agent-local"

TaskHandler = Callable[[Any, dict[str, Any]], dict[str, Any]]
TASKS: dict[str, TaskHandler] = {
    "turn": task_handlers.turn,
    "approval": task_handlers.approval,
    "workflow_tasks": task_handlers.small_task,
    "publish_article": task_handlers.publish_article,
}
# Each function's settings class: the local stack starts only with settings every function accepts,
# so what would fail a Lambda's start fails `api serve`'s start too (config.py).
FUNCTION_SETTINGS: dict[str, type[LambdaSettings]] = {
    "api": ApiSettings,
    "turn": TurnSettings,
    "approval": ApprovalSettings,
    "workflow_tasks": WorkflowTasksSettings,
    "publish_article": PublishArticleSettings,
}


@dataclass(frozen=True)
class LambdaContext:
    """What the handlers read of a Lambda context."""

    function_name: str
    aws_request_id: str = "local"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:local"
    timeout_seconds: float = 29.0
    started: float = field(default_factory=time.monotonic)

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.timeout_seconds - (time.monotonic() - self.started)) * 1000))


def table_environment() -> dict[str, str]:
    """The table settings of the local stack (Settings field -> table name)."""
    return {
        "wp_agent_sessions_table": TABLE_NAMES[LogicalTable.SESSIONS],
        "wp_agent_audit_table": TABLE_NAMES[LogicalTable.AUDIT],
        "wp_agent_registry_table": TABLE_NAMES[LogicalTable.REGISTRY],
        "wp_agent_rate_limit_table": TABLE_NAMES[LogicalTable.RATE_LIMITS],
        "wp_agent_idempotency_table": TABLE_NAMES[LogicalTable.IDEMPOTENCY],
    }


def create_tables(region: str = REGION) -> None:
    """The stack's tables with their keys and indexes (moto)."""
    import boto3

    dynamodb = boto3.client("dynamodb", region_name=region)
    for table, layout in LAYOUTS.items():
        dynamodb.create_table(**layout.create_table_request(TABLE_NAMES[table]))


class LocalStack:
    """Start, serve, stop. `runtime` is what the API's routes and the Lambda tasks run with."""

    def __init__(
        self,
        settings: CliSettings,
        *,
        target_id: str,
        owner: str,
        on_event: EventListener | None = None,
    ) -> None:
        self._base = settings
        self.target_id = target_id
        self.owner = owner
        self._on_event = on_event
        self._mock: Any = None
        self._routing: Any = None
        self._api_lock = threading.Lock()
        self._environment: dict[str, str | None] = {}
        self.runtime: LocalRuntime | None = None

    def start(self) -> LocalRuntime:
        from moto import mock_aws

        # The clients the adapters create take the region from the environment; moto answers for it.
        for name in ("AWS_DEFAULT_REGION", "AWS_REGION"):
            self._environment[name] = os.environ.get(name)
            os.environ[name] = REGION
        reset_clients()
        self._mock = mock_aws(config=workflow.MOTO_CONFIG)
        self._mock.start()
        try:
            return self._build()
        except BaseException:
            self.stop()
            raise

    def _build(self) -> LocalRuntime:
        import boto3

        create_tables()
        boto3.client("events", region_name=REGION).create_event_bus(Name=EVENT_BUS)
        boto3.client("scheduler", region_name=REGION).create_schedule_group(Name=SCHEDULE_GROUP)
        self._routing = workflow.lambda_invocations_to(self.invoke)
        self._routing.__enter__()
        deployed = workflow.deploy_workflow(
            lambda arns: workflow.render(
                workflow.committed_definition(), arns, region=REGION, account=ACCOUNT
            ),
            region=REGION,
        )
        settings = self._settings(deployed.arn)
        ssh = settings.wp_cli_mode is WpCliMode.SSH
        secret_arn = self._store_secret(settings if ssh else None)
        self.runtime = LocalRuntime(
            settings,
            local_target=None if ssh else self.target_id,
            local_executor=None if ssh else _executor_factory(settings),
            on_event=self._on_event,
        )
        self.runtime.registry.put(self._target(settings, secret_arn), replace=True)
        return self.runtime

    def _settings(self, state_machine_arn: str) -> LambdaSettings:
        """The command line's settings with the local stack's resources, as the CDK stack gives them
        to the functions; a ConfigurationError naming what a function would lack."""
        values = {
            **{k: v for k, v in self._base.model_dump().items() if k in LambdaSettings.model_fields},
            **table_environment(),
            "wp_agent_event_bus": EVENT_BUS,
            "wp_agent_state_machine_arn": state_machine_arn,
            "wp_agent_schedule_group": SCHEDULE_GROUP,
            "wp_agent_scheduler_role_arn": SCHEDULER_ROLE,
            "wp_agent_admin_principals": "",
            "anthropic_api_key_secret_arn": None,
        }
        for settings_class in FUNCTION_SETTINGS.values():
            function_settings(settings_class, values)
        return function_settings(LambdaSettings, values)

    def _store_secret(self, ssh_settings: LambdaSettings | None) -> str:
        """The target's secret: an SSH site's key and pinned host key, else a stand-in (no SSH)."""
        import boto3

        value: dict[str, str] = {"privateKey": "-", "hostKey": ""}
        if ssh_settings is not None:
            value = _ssh_secret(ssh_settings)
        secrets = boto3.client("secretsmanager", region_name=REGION)
        name = f"{ssh_settings.wp_agent_target_secret_prefix if ssh_settings else 'wp-agent/targets/'}{self.target_id}"
        return str(secrets.create_secret(Name=name, SecretString=json.dumps(value))["ARN"])

    def _target(self, settings: LambdaSettings, secret_arn: str) -> Target:
        ssh = settings.wp_cli_mode is WpCliMode.SSH
        return Target(
            target_id=self.target_id,
            host=(settings.vps_host or "127.0.0.1") if ssh else "127.0.0.1",
            port=settings.vps_port if ssh else 22,
            user=settings.vps_ssh_user if ssh else "root",
            wp_path=settings.wp_path if ssh else str(settings.wp_local_path or "/var/www/wordpress"),
            secret_arn=secret_arn,
            owners=[self.owner],
            network_admins=[self.owner],
            multisite=_is_network(settings),
            wp_user=settings.wp_agent_wp_user,
            description=f"wp-agent api serve（WP_CLI_MODE={settings.wp_cli_mode.value}）",
            created_by=LOCAL_PRINCIPAL,
            created_at=clock.now_iso(),
        )

    def invoke(self, name: str, event: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """A Lambda invocation of the state machine, run in-process (an error as Lambda reports it)."""
        runtime = self.runtime
        if runtime is None:
            return {"errorType": "NotReady", "errorMessage": "the local stack is not started"}, True
        try:
            return TASKS[name](runtime, event), False
        except Exception as exc:  # noqa: BLE001 - any handler error is reported as Lambda reports it
            logger.warning("task failed", extra={"function": name, "error_type": type(exc).__name__})
            return {"errorType": type(exc).__name__, "errorMessage": str(exc)[:200]}, True

    def handle_api(self, event: dict[str, Any]) -> dict[str, Any]:
        """One API request: one at a time, as one Lambda container serves them."""
        from wp_agent.http_api.app import handle

        runtime = self.runtime
        if runtime is None:
            raise RuntimeError("the local stack is not started")
        with self._api_lock:
            return handle(event, LambdaContext("api"), lambda: runtime)

    def stop(self) -> None:
        if self._routing is not None:
            self._routing.__exit__(None, None, None)
            self._routing = None
        if self._mock is not None:
            self._mock.stop()
            self._mock = None
        for name, value in self._environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._environment.clear()
        reset_clients()


def _executor_factory(settings: WpCliSettings) -> Callable[[], Any]:
    def build() -> Any:
        from wp_agent.executors.factory import build_wp_cli

        return build_wp_cli(settings)

    return build


def _is_network(settings: WpCliSettings) -> bool:
    """Whether the local WordPress is a multisite network (the sandbox is one)."""
    if settings.wp_cli_mode is WpCliMode.SSH:
        return False
    wp_cli = _executor_factory(settings)()
    try:
        return bool(wp_cli.run(["core", "is-installed", "--network"]).exit_code == 0)
    finally:
        wp_cli.close()


def _ssh_secret(settings: WpCliSettings) -> dict[str, str]:
    """The site's key and pinned host key as a target secret holds them (read from the same settings
    `wp-agent ask` uses; the host key is required, exactly as there)."""
    from wp_agent.executors.ssh_key_sources import MATERIAL_LOADERS
    from wp_agent.executors.ssh_keys import configured_key_method, load_ssh_credentials

    credentials = load_ssh_credentials(settings)
    material = MATERIAL_LOADERS[configured_key_method(settings)](settings)
    passphrase = material.passphrase or (
        settings.vps_ssh_key_passphrase.get_secret_value() if settings.vps_ssh_key_passphrase else None
    )
    value = {
        "privateKey": material.private_key,
        "hostKey": "\n".join(f"{key.get_name()} {key.get_base64()}" for key in credentials.host_keys),
    }
    if passphrase:
        value["passphrase"] = passphrase
    return value
