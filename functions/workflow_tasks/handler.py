"""Lambda: the state machine's small tasks — start a scheduled run, expire an approval, record a failure."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from wp_agent.config import WorkflowTasksSettings
from wp_agent.models.workflow import WorkflowAction, WorkflowTaskInput
from wp_agent.service import workflow_tasks
from wp_agent.service.articles import ArticleService
from wp_agent.service.lambda_setup import handler_tools

logger, tracer, runtime = handler_tools(WorkflowTasksSettings)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    task = WorkflowTaskInput.model_validate(event)
    logger.append_keys(action=task.action, session_id=task.session_id, run_id=task.run_id)
    if task.action is WorkflowAction.EXPIRE_APPROVAL and task.session_id and task.run_id:
        return workflow_tasks.expire_approval(runtime(), task.session_id, task.run_id)
    if task.action is WorkflowAction.RECORD_ARTICLE_FAILURE and task.article_id:
        return ArticleService(runtime()).record_failure(task.article_id, task.error, task.execution)
    if task.action is WorkflowAction.START_SCHEDULED_RUN:
        return workflow_tasks.start_scheduled_run(runtime(), task.input or {})
    return workflow_tasks.record_failure(runtime(), task.session_id, task.run_id, task.error)
