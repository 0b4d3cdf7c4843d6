"""Lambda: one agent turn of a session's run (the state machine's AgentTurn task); returns its route."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from wp_agent.config import TurnSettings
from wp_agent.models.workflow import TurnTaskInput
from wp_agent.service.lambda_setup import handler_tools
from wp_agent.service.workflow_tasks import run_turn

logger, tracer, runtime = handler_tools(TurnSettings)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    task = TurnTaskInput.model_validate(event)
    logger.append_keys(session_id=task.session_id, run_id=task.run_id)
    return run_turn(runtime(), task.session_id, task.run_id)
