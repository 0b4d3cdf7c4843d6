"""Lambda: one agent turn of a session's run (the state machine's AgentTurn task); returns its route."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from wp_agent.config import TurnSettings
from wp_agent.service import task_handlers
from wp_agent.service.lambda_setup import handler_tools

logger, tracer, runtime = handler_tools(TurnSettings)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return task_handlers.turn(runtime(), event, logger.append_keys)
