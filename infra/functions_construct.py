"""The five Lambda functions, their two layers, and each function's least-privilege role.

Every function: Python 3.12 on arm64, code = functions/<name>/, handler `handler.lambda_handler`,
layers core + dependencies, X-Ray active, its own log group and its own role. Roles get no AWS
managed policy (AWSLambdaBasicExecutionRole allows logs on `*`); log writing is granted on the
function's own log group only. The IAM table in the README lists every statement.

SnapStart (ON_PUBLISHED_VERSIONS), decided per function:
- api: ON. A person's request waits on it behind API Gateway's 29 s limit, the backend calls it
  in bursts after idle periods, and its init is import-heavy (Powertools resolver, pydantic models,
  OpenAPI schema, boto3 clients), so cold starts are both frequent and visible. API Gateway invokes
  the `live` alias, never $LATEST. Cost at 512 MB: ~$1.95/month cache per live version plus
  ~$0.00007 per restore; old versions are deleted on deploy (a retained SnapStart version keeps
  paying for its cache). The handler registers snapshot_restore_py hooks (after restore: fresh SDK
  clients, reseeded `random`).
- turn: OFF. It runs under Step Functions, not in front of a waiting HTTP client, and a turn lasts
  seconds to minutes (model call + SSH), so a ~1-2 s cold start is a few percent of it. What is
  expensive in a turn (SSH connect, host-key check, the model call) happens per invocation and
  cannot be snapshotted; what can (imports) is cheap relative to the turn. SnapStart would cost
  ~$3.90/month per version at 1 GB and put the SSH pool, the HTTP client pool and random state
  under restore hooks whose bugs are security bugs, for no user-visible gain.
- approval, workflow_tasks: OFF. Small, asynchronous, latency does not matter.
- publish_article: OFF. Asynchronous under Step Functions like the turn; its cost is SSH and WP-CLI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from aws_cdk import ArnFormat, Duration, RemovalPolicy, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra import names
from infra.nag import acknowledge, acknowledge_wildcard_resource
from infra.packaging import FUNCTIONS_DIR, LayerDirs
from infra.secrets_construct import SecretsConstruct
from infra.settings import StackSettings
from infra.storage_construct import TABLE_READ_WRITE, StorageConstruct

RUNTIME = lambda_.Runtime.PYTHON_3_12
ARCHITECTURE = lambda_.Architecture.ARM_64
# Spec §10.1: error logs are kept 180 days (Lambda logs carry the errors).
FUNCTION_LOG_RETENTION = logs.RetentionDays.SIX_MONTHS


@dataclass(frozen=True)
class FunctionSpec:
    """Sizing of one function."""

    description: str
    memory_mb: int
    timeout: Duration
    snap_start: bool = False


SPECS: dict[names.FunctionName, FunctionSpec] = {
    names.FunctionName.API: FunctionSpec(
        description="wp-agent REST API (behind API Gateway, IAM auth)",
        memory_mb=512,
        # API Gateway's integration timeout is 29 s; running longer would only burn money.
        timeout=Duration.seconds(29),
        snap_start=True,
    ),
    names.FunctionName.TURN: FunctionSpec(
        description="wp-agent: one agent turn (model call + WP-CLI over SSH)",
        memory_mb=1024,
        # Lambda's maximum. A turn is one model call (up to 120 s per attempt, 3 retries with
        # backoff honouring retry-after: ~8 min worst case) plus the WP-CLI commands it asked for
        # (60 s each, at most 5 concurrent per host, SSH connect 30 s x 3 tries). The worst cases do
        # not fit a smaller limit; a timed-out turn is retried once by Step Functions (turns are
        # idempotent: intent is recorded before a command runs).
        timeout=Duration.seconds(900),
    ),
    names.FunctionName.APPROVAL: FunctionSpec(
        description="wp-agent: store the approval task token and announce the pending approval",
        memory_mb=256,
        timeout=Duration.seconds(30),
    ),
    names.FunctionName.WORKFLOW_TASKS: FunctionSpec(
        description="wp-agent: small workflow tasks (scheduled-run start, failure, approval expiry)",
        memory_mb=256,
        timeout=Duration.seconds(60),
    ),
    names.FunctionName.PUBLISH_ARTICLE: FunctionSpec(
        description="wp-agent: one publishArticle job (a fixed WP-CLI sequence over SSH, no model)",
        memory_mb=1024,
        # The same bound as a turn's commands: a featured-image import and up to a dozen WP-CLI
        # steps (60 s each, SSH connect 30 s x 3 tries) plus their clean-up on failure.
        timeout=Duration.seconds(900),
    ),
}

_XRAY_REASON = (
    "X-Ray active tracing: xray:PutTraceSegments/PutTelemetryRecords support no resource-level "
    "permissions, so Resource is '*' (added by CDK for Tracing.ACTIVE)."
)


class FunctionsConstruct(Construct):
    """Layers, functions and roles; `connect_workflow` adds what needs the state machine."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        layers: LayerDirs,
        storage: StorageConstruct,
        secrets: SecretsConstruct,
        bus: events.IEventBus,
        settings: StackSettings,
    ) -> None:
        super().__init__(scope, construct_id)
        self._storage = storage
        self._settings = settings
        self.layers = [
            lambda_.LayerVersion(
                self,
                "CoreLayer",
                code=lambda_.Code.from_asset(str(layers.core)),
                compatible_runtimes=[RUNTIME],
                compatible_architectures=[ARCHITECTURE],
                description="wp_agent core package",
            ),
            lambda_.LayerVersion(
                self,
                "DependenciesLayer",
                code=lambda_.Code.from_asset(str(layers.dependencies)),
                compatible_runtimes=[RUNTIME],
                compatible_architectures=[ARCHITECTURE],
                description="wp-agent third-party dependencies (layers/dependencies/requirements.txt)",
            ),
        ]
        self.functions: dict[names.FunctionName, lambda_.Function] = {
            name: self._function(name, spec) for name, spec in SPECS.items()
        }
        # SnapStart only applies to published versions: API Gateway invokes this alias.
        self.api_alias = lambda_.Alias(
            self, "ApiLiveAlias", alias_name=names.API_ALIAS_NAME, version=self.api.current_version
        )
        acknowledge(
            self.api,
            "Annotation::@aws-cdk/aws-lambda:snapStartRequirePublish",
            "Every deploy publishes a version (current_version) and API Gateway invokes it through "
            "the live alias, never $LATEST.",
        )

        self._set_table_environment()
        self._grant_tables()
        for function in self.functions.values():
            function.add_environment(names.Env.EVENT_BUS, bus.event_bus_name)
            bus.grant_put_events_to(function)

        secret_arn = secrets.anthropic_api_key.secret_arn
        self.turn.add_environment(names.Env.ANTHROPIC_SECRET_ARN, secret_arn)
        self.turn.add_environment(names.Env.TARGET_SECRET_PREFIX, names.TARGET_SECRET_PREFIX)
        self.turn.add_environment(names.Env.WP_CLI_MODE, names.WP_CLI_MODE)
        self.turn.add_environment(names.Env.WP_CLI_TIMEOUT, str(names.WP_CLI_TIMEOUT_MS))
        self.turn.add_environment(names.Env.AGENT_MAX_ITERATIONS, str(names.AGENT_MAX_ITERATIONS))
        # The turn writes the approval's expiry; it must match the workflow's wait (one setting).
        self.turn.add_environment(names.Env.APPROVAL_TIMEOUT_SECONDS, str(settings.approval_timeout_seconds))
        self.turn.add_to_role_policy(
            iam.PolicyStatement(
                sid="ReadAnthropicKeyAndTargetSshSecrets",
                actions=["secretsmanager:GetSecretValue"],
                resources=[secret_arn, secrets.target_secrets_arn_pattern],
            )
        )
        # publishArticle reaches the target over SSH like a turn, but never calls the model.
        publisher = self.publish_article
        publisher.add_environment(names.Env.TARGET_SECRET_PREFIX, names.TARGET_SECRET_PREFIX)
        publisher.add_environment(names.Env.WP_CLI_MODE, names.WP_CLI_MODE)
        publisher.add_environment(names.Env.WP_CLI_TIMEOUT, str(names.WP_CLI_TIMEOUT_MS))
        publisher.add_to_role_policy(
            iam.PolicyStatement(
                sid="ReadTargetSshSecrets",
                actions=["secretsmanager:GetSecretValue"],
                resources=[secrets.target_secrets_arn_pattern],
            )
        )
        for function in (self.turn, publisher):
            acknowledge_wildcard_resource(
                self._role(function),
                secrets.target_secrets_arn_pattern,
                "Per-target SSH secrets are created by operators at run time under the name prefix "
                f"{names.TARGET_SECRET_PREFIX}<targetId>; the prefix is the narrowest possible scope.",
            )

        # The target lifecycle: key and host-key rotation, the secret's deletion on DELETE, and the
        # checks (the doctor over the API) read the target's key like a turn does.
        self.api.add_environment(names.Env.TARGET_SECRET_PREFIX, names.TARGET_SECRET_PREFIX)
        self.api.add_to_role_policy(
            iam.PolicyStatement(
                sid="ManageTargetSshSecrets",
                actions=[
                    "secretsmanager:GetSecretValue",
                    "secretsmanager:PutSecretValue",
                    "secretsmanager:DescribeSecret",
                    "secretsmanager:DeleteSecret",
                ],
                resources=[secrets.target_secrets_arn_pattern],
            )
        )
        acknowledge_wildcard_resource(
            self._role(self.api),
            secrets.target_secrets_arn_pattern,
            "Per-target SSH secrets live under the name prefix "
            f"{names.TARGET_SECRET_PREFIX}<targetId>; the api rotates and retires them (PATCH/DELETE "
            "/v1/targets/{targetId}) and reads them for the checks.",
        )
        self.api.add_environment(names.Env.ADMIN_PRINCIPALS, ",".join(settings.admin_principals))
        self.api.add_environment(names.Env.SCHEDULE_GROUP, names.SCHEDULE_GROUP_NAME)
        # Schedule proposals ask the model to turn Japanese into a schedule: the api needs the key
        # too, and its ARN (not in the original contract's env list; the model client reads it).
        self.api.add_environment(names.Env.ANTHROPIC_SECRET_ARN, secret_arn)
        self.api.add_to_role_policy(
            iam.PolicyStatement(
                sid="ReadAnthropicKey", actions=["secretsmanager:GetSecretValue"], resources=[secret_arn]
            )
        )

    # --- accessors ---------------------------------------------------------------------------------
    @property
    def api(self) -> lambda_.Function:
        return self.functions[names.FunctionName.API]

    @property
    def turn(self) -> lambda_.Function:
        return self.functions[names.FunctionName.TURN]

    @property
    def approval(self) -> lambda_.Function:
        return self.functions[names.FunctionName.APPROVAL]

    @property
    def workflow_tasks(self) -> lambda_.Function:
        return self.functions[names.FunctionName.WORKFLOW_TASKS]

    @property
    def publish_article(self) -> lambda_.Function:
        return self.functions[names.FunctionName.PUBLISH_ARTICLE]

    # --- wiring that needs the state machine ------------------------------------------------------
    def connect_workflow(
        self,
        *,
        state_machine: sfn.StateMachine,
        schedule_group: scheduler.IScheduleGroup,
        scheduler_role: iam.IRole,
    ) -> None:
        """Let the api start/stop/answer runs and manage schedules; let approval answer its task."""
        api = self.api
        api.add_environment(names.Env.STATE_MACHINE_ARN, state_machine.state_machine_arn)
        api.add_environment(names.Env.SCHEDULER_ROLE_ARN, scheduler_role.role_arn)
        state_machine.grant_start_execution(api)
        executions = Stack.of(self).format_arn(
            service="states",
            resource="execution",
            resource_name=f"{state_machine.state_machine_name}:*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        api.add_to_role_policy(
            iam.PolicyStatement(
                sid="StopAndDescribeRuns",
                actions=["states:StopExecution", "states:DescribeExecution"],
                resources=[executions],
            )
        )
        api.add_to_role_policy(_task_response_statement(state_machine))

        group_schedules = Stack.of(self).format_arn(
            service="scheduler",
            resource="schedule",
            resource_name=f"{schedule_group.schedule_group_name}/*",
        )
        schedules_policy = iam.Policy(
            self,
            "ApiSchedulesPolicy",
            roles=[self._role(api)],
            statements=[
                iam.PolicyStatement(
                    sid="ManageRunSchedules",
                    actions=[
                        "scheduler:CreateSchedule",
                        "scheduler:GetSchedule",
                        "scheduler:UpdateSchedule",
                        "scheduler:DeleteSchedule",
                    ],
                    resources=[group_schedules],
                ),
                iam.PolicyStatement(
                    sid="ListRunSchedules", actions=["scheduler:ListSchedules"], resources=["*"]
                ),
                iam.PolicyStatement(
                    sid="PassSchedulerRole",
                    actions=["iam:PassRole"],
                    resources=[scheduler_role.role_arn],
                    conditions={"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}},
                ),
            ],
        )
        acknowledge_wildcard_resource(
            schedules_policy,
            group_schedules,
            "Schedules are created at run time inside the wp-agent schedule group; the group is the "
            "narrowest scope Scheduler offers.",
        )
        acknowledge(
            schedules_policy,
            "AwsSolutions-IAM5[Resource::*]",
            "scheduler:ListSchedules supports no resource-level permissions; the handler passes "
            f"GroupName={names.SCHEDULE_GROUP_NAME}.",
        )
        acknowledge_wildcard_resource(
            self._role(api),
            executions,
            "Stop/DescribeExecution on this state machine's executions only; execution names are "
            "generated per run.",
        )

        # A separate policy, not the role's default policy: the function resource depends on its
        # default policy, and the state machine depends on the function, so granting there would
        # be a dependency cycle.
        iam.Policy(
            self,
            "ApprovalTaskResponsePolicy",
            roles=[self._role(self.approval)],
            statements=[_task_response_statement(state_machine)],
        )

    # --- internals ---------------------------------------------------------------------------------
    def _function(self, name: names.FunctionName, spec: FunctionSpec) -> lambda_.Function:
        construct_id = _pascal(name.value)
        role = iam.Role(
            self,
            f"{construct_id}Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"wp-agent {name.value} function",
        )
        log_group = logs.LogGroup(
            self,
            f"{construct_id}Logs",
            retention=FUNCTION_LOG_RETENTION,
            removal_policy=RemovalPolicy.DESTROY,
        )
        log_group.grant_write(role)
        function = lambda_.Function(
            self,
            construct_id,
            description=spec.description,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=names.HANDLER,
            code=lambda_.Code.from_asset(
                str(FUNCTIONS_DIR / name.value), exclude=["__pycache__", "*.pyc", "tests"]
            ),
            layers=self.layers,
            memory_size=spec.memory_mb,
            timeout=spec.timeout,
            tracing=lambda_.Tracing.ACTIVE,
            role=role,
            log_group=log_group,
            snap_start=lambda_.SnapStartConf.ON_PUBLISHED_VERSIONS if spec.snap_start else None,
            current_version_options=lambda_.VersionOptions(removal_policy=RemovalPolicy.DESTROY),
            environment={
                names.Env.SERVICE_NAME: names.SERVICE_NAME,
                names.Env.METRICS_NAMESPACE: names.METRICS_NAMESPACE,
                names.Env.LOG_LEVEL: self._settings.log_level,
                # Responses carry command output; keep them out of trace metadata.
                names.Env.TRACER_CAPTURE_RESPONSE: "false",
            },
        )
        cast(lambda_.CfnFunction, function.node.default_child).add_metadata(
            names.FUNCTION_METADATA_KEY, name.value
        )
        acknowledge(role, "AwsSolutions-IAM5[Resource::*]", _XRAY_REASON)
        acknowledge(
            function,
            "AwsSolutions-L1",
            "Python 3.12 on purpose: the dependency layer's wheels are built for cp312, the code is "
            "tested on it, and SnapStart supports it. Moving to a newer runtime is a deliberate "
            "change of RUNTIME and infra.packaging.LAMBDA_PLATFORM together.",
        )
        return function

    def _set_table_environment(self) -> None:
        tables = self._storage.tables
        visible: dict[names.FunctionName, tuple[names.Table, ...]] = {
            names.FunctionName.API: tuple(names.Table),
            names.FunctionName.TURN: (
                names.Table.SESSIONS,
                names.Table.AUDIT,
                names.Table.REGISTRY,
                names.Table.RATE_LIMITS,
            ),
            names.FunctionName.APPROVAL: (names.Table.SESSIONS, names.Table.AUDIT),
            names.FunctionName.WORKFLOW_TASKS: (
                names.Table.SESSIONS,
                names.Table.AUDIT,
                names.Table.REGISTRY,
                names.Table.RATE_LIMITS,
            ),
            # article jobs live in the sessions table (pk ARTICLE#<id>)
            names.FunctionName.PUBLISH_ARTICLE: (
                names.Table.SESSIONS,
                names.Table.AUDIT,
                names.Table.REGISTRY,
            ),
        }
        for function_name, table_names in visible.items():
            for table in table_names:
                self.functions[function_name].add_environment(
                    names.TABLE_ENV[table], tables[table].table_name
                )

    def _grant_tables(self) -> None:
        storage = self._storage
        api, turn, approval, workflow_tasks = self.api, self.turn, self.approval, self.workflow_tasks
        for function in (api, turn, approval, workflow_tasks, self.publish_article):
            # The table itself (grantReadWriteData would add every index too): only the api lists sessions.
            function.add_to_role_policy(
                iam.PolicyStatement(
                    sid="ReadWriteSessions",
                    actions=list(TABLE_READ_WRITE),
                    resources=[storage.sessions.table_arn],
                )
            )
            # The audit trail is append-only: PutItem, never UpdateItem/DeleteItem.
            function.add_to_role_policy(
                iam.PolicyStatement(
                    sid="AppendAudit", actions=["dynamodb:PutItem"], resources=[storage.audit.table_arn]
                )
            )
        api.add_to_role_policy(
            iam.PolicyStatement(
                sid="ListSessions",
                actions=["dynamodb:Query"],
                resources=[
                    f"{storage.sessions.table_arn}/index/{index.name}"
                    for index in names.TABLE_LAYOUT[names.Table.SESSIONS].indexes
                ],
            )
        )
        api.add_to_role_policy(
            iam.PolicyStatement(
                sid="QueryAudit",
                actions=["dynamodb:Query"],
                resources=[
                    storage.audit.table_arn,
                    f"{storage.audit.table_arn}/index/{names.AUDIT_BY_USER_INDEX}",
                    f"{storage.audit.table_arn}/index/{names.AUDIT_BY_TARGET_INDEX}",
                ],
            )
        )
        storage.registry.grant_read_write_data(api)
        storage.idempotency.grant_read_write_data(api)
        for function in (turn, workflow_tasks, self.publish_article):
            storage.registry.grant_read_data(function)
        storage.rate_limits.grant_read_write_data(turn)

    @staticmethod
    def _role(function: lambda_.Function) -> iam.IRole:
        if function.role is None:  # pragma: no cover - every function here gets a role
            raise RuntimeError(f"{function.node.path} has no role")
        return function.role


def _task_response_statement(state_machine: sfn.IStateMachine) -> iam.PolicyStatement:
    # The IAM reference lists no resource type for SendTask*, yet Step Functions authorises them
    # against the ARN of the state machine that issued the token (AccessDenied messages name it,
    # and aws-cdk's grantTaskResponse relies on it), so the grant stays scoped to this machine.
    return iam.PolicyStatement(
        sid="AnswerApprovalTask",
        actions=["states:SendTaskSuccess", "states:SendTaskFailure"],
        resources=[state_machine.state_machine_arn],
    )


def _pascal(snake: str) -> str:
    return "".join(part.capitalize() for part in snake.split("_"))
