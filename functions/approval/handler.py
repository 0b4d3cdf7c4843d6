"""Lambda: the `.waitForTaskToken` task — keeps the token on the pending approval, announces it."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from wp_agent.config import ApprovalSettings
from wp_agent.models.workflow import ApprovalTaskInput
from wp_agent.service.lambda_setup import handler_tools
from wp_agent.service.workflow_tasks import wait_for_approval

logger, tracer, runtime = handler_tools(ApprovalSettings)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    task = ApprovalTaskInput.model_validate(event)
    logger.append_keys(session_id=task.session_id, run_id=task.run_id, approval_id=task.approval_id)
    wait_for_approval(runtime(), task.session_id, task.run_id, task.approval_id, task.task_token)
    return {"sessionId": task.session_id, "runId": task.run_id, "approvalId": task.approval_id}
