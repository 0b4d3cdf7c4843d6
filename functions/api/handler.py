"""Lambda: the HTTP API (API Gateway REST, IAM auth). The routes live in wp_agent.http_api (so
`wp-agent api serve` runs the same ones); this handler gives them the Lambda's runtime."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from wp_agent.config import ApiSettings
from wp_agent.http_api.app import handle
from wp_agent.service.lambda_setup import handler_tools

logger, tracer, runtime = handler_tools(ApiSettings)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle(event, context, runtime)
