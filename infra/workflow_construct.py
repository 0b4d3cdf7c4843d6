"""The run workflow: a Standard state machine that runs one agent turn per Lambda invocation and
waits for a person's approval with `.waitForTaskToken`. Payloads carry ids only.

    HasSession        sessionId present -> AgentTurn
                      otherwise (a scheduled run) -> PrepareScheduledRun -> AgentTurn
    AgentTurn         -> Route                                   (error -> RecordFailure)
    Route             CONTINUE -> AgentTurn
                      AWAITING_APPROVAL -> WaitForApproval -> AgentTurn
                          (States.Timeout -> ExpireApproval -> RunFailed, its error -> RecordFailure;
                           any other error -> RecordFailure)
                      COMPLETED -> RunSucceeded
                      FAILED -> RunFailed (the turn has recorded the failure)
                      missing or unknown -> UnknownRoute -> RecordFailure
    RecordFailure     -> RunFailed

A fleet run (`fleetRunId`, with its canary's planning session) takes the fleet branch (`fleet_branch`):
its planning turns, the plan's one approval wait, then two Distributed Maps over the sites (standard
child executions: a site may wait for its own approval) — the canary, then, when it ended healthy, the
rest with the request's concurrency and tolerated failure count.

Two states beyond the contract keep every path well-formed in JSONPath, where a missing path is a
States.Runtime error that no Catch can handle:
- UnknownRoute (Pass) puts an `error` object on the turn's output so RecordFailure's `$.error` exists.
- RecordScheduledRunFailure handles a failed PrepareScheduledRun, when no session or run exists
  yet: it passes the whole input (`input.$: $`) instead of `$.sessionId`/`$.runId`.
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Aws, Duration, Fn, RemovalPolicy, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from infra import names
from infra.nag import acknowledge, acknowledge_wildcard_resource

# Spec §10.1: execution logs are kept 90 days.
WORKFLOW_LOG_RETENTION = logs.RetentionDays.THREE_MONTHS
LAMBDA_SERVICE_ERRORS = (
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
)
TURN_TIMEOUT_ERRORS = ("Sandbox.Timedout", "States.Timeout")
# A publish attempt that died (timeout, crash) is resumed this many times before the job is failed.
PUBLISH_ARTICLE_RETRIES = 2
# A backstop a little above the turn function's own 900 s limit, so a lost invocation cannot hang
# the run; normally the function times out first (Sandbox.Timedout).
AGENT_TURN_TASK_TIMEOUT = Duration.seconds(960)
# The approval wait stays open past the approval's deadline for longer than an API request can last
# (its function's 29 s timeout): a decision accepted just before the deadline is still handed over,
# so a closed wait never means one timed out under a decision on its way (approval_protocol).
APPROVAL_HAND_OVER_GRACE = Duration.seconds(60)


class WorkflowConstruct(Construct):
    """The state machine, its log group and its role."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        turn: lambda_.IFunction,
        approval: lambda_.IFunction,
        workflow_tasks: lambda_.IFunction,
        publish_article: lambda_.IFunction,
        approval_timeout: Duration,
    ) -> None:
        super().__init__(scope, construct_id)
        self.log_group = logs.LogGroup(
            self,
            "Logs",
            # The /aws/vendedlogs/ prefix keeps CloudWatch Logs' resource policy from growing per group.
            log_group_name=f"/aws/vendedlogs/states/{Stack.of(self).stack_name}-run-workflow",
            retention=WORKFLOW_LOG_RETENTION,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            comment="wp-agent run: agent turns, approval waits, failure recording",
            definition_body=sfn.DefinitionBody.from_chainable(
                build_definition(
                    self,
                    turn=turn,
                    approval=approval,
                    workflow_tasks=workflow_tasks,
                    publish_article=publish_article,
                    approval_timeout=approval_timeout,
                )
            ),
            state_machine_type=sfn.StateMachineType.STANDARD,
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=self.log_group,
                level=sfn.LogLevel.ALL,
                # Every state transition is logged, without inputs/outputs: those would put the
                # approval task token and exception messages into the logs. The handlers log the
                # ids and routes themselves.
                include_execution_data=False,
            ),
        )
        role = self.state_machine.role
        acknowledge(
            role,
            "AwsSolutions-IAM5[Resource::*]",
            "Added by CDK for logging to CloudWatch Logs (logs:*LogDelivery*, DescribeLogGroups, "
            "DescribeResourcePolicies, PutResourcePolicy) and X-Ray tracing: these actions support "
            "no resource-level permissions.",
        )
        # The fleet branch's Distributed Map starts, describes and stops child executions of this state machine.
        name = Fn.select(6, Fn.split(":", self.state_machine.state_machine_arn))
        executions = f"arn:{Aws.PARTITION}:states:{Aws.REGION}:{Aws.ACCOUNT_ID}:execution:{name}"
        for resource in (f"{executions}:*", f"{executions}/FleetSites:*"):
            acknowledge_wildcard_resource(
                self.state_machine,  # (its DistributedMapPolicy)
                resource,
                "Added by CDK for the fleet run's Distributed Map: its child executions (one per site) are "
                "named by Step Functions, so only their state machine and map label can be fixed.",
            )
        for function in (turn, approval, workflow_tasks, publish_article):
            acknowledge_wildcard_resource(
                role,
                f"{function.function_arn}:*",
                "lambda:InvokeFunction on the function's versions/aliases (CDK grants ARN and ARN:*); "
                "limited to the workflow's own functions.",
            )


def build_definition(
    scope: Construct,
    *,
    turn: lambda_.IFunction,
    approval: lambda_.IFunction,
    workflow_tasks: lambda_.IFunction,
    publish_article: lambda_.IFunction,
    approval_timeout: Duration,
) -> sfn.IChainable:
    """The state graph (state names from names.State; see the module docstring)."""
    state = names.State
    run_succeeded = sfn.Succeed(scope, state.RUN_SUCCEEDED, comment="The turn finished with an answer")
    run_failed = sfn.Fail(
        scope,
        state.RUN_FAILED,
        error="WpAgent.RunFailed",
        cause="The run failed; the session record and the Run Failed event say why.",
    )

    record_failure = _invoke(
        scope,
        state.RECORD_FAILURE,
        workflow_tasks,
        {
            "action": names.WorkflowAction.RECORD_FAILURE.value,
            "sessionId": sfn.JsonPath.string_at("$.sessionId"),
            "runId": sfn.JsonPath.string_at("$.runId"),
            "error": sfn.JsonPath.object_at("$.error"),
        },
    )
    # Recording the failure is idempotent; a throttled or unreadable session is tried again for about
    # two minutes. Should it still fail, the API ends the run when the session is next used.
    _retry_recording(record_failure)
    record_failure.next(run_failed)

    record_scheduled_run_failure = _invoke(
        scope,
        state.RECORD_SCHEDULED_RUN_FAILURE,
        workflow_tasks,
        {
            "action": names.WorkflowAction.RECORD_FAILURE.value,
            "error": sfn.JsonPath.object_at("$.error"),
            "input": sfn.JsonPath.entire_payload,
        },
    ).next(run_failed)

    expire_approval = _invoke(
        scope,
        state.EXPIRE_APPROVAL,
        workflow_tasks,
        {
            "action": names.WorkflowAction.EXPIRE_APPROVAL.value,
            "sessionId": sfn.JsonPath.string_at("$.sessionId"),
            "runId": sfn.JsonPath.string_at("$.runId"),
        },
    )
    # If even the expiry cannot be stored, the run still ends recorded as failed, not silently.
    expire_approval.add_catch(record_failure, errors=[sfn.Errors.ALL], result_path="$.error")
    expire_approval.next(run_failed)

    agent_turn = _invoke(
        scope,
        state.AGENT_TURN,
        turn,
        {
            "sessionId": sfn.JsonPath.string_at("$.sessionId"),
            "runId": sfn.JsonPath.string_at("$.runId"),
        },
        task_timeout=AGENT_TURN_TASK_TIMEOUT,
    )
    # A timed-out turn is retried once: turns are idempotent (intent recorded before each command).
    agent_turn.add_retry(errors=list(TURN_TIMEOUT_ERRORS), max_attempts=1, interval=Duration.seconds(2))
    agent_turn.add_catch(record_failure, errors=[sfn.Errors.ALL], result_path="$.error")

    wait_for_approval = _approval_wait(
        scope,
        state.WAIT_FOR_APPROVAL,
        approval,
        {
            "sessionId": sfn.JsonPath.string_at("$.sessionId"),
            "runId": sfn.JsonPath.string_at("$.runId"),
            "approvalId": sfn.JsonPath.string_at("$.approvalId"),
            "taskToken": sfn.JsonPath.task_token,
        },
        approval_timeout,
    )
    wait_for_approval.add_catch(expire_approval, errors=[sfn.Errors.TIMEOUT], result_path="$.error")
    wait_for_approval.add_catch(record_failure, errors=[sfn.Errors.ALL], result_path="$.error")
    wait_for_approval.next(agent_turn)

    unknown_route = sfn.Pass(
        scope,
        state.UNKNOWN_ROUTE,
        comment="The turn returned no route or one this workflow does not know",
        result=sfn.Result.from_object(
            {"Error": "WpAgent.UnknownRoute", "Cause": "The turn returned an unknown route."}
        ),
        result_path="$.error",
    ).next(record_failure)

    route = (
        sfn.Choice(scope, state.ROUTE)
        .when(sfn.Condition.not_(sfn.Condition.is_present("$.route")), unknown_route)
        .when(sfn.Condition.string_equals("$.route", names.Route.CONTINUE.value), agent_turn)
        .when(sfn.Condition.string_equals("$.route", names.Route.AWAITING_APPROVAL.value), wait_for_approval)
        .when(sfn.Condition.string_equals("$.route", names.Route.COMPLETED.value), run_succeeded)
        .when(sfn.Condition.string_equals("$.route", names.Route.FAILED.value), run_failed)
        .otherwise(unknown_route)
    )
    agent_turn.next(route)

    prepare_scheduled_run = _invoke(
        scope,
        state.PREPARE_SCHEDULED_RUN,
        workflow_tasks,
        {
            "action": names.WorkflowAction.START_SCHEDULED_RUN.value,
            "input": sfn.JsonPath.entire_payload,
        },
    )
    prepare_scheduled_run.add_catch(
        record_scheduled_run_failure, errors=[sfn.Errors.ALL], result_path="$.error"
    )
    prepare_scheduled_run.next(agent_turn)

    # publishArticle (no model): one deterministic task on its own function, which holds the SSH
    # access (not the model key). Both tasks get the execution's name: only the execution the job
    # names may run it. A failed attempt is retried: the publish resumes (the post is found by its
    # marker, the outcome announced once it is stored), so a retry never publishes twice.
    record_article_failure = _invoke(
        scope,
        state.RECORD_ARTICLE_FAILURE,
        workflow_tasks,
        {
            "action": names.WorkflowAction.RECORD_ARTICLE_FAILURE.value,
            "articleId": sfn.JsonPath.string_at("$.articleId"),
            "execution": sfn.JsonPath.execution_name,
            "error": sfn.JsonPath.object_at("$.error"),
        },
    ).next(run_failed)
    publish = _invoke(
        scope,
        state.PUBLISH_ARTICLE,
        publish_article,
        {"articleId": sfn.JsonPath.string_at("$.articleId"), "execution": sfn.JsonPath.execution_name},
        task_timeout=AGENT_TURN_TASK_TIMEOUT,
    )
    publish.add_retry(
        errors=[sfn.Errors.ALL],
        interval=Duration.seconds(2),
        max_attempts=PUBLISH_ARTICLE_RETRIES,
        backoff_rate=2,
    )
    publish.add_catch(record_article_failure, errors=[sfn.Errors.ALL], result_path="$.error")
    publish.next(
        sfn.Choice(scope, state.ARTICLE_ROUTE)
        .when(sfn.Condition.boolean_equals("$.success", True), run_succeeded)
        .otherwise(run_failed)
    )

    fleet = fleet_branch(
        scope, turn=turn, approval=approval, workflow_tasks=workflow_tasks, approval_timeout=approval_timeout
    )
    return (
        sfn.Choice(scope, state.HAS_SESSION)
        .when(sfn.Condition.is_present("$.fleetRunId"), fleet)
        .when(sfn.Condition.is_present("$.sessionId"), agent_turn)
        .when(sfn.Condition.is_present("$.articleId"), publish)
        .otherwise(prepare_scheduled_run)
    )


def fleet_branch(
    scope: Construct,
    *,
    turn: lambda_.IFunction,
    approval: lambda_.IFunction,
    workflow_tasks: lambda_.IFunction,
    approval_timeout: Duration,
) -> sfn.IChainable:
    """A fleet run (service/fleets.py does each task):

    FleetBegin → FleetPlanTurn ⟲ (the canary's planning run; an error → FleetPlanFailure) → FleetPlanned
    → awaiting approval: FleetWaitForApproval (token) → FleetDecided → approved: FleetSites (the canary's
      batch: one at a time, none tolerated) → FleetMap (a child execution per site) → FleetBatchDone →
      the canary ended healthy: the rest's batch (the request's concurrency and tolerated failures)
      → FleetMap → FleetBatchDone → FleetFinished
    anything that ends it early (no plan, declined, expired) → FleetFinished
    """
    state = names.State
    action = names.FleetAction
    fleet_id = sfn.JsonPath.string_at("$.fleetRunId")
    ids = {"sessionId": sfn.JsonPath.string_at("$.sessionId"), "runId": sfn.JsonPath.string_at("$.runId")}
    finished = _invoke(
        scope, state.FLEET_FINISHED, workflow_tasks,
        {"fleetAction": action.FINISHED.value, "fleetRunId": fleet_id,
         "decision": sfn.JsonPath.object_at("$.decision"), "error": sfn.JsonPath.object_at("$.error")},
    )  # fmt: skip
    _retry_recording(finished)
    finished.next(
        sfn.Succeed(scope, state.FLEET_SUCCEEDED, comment="The fleet run ended; its report says how")
    )

    # One map over a batch of sites: the canary's, then (when it ended healthy) the rest's.
    fleet_map = sfn.DistributedMap(
        scope, state.FLEET_MAP, items_path="$.batch.items", max_concurrency_path="$.batch.concurrency",
        tolerated_failure_count_path="$.batch.toleratedFailures", result_path=sfn.JsonPath.DISCARD,
        label="FleetSites",
        map_execution_type=sfn.StateMachineType.STANDARD,  # a site may wait for its own approval
    )  # fmt: skip
    fleet_map.item_processor(
        _one_site(
            scope,
            turn=turn,
            approval=approval,
            workflow_tasks=workflow_tasks,
            approval_timeout=approval_timeout,
        )
    )
    batch_done = _invoke(
        scope, state.FLEET_BATCH_DONE, workflow_tasks,
        {"fleetAction": action.BATCH_DONE.value, "fleetRunId": fleet_id,
         "phase": sfn.JsonPath.string_at("$.batch.phase")},
        result_path="$.batch",
    )  # fmt: skip
    _retry_recording(batch_done)
    # A map over its tolerated failures fails: the batch is done all the same (the report says which failed).
    fleet_map.add_catch(batch_done, errors=[sfn.Errors.ALL], result_path="$.mapError")
    fleet_map.next(batch_done)
    next_batch = (
        sfn.Choice(scope, state.FLEET_NEXT_BATCH)
        .when(sfn.Condition.string_equals("$.batch.next", "run"), fleet_map)
        .otherwise(finished)
    )
    batch_done.next(next_batch)
    sites = _invoke(
        scope, state.FLEET_SITES, workflow_tasks, {"fleetAction": action.SITES.value, "fleetRunId": fleet_id},
        result_path="$.batch",
    ).next(next_batch)  # fmt: skip

    wait = _approval_wait(
        scope, state.FLEET_WAIT_FOR_APPROVAL, workflow_tasks,
        {"fleetAction": action.WAIT_FOR_APPROVAL.value, "fleetRunId": fleet_id, "taskToken": sfn.JsonPath.task_token},
        approval_timeout, result_path="$.decision",
    )  # fmt: skip
    wait.add_catch(finished, errors=[sfn.Errors.ALL], result_path="$.error")
    wait.next(
        sfn.Choice(scope, state.FLEET_DECIDED)
        .when(sfn.Condition.boolean_equals("$.decision.approved", True), sites)
        .otherwise(finished)
    )
    planned = _invoke(
        scope, state.FLEET_PLANNED, workflow_tasks, {"fleetAction": action.PLANNED.value, "fleetRunId": fleet_id},
        result_path="$.planned",
    )  # fmt: skip
    planned.next(
        sfn.Choice(scope, state.FLEET_PLAN_NEXT)
        .when(sfn.Condition.string_equals("$.planned.next", "approval"), wait)
        .otherwise(finished)
    )
    plan_failure = _recording_failure(scope, state.FLEET_PLAN_FAILURE, workflow_tasks, ids).next(planned)
    plan_turn = _turn(scope, state.FLEET_PLAN_TURN, turn, ids, plan_failure)
    plan_turn.next(
        sfn.Choice(scope, state.FLEET_PLAN_ROUTE)
        .when(sfn.Condition.string_equals("$.turn.route", names.Route.CONTINUE.value), plan_turn)
        .otherwise(planned)
    )
    # Every path to FleetFinished finds `decision` and `error` (JSONPath: a missing path is an error no
    # Catch handles), so they start empty.
    begin = sfn.Pass(
        scope, state.FLEET_BEGIN, parameters={"fleetRunId": fleet_id, **ids, "decision": {}, "error": {}}
    )
    return begin.next(plan_turn)


def _one_site(
    scope: Construct,
    *,
    turn: lambda_.IFunction,
    approval: lambda_.IFunction,
    workflow_tasks: lambda_.IFunction,
    approval_timeout: Duration,
) -> sfn.IChainable:
    """One site of a fleet (a map's child execution): its session for the plan, its turns and its own
    approval wait when the fleet's approval does not cover it there, its result; a failed site fails the
    item (the map's tolerated failure count counts it).

    SiteStart → run: SiteTurn ⟲ (SiteWaitForApproval → SiteTurn; its timeout → SiteExpireApproval) → SiteEnded
              → skipped: SiteDone
    SiteEnded → failed: SiteFailed, else SiteDone; an error on the way → SiteRecordFailure → SiteEnded
    """
    state = names.State
    ids = {"sessionId": sfn.JsonPath.string_at("$.sessionId"), "runId": sfn.JsonPath.string_at("$.runId")}
    ended = _invoke(
        scope, state.SITE_ENDED, workflow_tasks,
        {"fleetAction": names.FleetAction.SITE_ENDED.value, "fleetRunId": sfn.JsonPath.string_at("$.fleetRunId"),
         "targetId": sfn.JsonPath.string_at("$.targetId"), "sessionId": sfn.JsonPath.string_at("$.sessionId")},
    )  # fmt: skip
    _retry_recording(ended)
    done = sfn.Succeed(scope, state.SITE_DONE)
    failed = sfn.Fail(
        scope, state.SITE_FAILED, error="WpAgent.SiteFailed", cause="The site's run did not end healthy."
    )
    ended.next(
        sfn.Choice(scope, state.SITE_OUTCOME)
        .when(sfn.Condition.boolean_equals("$.failed", True), failed)
        .otherwise(done)
    )
    record_failure = _recording_failure(scope, state.SITE_RECORD_FAILURE, workflow_tasks, ids).next(ended)
    site_turn = _turn(scope, state.SITE_TURN, turn, ids, record_failure)
    expire = _invoke(
        scope, state.SITE_EXPIRE_APPROVAL, workflow_tasks,
        {"action": names.WorkflowAction.EXPIRE_APPROVAL.value, **ids}, result_path=sfn.JsonPath.DISCARD,
    )  # fmt: skip
    expire.add_catch(record_failure, errors=[sfn.Errors.ALL], result_path="$.error")
    expire.next(ended)
    wait = _approval_wait(
        scope, state.SITE_WAIT_FOR_APPROVAL, approval,
        {**ids, "approvalId": sfn.JsonPath.string_at("$.turn.approvalId"), "taskToken": sfn.JsonPath.task_token},
        approval_timeout,
    )  # fmt: skip
    wait.add_catch(expire, errors=[sfn.Errors.TIMEOUT], result_path="$.error")
    wait.add_catch(record_failure, errors=[sfn.Errors.ALL], result_path="$.error")
    wait.next(site_turn)
    site_turn.next(
        sfn.Choice(scope, state.SITE_ROUTE)
        .when(sfn.Condition.string_equals("$.turn.route", names.Route.CONTINUE.value), site_turn)
        .when(sfn.Condition.string_equals("$.turn.route", names.Route.AWAITING_APPROVAL.value), wait)
        .otherwise(ended)
    )
    start = _invoke(
        scope, state.SITE_START, workflow_tasks,
        {"fleetAction": names.FleetAction.SITE_START.value, "fleetRunId": sfn.JsonPath.string_at("$.fleetRunId"),
         "targetId": sfn.JsonPath.string_at("$.targetId")},
    )  # fmt: skip
    return start.next(
        sfn.Choice(scope, state.SITE_STARTED)
        .when(sfn.Condition.string_equals("$.route", "run"), site_turn)
        .otherwise(done)
    )


def _turn(
    scope: Construct, name: str, turn: lambda_.IFunction, ids: Mapping[str, object], on_error: sfn.IChainable
) -> tasks.LambdaInvoke:
    """An agent turn whose route goes to `$.turn` (the state keeps its other ids); retried once when it
    timed out (turns are idempotent), any other error to `on_error`."""
    task = _invoke(scope, name, turn, dict(ids), task_timeout=AGENT_TURN_TASK_TIMEOUT, result_path="$.turn")
    task.add_retry(errors=list(TURN_TIMEOUT_ERRORS), max_attempts=1, interval=Duration.seconds(2))
    task.add_catch(on_error, errors=[sfn.Errors.ALL], result_path="$.error")
    return task


def _recording_failure(
    scope: Construct, name: str, workflow_tasks: lambda_.IFunction, ids: Mapping[str, object]
) -> tasks.LambdaInvoke:
    """A session's run failed in the workflow (`$.error`): the failure recorded on it, the state kept."""
    task = _invoke(
        scope, name, workflow_tasks,
        {"action": names.WorkflowAction.RECORD_FAILURE.value, **ids, "error": sfn.JsonPath.object_at("$.error")},
        result_path=sfn.JsonPath.DISCARD,
    )  # fmt: skip
    _retry_recording(task)
    return task


def _retry_recording(task: tasks.LambdaInvoke) -> None:
    """A task that records (idempotent) is tried again for about two minutes."""
    task.add_retry(errors=[sfn.Errors.ALL], interval=Duration.seconds(2), max_attempts=6, backoff_rate=2)


def _approval_wait(
    scope: Construct,
    name: str,
    function: lambda_.IFunction,
    payload: Mapping[str, object],
    approval_timeout: Duration,
    *,
    result_path: str = sfn.JsonPath.DISCARD,
) -> tasks.LambdaInvoke:
    """A `.waitForTaskToken` invocation that stays open a little past the approval's deadline (a
    decision accepted just before it is still handed over); by default its answer is discarded (the
    decision itself is read from the store by the next task)."""
    wait = tasks.LambdaInvoke(
        scope,
        name,
        lambda_function=function,
        integration_pattern=sfn.IntegrationPattern.WAIT_FOR_TASK_TOKEN,
        payload=sfn.TaskInput.from_object(dict(payload)),
        task_timeout=sfn.Timeout.duration(approval_timeout.plus(APPROVAL_HAND_OVER_GRACE)),
        result_path=result_path,
        retry_on_service_exceptions=False,
    )
    _retry_lambda_service_errors(wait)
    return wait


def _invoke(
    scope: Construct,
    name: str,
    function: lambda_.IFunction,
    payload: Mapping[str, object],
    *,
    task_timeout: Duration | None = None,
    result_path: str | None = None,
) -> tasks.LambdaInvoke:
    """A request-response invocation whose output is the function's return value (at `result_path`,
    when given: the rest of the state stays)."""
    task = tasks.LambdaInvoke(
        scope,
        name,
        lambda_function=function,
        payload=sfn.TaskInput.from_object(dict(payload)),
        payload_response_only=True,
        retry_on_service_exceptions=False,
        task_timeout=sfn.Timeout.duration(task_timeout) if task_timeout else None,
        result_path=result_path,
    )
    _retry_lambda_service_errors(task)
    return task


def _retry_lambda_service_errors(task: tasks.LambdaInvoke) -> None:
    task.add_retry(
        errors=list(LAMBDA_SERVICE_ERRORS),
        interval=Duration.seconds(2),
        max_attempts=3,
        backoff_rate=2,
    )
