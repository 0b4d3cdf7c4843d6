"""The state machine's Lambda tasks, event in -> answer out: the functions in functions/ run them with
the Lambda's runtime, and `wp-agent api serve` runs the same ones in-process."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wp_agent.models.workflow import (
    ApprovalTaskInput,
    FleetAction,
    FleetTaskInput,
    PublishArticleTaskInput,
    TurnTaskInput,
    WorkflowAction,
    WorkflowTaskInput,
)
from wp_agent.service import workflow_tasks
from wp_agent.service.articles import ArticleService
from wp_agent.service.fleets import FleetTasks
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
    """Start a scheduled run, expire an approval, record a failure (of a run or an article job); the
    fleet branch's tasks."""
    if "fleetAction" in event:
        return fleet_task(runtime, event, log_keys)
    task = WorkflowTaskInput.model_validate(event)
    log_keys(action=task.action, session_id=task.session_id, run_id=task.run_id)
    if task.action is WorkflowAction.EXPIRE_APPROVAL and task.session_id and task.run_id:
        return workflow_tasks.expire_approval(runtime, task.session_id, task.run_id)
    if task.action is WorkflowAction.RECORD_ARTICLE_FAILURE and task.article_id:
        return ArticleService(runtime).record_failure(task.article_id, task.error, task.execution)
    if task.action is WorkflowAction.START_SCHEDULED_RUN:
        return workflow_tasks.start_scheduled_run(runtime, task.input or {})
    return workflow_tasks.record_failure(runtime, task.session_id, task.run_id, task.error)


def fleet_task(runtime: AwsRuntime, event: dict[str, Any], log_keys: LogKeys = _no_keys) -> dict[str, Any]:
    """One task of the workflow's fleet branch (service/fleets.py says what each does)."""
    task = FleetTaskInput.model_validate(event)
    log_keys(fleet_action=task.fleet_action, fleet_run_id=task.fleet_run_id, target_id=task.target_id)
    tasks = FleetTasks(runtime)
    match task.fleet_action:
        case FleetAction.PLANNED:
            return tasks.planned(task.fleet_run_id)
        case FleetAction.WAIT_FOR_APPROVAL if task.task_token:
            tasks.wait_for_approval(task.fleet_run_id, task.task_token)
            return {"fleetRunId": task.fleet_run_id}
        case FleetAction.SITES:
            return tasks.sites(task.fleet_run_id)
        case FleetAction.SITE_START if task.target_id:
            return tasks.site_start(task.fleet_run_id, task.target_id)
        case FleetAction.SITE_ENDED if task.target_id and task.session_id:
            return tasks.site_ended(task.fleet_run_id, task.target_id, task.session_id)
        case FleetAction.BATCH_DONE:
            return tasks.batch_done(task.fleet_run_id, task.phase or "rest")
        case FleetAction.FINISHED:
            declined = task.decision is not None and not task.decision.get("approved")
            expired = isinstance(task.error, dict) and task.error.get("Error") == "States.Timeout"
            return tasks.finished(task.fleet_run_id, declined=declined, expired=expired)
    raise ValueError(f"fleet task {task.fleet_action} is missing its ids")


def publish_article(
    runtime: AwsRuntime, event: dict[str, Any], log_keys: LogKeys = _no_keys
) -> dict[str, Any]:
    """One publishArticle job (no model)."""
    job = PublishArticleTaskInput.model_validate(event)
    log_keys(article_id=job.article_id)
    return ArticleService(runtime).run(job.article_id, job.execution)
