"""Lambda: the `.waitForTaskToken` task — keeps the token on the pending approval, announces it."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from wp_agent.config import ApprovalSettings
from wp_agent.service import task_handlers
from wp_agent.service.lambda_setup import handler_tools

logger, tracer, runtime = handler_tools(ApprovalSettings)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return task_handlers.approval(runtime(), event, logger.append_keys)
