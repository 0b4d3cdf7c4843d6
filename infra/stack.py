"""The wp-agent stack: one construct per concern, composed; outputs for operators and the backend."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Duration, Stack
from constructs import Construct

from infra import names
from infra.api_construct import ApiConstruct
from infra.events_construct import EventsConstruct
from infra.functions_construct import FunctionsConstruct
from infra.observability_construct import ObservabilityConstruct
from infra.packaging import LayerDirs
from infra.schedules_construct import SchedulesConstruct
from infra.secrets_construct import SecretsConstruct
from infra.settings import StackSettings
from infra.storage_construct import StorageConstruct
from infra.workflow_construct import WorkflowConstruct


class WpAgentStack(Stack):
    """Argo Note WP-CLI Agent backend: API, run workflow, storage, events, schedules, monitoring."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StackSettings,
        layers: LayerDirs,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.storage = StorageConstruct(self, "Storage")
        self.secrets = SecretsConstruct(self, "Secrets", anthropic_secret_arn=settings.anthropic_secret_arn)
        self.events = EventsConstruct(self, "Events")
        self.functions = FunctionsConstruct(
            self,
            "Functions",
            layers=layers,
            storage=self.storage,
            secrets=self.secrets,
            bus=self.events.bus,
            settings=settings,
        )
        self.workflow = WorkflowConstruct(
            self,
            "Workflow",
            turn=self.functions.turn,
            approval=self.functions.approval,
            workflow_tasks=self.functions.workflow_tasks,
            publish_article=self.functions.publish_article,
            approval_timeout=Duration.seconds(settings.approval_timeout_seconds),
        )
        self.schedules = SchedulesConstruct(self, "Schedules", state_machine=self.workflow.state_machine)
        self.functions.connect_workflow(
            state_machine=self.workflow.state_machine,
            schedule_group=self.schedules.group,
            scheduler_role=self.schedules.role,
        )
        self.api = ApiConstruct(
            self, "Api", handler=self.functions.api_alias, backend_principals=settings.backend_principals
        )
        self.observability = ObservabilityConstruct(
            self,
            "Observability",
            functions=dict(self.functions.functions),
            state_machine=self.workflow.state_machine,
            rest_api=self.api.rest_api,
            tables={table.value: construct for table, construct in self.storage.tables.items()},
        )
        self._add_outputs()

    def _add_outputs(self) -> None:
        output = names.Output
        values: dict[names.Output, tuple[str, str]] = {
            output.API_URL: (self.api.url, "Base URL of the REST API (SigV4, service execute-api)"),
            output.STATE_MACHINE_ARN: (self.workflow.state_machine.state_machine_arn, "Run workflow"),
            output.EVENT_BUS_NAME: (self.events.bus.event_bus_name, "Bus carrying run events"),
            output.SCHEDULE_GROUP_NAME: (self.schedules.group.schedule_group_name, "Scheduler group"),
            output.SCHEDULER_ROLE_ARN: (self.schedules.role.role_arn, "Role scheduled runs start as"),
            output.ANTHROPIC_SECRET_ARN: (
                self.secrets.anthropic_api_key.secret_arn,
                "Put the Anthropic API key here (put-secret-value)",
            ),
            output.WARNING_TOPIC_ARN: (self.observability.warning_topic.topic_arn, "Warning alarms"),
            output.CRITICAL_TOPIC_ARN: (self.observability.critical_topic.topic_arn, "Critical alarms"),
            output.DASHBOARD_NAME: (self.observability.dashboard.dashboard_name, "CloudWatch dashboard"),
        }
        for table, table_output in names.TABLE_OUTPUT.items():
            values[table_output] = (self.storage.tables[table].table_name, f"{table.value} table")
        for output_id, (value, description) in values.items():
            CfnOutput(self, output_id.value, value=value, description=description)
