"""EventBridge Scheduler: the `wp-agent` schedule group and the role schedules run as.

The api function creates one schedule per scheduled run (CreateSchedule in this group, target =
the run state machine, input = {"scheduleId": ...}) and passes this role. The role can do exactly
one thing — start executions of this state machine — and only Scheduler acting for this account
and this schedule group can assume it (confused-deputy protection).
"""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra import names


class SchedulesConstruct(Construct):
    """The schedule group and the scheduler execution role."""

    def __init__(self, scope: Construct, construct_id: str, *, state_machine: sfn.IStateMachine) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.group = scheduler.ScheduleGroup(self, "Group", schedule_group_name=names.SCHEDULE_GROUP_NAME)
        self.role = iam.Role(
            self,
            "SchedulerRole",
            description="EventBridge Scheduler: start wp-agent scheduled runs",
            assumed_by=iam.ServicePrincipal(
                "scheduler.amazonaws.com",
                conditions={
                    "StringEquals": {
                        "aws:SourceAccount": stack.account,
                        "aws:SourceArn": self.group.schedule_group_arn,
                    }
                },
            ),
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="StartScheduledRun",
                actions=["states:StartExecution"],
                resources=[state_machine.state_machine_arn],
            )
        )
