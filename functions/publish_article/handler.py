"""Lambda: one publishArticle job (spec §4.4; the state machine's PublishArticle task, no model).

Its own function: it holds the target's SSH access like the turn does, but never the model key."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from wp_agent.config import PublishArticleSettings
from wp_agent.service import task_handlers
from wp_agent.service.lambda_setup import handler_tools

logger, tracer, runtime = handler_tools(PublishArticleSettings)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return task_handlers.publish_article(runtime(), event, logger.append_keys)
