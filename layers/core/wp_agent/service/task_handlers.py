"""The state machine's Lambda tasks, event in -> answer out: the functions in functions/ run them with
the Lambda's runtime, and `wp-agent api serve` runs the same ones in-process."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wp_agent.models.workflow import (
    ApprovalTaskInput,
    PublishArticleTaskInput,
    TurnTaskInput,
    WorkflowAction,
    WorkflowTaskInput,
)
from wp_agent.service import workflow_tasks
from wp_agent.service.articles import ArticleService
from wp_agent.service.runtime import AwsRuntime

LogKeys = Callable[..., None]


def _no_keys(**_: Any) -> None:
    return None


def turn(runtime: AwsRuntime, event: dict[str, Any], log_keys: LogKeys = _no_keys) -> dict[str, Any]:
    """One agent turn of a session's run (AgentTurn); returns its route."""
    task = TurnTaskInput.model_validate(event)
    log_keys(session_id=task.session_id, run_id=task.run_id)
    return workflow_tasks.run_turn(runtime, task.session_id, task.run_id)


def approval(runtime: AwsRuntime, event: dict[str, Any], log_keys: LogKeys = _no_keys) -> dict[str, Any]:
    """The `.waitForTaskToken` task: keeps the token on the pending approval, announces it."""
    task = ApprovalTaskInput.model_validate(event)
    log_keys(session_id=task.session_id, run_id=task.run_id, approval_id=task.approval_id)
    workflow_tasks.wait_for_approval(runtime, task.session_id, task.run_id, task.approval_id, task.task_token)
    return {"sessionId": task.session_id, "runId": task.run_id, "approvalId": task.approval_id}


def small_task(runtime: AwsRuntime, event: dict[str, Any], log_keys: LogKeys = _no_keys) -> dict[str, Any]:
    """Start a scheduled run, expire an approval, record a failure (of a run or an article job)."""
    task = WorkflowTaskInput.model_validate(event)
    log_keys(action=task.action, session_id=task.session_id, run_id=task.run_id)
    if task.action is WorkflowAction.EXPIRE_APPROVAL and task.session_id and task.run_id:
        return workflow_tasks.expire_approval(runtime, task.session_id, task.run_id)
    if task.action is WorkflowAction.RECORD_ARTICLE_FAILURE and task.article_id:
        return ArticleService(runtime).record_failure(task.article_id, task.error, task.execution)
    if task.action is WorkflowAction.START_SCHEDULED_RUN:
        return workflow_tasks.start_scheduled_run(runtime, task.input or {})
    return workflow_tasks.record_failure(runtime, task.session_id, task.run_id, task.error)


def publish_article(
    runtime: AwsRuntime, event: dict[str, Any], log_keys: LogKeys = _no_keys
) -> dict[str, Any]:
    """One publishArticle job (no model)."""
    job = PublishArticleTaskInput.model_validate(event)
    log_keys(article_id=job.article_id)
    return ArticleService(runtime).run(job.article_id, job.execution)
