"""Lambda: the state machine's small tasks — start a scheduled run, expire an approval, record a failure."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from wp_agent.config import WorkflowTasksSettings
from wp_agent.service import task_handlers
from wp_agent.service.lambda_setup import handler_tools

logger, tracer, runtime = handler_tools(WorkflowTasksSettings)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return task_handlers.small_task(runtime(), event, logger.append_keys)
