"""EventBridge: the `wp-agent` bus the functions publish run events to, an archive, an example rule,
and the schema registry holding each detail-type's JSON Schema.

Events: source `argo.wp-agent`, detail-types `Approval Requested`, `Approval Decided`, `Run Completed`,
`Run Failed`, `Run Cancelled`, `Run Undone`, `Article Published`, `Article Failed`; the detail (models/events.py) carries an `eventId` to
de-duplicate on (delivery is at least once, in no order), ids, status, the pending commands with
their Japanese summaries, or the final answer, with secrets already masked by the core. The
Argo Note backend subscribes with its own rule and target (an API destination, or a bus in its own
account) — that rule lives with the backend, not here. The rule below forwards the same events to a
log group (30 days) so operators can see them without the backend, and shows the pattern to copy.
"""

from __future__ import annotations

import json

import jsii
from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_eventschemas as eventschemas
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk.interfaces import aws_events as events_refs
from constructs import Construct

from infra import names
from wp_agent.models.events import committed_schema

EVENTS_LOG_RETENTION = logs.RetentionDays.ONE_MONTH


class EventsConstruct(Construct):
    """The bus, its archive and the example forwarding rule."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.bus = events.EventBus(self, "Bus", event_bus_name=names.EVENT_BUS_NAME)
        run_events = events.EventPattern(
            source=[names.EVENT_SOURCE], detail_type=[detail_type.value for detail_type in names.DetailType]
        )
        # Replayable for a month: a backend outage can be recovered with StartReplay.
        self.archive = self.bus.archive(
            "Archive",
            description="wp-agent run events, for replay after a consumer outage",
            event_pattern=events.EventPattern(source=[names.EVENT_SOURCE]),
            retention=Duration.days(names.EVENT_ARCHIVE_RETENTION_DAYS),
        )
        # The contract, browsable (and downloadable as code bindings) in the EventBridge console.
        self.schema_registry = eventschemas.CfnRegistry(
            self,
            "SchemaRegistry",
            registry_name=names.SCHEMA_REGISTRY_NAME,
            description="wp-agent events: one JSON Schema per detail-type (README: Events)",
        )
        self.schemas = {
            detail_type: eventschemas.CfnSchema(
                self,
                f"Schema{detail_type.name.title().replace('_', '')}",
                registry_name=names.SCHEMA_REGISTRY_NAME,
                schema_name=f"{names.EVENT_SOURCE}@{detail_type.value.replace(' ', '')}",
                type="JSONSchemaDraft4",
                content=json.dumps(committed_schema(detail_type.value), ensure_ascii=False),
                description=f"{detail_type.value} ({names.EVENT_SOURCE})",
            )
            for detail_type in names.DetailType
        }
        for schema in self.schemas.values():
            schema.add_resource_dependency(self.schema_registry)
        # EventBridge can only write to log groups named /aws/events/...
        self.log_group = logs.LogGroup(
            self,
            "RunEventsLog",
            log_group_name=f"/aws/events/{Stack.of(self).stack_name}/run-events",
            retention=EVENTS_LOG_RETENTION,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.example_rule = events.Rule(
            self,
            "RunEventsToLogs",
            event_bus=self.bus,
            description="Example: run events to CloudWatch Logs (the backend adds its own rule)",
            event_pattern=run_events,
            targets=[_LogGroupTarget(self.log_group)],
        )
        # What aws_events_targets.CloudWatchLogGroup would set up through a custom-resource Lambda,
        # as a plain AWS::Logs::ResourcePolicy: EventBridge may write to this group for this rule only.
        self.log_group.add_to_resource_policy(
            iam.PolicyStatement(
                sid="RunEventsRuleWrites",
                principals=[
                    iam.ServicePrincipal("events.amazonaws.com"),
                    iam.ServicePrincipal("delivery.logs.amazonaws.com"),
                ],
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[self.log_group.log_group_arn],
                conditions={"ArnEquals": {"aws:SourceArn": self.example_rule.rule_arn}},
            )
        )


@jsii.implements(events.IRuleTarget)
class _LogGroupTarget:
    """A rule target pointing at a log group, without CDK's custom resource for the log policy."""

    def __init__(self, log_group: logs.ILogGroup) -> None:
        self._log_group = log_group

    def bind(self, rule: events_refs.IRuleRef, id: str | None = None) -> events.RuleTargetConfig:
        return events.RuleTargetConfig(arn=self._log_group.log_group_arn)
