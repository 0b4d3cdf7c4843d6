"""CloudWatch: the operations dashboard, and the `warning` / `critical` SNS topics alarms notify.

The topics are encrypted with a customer-managed KMS key because CloudWatch alarms must be allowed
to use the key, and the key policy of the AWS managed `alias/aws/sns` key cannot be changed: an
alarm publishing to a topic encrypted with it fails silently.

The dashboard starts with the AWS service metrics (Lambda errors/throttles/duration, Step
Functions executions, API Gateway). The spec's alarms (§10.2: API latency 5 s / 30 s, error rate
5 % / 20 % over 5 minutes, 3 consecutive SSH failures, 80 % of the rate limit) on the wp_agent_*
EMF metrics go in `add_alarms` — see its docstring.
"""

from __future__ import annotations

from enum import StrEnum

from aws_cdk import Duration, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra import names
from wp_agent import telemetry

PERIOD = Duration.minutes(5)
ONE_MINUTE = Duration.minutes(1)
# Spec §10.2 thresholds.
LATENCY_WARNING_SECONDS = 5
LATENCY_CRITICAL_SECONDS = 30
ERROR_RATE_WARNING_PERCENT = 5
ERROR_RATE_CRITICAL_PERCENT = 20
SSH_FAILURE_CONSECUTIVE_MINUTES = 3
RATE_LIMIT_WARNING_PERCENT = 80
# Fleet runs: this many sites failed or taken back in five minutes is more than one bad change
FLEET_SITES_FAILED_WARNING = 3
RATE_LIMITS = ("model_calls", "commands_per_user")


class Severity(StrEnum):
    """Which topic an alarm notifies."""

    WARNING = "warning"
    CRITICAL = "critical"


class ObservabilityConstruct(Construct):
    """Alarm topics and the dashboard."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        functions: dict[names.FunctionName, lambda_.IFunction],
        state_machine: sfn.IStateMachine,
        rest_api: apigw.RestApi,
        tables: dict[str, dynamodb.ITable] | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.topic_key = kms.Key(
            self,
            "AlarmTopicsKey",
            description="wp-agent: encrypts the warning/critical alarm topics",
            enable_key_rotation=True,
        )
        self.topic_key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowCloudWatchAlarmsToPublish",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],  # in a key policy, "*" means this key
                conditions={"StringEquals": {"aws:SourceAccount": stack.account}},
            )
        )
        self.topics: dict[Severity, sns.Topic] = {
            severity: sns.Topic(
                self,
                f"{severity.value.capitalize()}Topic",
                display_name=f"wp-agent {severity.value}",
                master_key=self.topic_key,
                enforce_ssl=True,
            )
            for severity in Severity
        }

        self._functions = functions
        self._state_machine = state_machine
        self._rest_api = rest_api
        self._tables = tables or {}
        self.alarms: dict[str, cloudwatch.Alarm] = {}
        self.dashboard = cloudwatch.Dashboard(
            self,
            "Dashboard",
            dashboard_name=f"{stack.stack_name}-operations",
            default_interval=Duration.hours(24),
        )
        self._add_service_widgets()
        self._add_agent_widgets()
        self.add_alarms()

    @property
    def warning_topic(self) -> sns.Topic:
        return self.topics[Severity.WARNING]

    @property
    def critical_topic(self) -> sns.Topic:
        return self.topics[Severity.CRITICAL]

    def notify(self, alarm: cloudwatch.Alarm, severity: Severity) -> None:
        """Send `alarm`'s ALARM and OK transitions to the topic of `severity`."""
        action = cloudwatch_actions.SnsAction(self.topics[severity])
        alarm.add_alarm_action(action)
        alarm.add_ok_action(action)

    # -- metrics ------------------------------------------------------------------------------------

    @staticmethod
    def agent_metric(
        name: str,
        *,
        statistic: str = "Sum",
        period: Duration = PERIOD,
        label: str | None = None,
        dimensions: dict[str, str] | None = None,
    ) -> cloudwatch.Metric:
        """A wp_agent_* EMF metric as the handlers emit it (namespace WpAgent, dimension service)."""
        return cloudwatch.Metric(
            namespace=telemetry.NAMESPACE,
            metric_name=name,
            dimensions_map={"service": telemetry.SERVICE, **(dimensions or {})},
            statistic=statistic,
            period=period,
            label=label,
        )

    def error_rate(self) -> cloudwatch.MathExpression:
        """Percentage of runs that ended in a service fault, over 5 minutes (0 without runs)."""
        return cloudwatch.MathExpression(
            expression="IF(requests > 0, 100 * failed / requests, 0)",
            using_metrics={
                "requests": self.agent_metric(telemetry.REQUESTS_TOTAL),
                "failed": self.agent_metric(telemetry.FAILED_REQUESTS_TOTAL),
            },
            period=PERIOD,
            label="error rate (%)",
        )

    # -- alarms -------------------------------------------------------------------------------------

    def _alarm(
        self,
        key: str,
        severity: Severity,
        metric: cloudwatch.IMetric,
        *,
        threshold: float,
        description: str,
        evaluation_periods: int = 1,
        comparison: cloudwatch.ComparisonOperator = cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    ) -> cloudwatch.Alarm:
        alarm = cloudwatch.Alarm(
            self,
            f"{key}Alarm",
            metric=metric,
            threshold=threshold,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=evaluation_periods,
            comparison_operator=comparison,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=f"[{severity.value}] {description}",
        )
        self.notify(alarm, severity)
        self.alarms[key] = alarm
        return alarm

    def add_alarms(self) -> None:
        """Spec §10.2 alarms on the handlers' EMF metrics, plus workflow and Lambda failures."""
        latency = self.agent_metric(telemetry.REQUESTS_DURATION_SECONDS, statistic="p90")
        self._alarm(
            "LatencyWarning",
            Severity.WARNING,
            latency,
            threshold=LATENCY_WARNING_SECONDS,
            description="API response time p90 over 5 s (spec 10.2)",
        )
        self._alarm(
            "LatencyCritical",
            Severity.CRITICAL,
            latency,
            threshold=LATENCY_CRITICAL_SECONDS,
            description="API response time p90 over 30 s (spec 10.2)",
        )
        self._alarm(
            "ErrorRateWarning",
            Severity.WARNING,
            self.error_rate(),
            threshold=ERROR_RATE_WARNING_PERCENT,
            description="more than 5 % of runs failed in 5 minutes (spec 10.2)",
        )
        self._alarm(
            "ErrorRateCritical",
            Severity.CRITICAL,
            self.error_rate(),
            threshold=ERROR_RATE_CRITICAL_PERCENT,
            description="more than 20 % of runs failed in 5 minutes (spec 10.2)",
        )
        self._alarm(
            "SshConnectionFailures",
            Severity.CRITICAL,
            self.agent_metric(telemetry.SSH_CONNECTION_FAILURES_TOTAL, period=ONE_MINUTE),
            threshold=1,
            evaluation_periods=SSH_FAILURE_CONSECUTIVE_MINUTES,
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            description="SSH connections failed (after retries) 3 times in a row (spec 10.2)",
        )
        for limit in RATE_LIMITS:
            self._alarm(
                f"RateLimit{limit.title().replace('_', '')}",
                Severity.WARNING,
                self.agent_metric(
                    telemetry.RATE_LIMIT_UTILISATION_PERCENT,
                    statistic="Maximum",
                    period=ONE_MINUTE,
                    dimensions={"Limit": limit},
                ),
                threshold=RATE_LIMIT_WARNING_PERCENT,
                comparison=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                description=f"rate limit {limit} reached 80 % (spec 10.2)",
            )
        self._alarm(
            "FleetSitesFailed",
            Severity.WARNING,
            self.agent_metric(telemetry.FLEET_SITES_FAILED_TOTAL, period=PERIOD),
            threshold=FLEET_SITES_FAILED_WARNING,
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            description="fleet runs: 3 or more sites ended failed or taken back in 5 minutes",
        )
        self._alarm(
            "FleetSitesRolledBack",
            Severity.WARNING,
            self.agent_metric(telemetry.FLEET_SITES_ROLLED_BACK_TOTAL, period=PERIOD),
            threshold=1,
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            description="fleet runs: a change made a site worse and was taken back",
        )
        machine = self._state_machine
        self._alarm(
            "WorkflowFailed",
            Severity.WARNING,
            machine.metric_failed(period=PERIOD),
            threshold=1,
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            description="runs ended in the workflow's Fail state",
        )
        self._alarm(
            "WorkflowTimedOut",
            Severity.CRITICAL,
            machine.metric_timed_out(period=PERIOD),
            threshold=1,
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            description="a run's execution timed out",
        )
        for name, fn in self._functions.items():
            self._alarm(
                f"LambdaErrors{name.value.title().replace('_', '')}",
                Severity.CRITICAL
                if name
                in {names.FunctionName.API, names.FunctionName.TURN, names.FunctionName.PUBLISH_ARTICLE}
                else Severity.WARNING,
                fn.metric_errors(period=PERIOD),
                threshold=1,
                comparison=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                description=f"the {name.value} function raised errors",
            )

    def _add_agent_widgets(self) -> None:
        m = self.agent_metric
        duration = telemetry.REQUESTS_DURATION_SECONDS
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Requests (runs) and API calls to Claude",
                left=[
                    m(telemetry.REQUESTS_TOTAL, label="runs requested"),
                    m(telemetry.API_CALLS_TOTAL, label="model calls"),
                ],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="API response time (s)",
                left=[m(duration, statistic=stat, label=stat) for stat in ("p50", "p90", "p99")],
                left_annotations=[
                    cloudwatch.HorizontalAnnotation(value=LATENCY_WARNING_SECONDS, label="warning"),
                    cloudwatch.HorizontalAnnotation(value=LATENCY_CRITICAL_SECONDS, label="critical"),
                ],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="Errors by code",
                left=[
                    cloudwatch.MathExpression(
                        expression=f"SEARCH('{{{telemetry.NAMESPACE},service,ErrorCode}} MetricName=\"{telemetry.ERRORS_TOTAL}\"', 'Sum', 300)",
                        label="",
                        period=PERIOD,
                    )
                ],
                right=[self.error_rate()],
                width=8,
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Commands executed / blocked",
                left=[
                    m(telemetry.COMMANDS_EXECUTED_TOTAL, label="executed"),
                    m(telemetry.COMMANDS_BLOCKED_TOTAL, label="blocked"),
                ],
                width=6,
            ),
            cloudwatch.GraphWidget(
                title="Approvals requested / resolved",
                left=[
                    m(telemetry.APPROVALS_REQUESTED_TOTAL, label="requested"),
                    m(telemetry.APPROVALS_RESOLVED_TOTAL, label="resolved"),
                ],
                width=6,
            ),
            cloudwatch.GraphWidget(
                title="Fleet sites failed / taken back",
                left=[
                    m(telemetry.FLEET_SITES_FAILED_TOTAL, label="failed"),
                    m(telemetry.FLEET_SITES_ROLLED_BACK_TOTAL, label="taken back"),
                ],
                width=6,
            ),
            cloudwatch.GraphWidget(
                title="SSH connection failures",
                left=[m(telemetry.SSH_CONNECTION_FAILURES_TOTAL, period=ONE_MINUTE, label="failures")],
                width=6,
            ),
            cloudwatch.GraphWidget(
                title="Rate-limit utilisation (%)",
                left=[
                    m(
                        telemetry.RATE_LIMIT_UTILISATION_PERCENT,
                        statistic="Maximum",
                        period=ONE_MINUTE,
                        dimensions={"Limit": limit},
                        label=limit,
                    )
                    for limit in RATE_LIMITS
                ],
                left_annotations=[
                    cloudwatch.HorizontalAnnotation(value=RATE_LIMIT_WARNING_PERCENT, label="warning")
                ],
                width=6,
            ),
        )
        if self._tables:
            self.dashboard.add_widgets(
                cloudwatch.GraphWidget(
                    title="DynamoDB throttled requests",
                    left=[
                        cloudwatch.Metric(
                            namespace="AWS/DynamoDB",
                            metric_name="ThrottledRequests",
                            dimensions_map={"TableName": table.table_name},
                            statistic="Sum",
                            period=PERIOD,
                            label=name,
                        )
                        for name, table in self._tables.items()
                    ],
                    width=12,
                ),
                cloudwatch.GraphWidget(
                    title="Turn duration (s)",
                    left=[
                        m(telemetry.TURN_DURATION_SECONDS, statistic=stat, label=stat)
                        for stat in ("p50", "p90", "p99")
                    ],
                    width=12,
                ),
            )

    def _add_service_widgets(self) -> None:
        functions = list(self._functions.items())
        self.dashboard.add_widgets(
            cloudwatch.TextWidget(
                markdown="# wp-agent\nLambda, Step Functions and API Gateway service metrics.",
                width=24,
                height=2,
            )
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Lambda errors",
                left=[fn.metric_errors(period=PERIOD, label=name.value) for name, fn in functions],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="Lambda throttles",
                left=[fn.metric_throttles(period=PERIOD, label=name.value) for name, fn in functions],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="Lambda duration p99 (ms)",
                left=[
                    fn.metric_duration(period=PERIOD, statistic="p99", label=name.value)
                    for name, fn in functions
                ],
                width=8,
            ),
        )
        machine = self._state_machine
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Runs (Step Functions executions)",
                left=[
                    machine.metric_started(period=PERIOD, label="started"),
                    machine.metric_succeeded(period=PERIOD, label="succeeded"),
                    machine.metric_failed(period=PERIOD, label="failed"),
                    machine.metric_timed_out(period=PERIOD, label="timed out"),
                    machine.metric_aborted(period=PERIOD, label="aborted (cancelled)"),
                ],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="API requests and errors",
                left=[
                    self._rest_api.metric_count(period=PERIOD, label="requests"),
                    self._rest_api.metric_client_error(period=PERIOD, label="4XX"),
                    self._rest_api.metric_server_error(period=PERIOD, label="5XX"),
                ],
                right=[self._rest_api.metric_latency(period=PERIOD, statistic="p99", label="latency p99")],
                width=12,
            ),
        )
