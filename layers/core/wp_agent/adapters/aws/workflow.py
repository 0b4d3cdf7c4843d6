"""The Step Functions side of a run: start, stop, and answer the approval wait."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from wp_agent.adapters.aws.clients import client
from wp_agent.agent.approval_protocol import ResumeOutcome

logger = logging.getLogger(__name__)


class ApprovalWaits:
    """Answers runs' approval waits by their task tokens: no state machine ARN needed (the approval
    task's function has none)."""

    def resume(
        self, task_token: str, decision: dict[str, Any], *, attempts: int = 3, pause: float = 0.3
    ) -> ResumeOutcome:
        """Answer the approval wait (approval_protocol.hand_over calls this). A token written a moment
        ago may not be accepted yet, so "unknown token" is retried briefly before it is reported."""
        sfn = client("stepfunctions")
        for attempt in range(attempts):
            try:
                sfn.send_task_success(taskToken=task_token, output=json.dumps(decision))
            except sfn.exceptions.TaskTimedOut:
                return ResumeOutcome.TIMED_OUT
            except (sfn.exceptions.TaskDoesNotExist, sfn.exceptions.InvalidToken):
                if attempt + 1 < attempts:
                    time.sleep(pause)
            else:
                return ResumeOutcome.RESUMED
        logger.warning("approval wait did not accept the decision", extra={"attempts": attempts})
        return ResumeOutcome.UNKNOWN_TOKEN


class RunWorkflow(ApprovalWaits):
    """Starts, stops and looks at the runs of one state machine (and answers their approval waits)."""

    def __init__(self, state_machine_arn: str) -> None:
        self._arn = state_machine_arn

    def start(self, session_id: str, run_id: str) -> str:
        """Start the run's execution (named after the run, so a repeat start cannot double it)."""
        return self._start(run_id, {"sessionId": session_id, "runId": run_id})

    def start_article(self, article_id: str, execution: str) -> str:
        """Start a publishArticle job (the workflow's PublishArticle branch) as the execution the job
        names: a repeated start of the same name is the same execution."""
        return self._start(execution, {"articleId": article_id})

    def start_fleet(self, fleet_run_id: str, session_id: str, run_id: str) -> str:
        """Start a fleet run (the workflow's fleet branch: the canary's planning run first) as the
        execution named after it."""
        return self._start(
            fleet_run_id, {"fleetRunId": fleet_run_id, "sessionId": session_id, "runId": run_id}
        )

    def execution_arn(self, name: str) -> str:
        """Executions are named after their run (or job), so the ARN is known before they start."""
        return f"{self._arn.replace(':stateMachine:', ':execution:')}:{name}"

    def _start(self, name: str, payload: dict[str, str]) -> str:
        sfn = client("stepfunctions")
        try:
            response = sfn.start_execution(stateMachineArn=self._arn, name=name, input=json.dumps(payload))
        except sfn.exceptions.ExecutionAlreadyExists:
            return self.execution_arn(name)
        return str(response["executionArn"])

    def stop(self, execution_arn: str, *, cause: str) -> None:
        sfn = client("stepfunctions")
        try:
            sfn.stop_execution(executionArn=execution_arn, error="Cancelled", cause=cause)
        except sfn.exceptions.ExecutionDoesNotExist:
            logger.info("execution already gone", extra={"execution_arn": execution_arn})

    def has_ended(self, execution_arn: str) -> bool:
        """Whether the execution exists and is no longer running (False when it cannot be told)."""
        sfn = client("stepfunctions")
        try:
            status = sfn.describe_execution(executionArn=execution_arn)["status"]
        except sfn.exceptions.ExecutionDoesNotExist:
            return False  # not started yet (the API saves the session first)
        return str(status) != "RUNNING"
