"""Lambda: one agent turn of a session's run, or one publishArticle job (Step Functions tasks)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from wp_agent.models.workflow import PublishArticleTaskInput, TurnTaskInput
from wp_agent.service.articles import ArticleService
from wp_agent.service.lambda_setup import handler_tools
from wp_agent.service.workflow_tasks import run_turn

logger, tracer, runtime = handler_tools()


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("action") == "publish_article":  # the workflow's PublishArticle task
        job = PublishArticleTaskInput.model_validate(event)
        logger.append_keys(article_id=job.article_id)
        return ArticleService(runtime()).run(job.article_id)
    task = TurnTaskInput.model_validate(event)
    logger.append_keys(session_id=task.session_id, run_id=task.run_id)
    return run_turn(runtime(), task.session_id, task.run_id)
