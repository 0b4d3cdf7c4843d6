"""publishArticle over the API: a job that the workflow runs on the publish function (which has the
target's SSH access), and whose PublishArticleOutput the caller polls.

Exactly once under a lost answer:
- the job's id comes from the caller's Idempotency-Key (`keyed_id`), so a resend whose first
  attempt died finds the job (the same request answers with it, another body is refused);
- the post carries the job's id as its marker (`_wp_agent_publish_id`): an attempt that died after
  creating or publishing the post is retried by the workflow, and the retry finds the marked post and
  finishes it instead of creating another;
- the outcome is stored before it is announced, and announced once it is stored: a retry after the
  store announces what was not announced yet and publishes nothing.
"""

from __future__ import annotations

import logging
import secrets
import uuid
from typing import Any

from wp_agent.errors import ArticleTooLargeError
from wp_agent.models import field_rules
from wp_agent.models.api import ArticleAccepted, ArticleJobView, ArticlePublishRequest
from wp_agent.models.article import PublishArticleError, PublishArticleInput, PublishArticleOutput
from wp_agent.models.events import ARTICLE_FAILED, ARTICLE_PUBLISHED
from wp_agent.models.target import Role
from wp_agent.publishing import MARKER_META_KEY, ArticlePublisher
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.idempotency import keyed_id
from wp_agent.service.runtime import ArticleJob, AwsRuntime
from wp_agent.telemetry import ERRORS_TOTAL, REQUESTS_TOTAL

logger = logging.getLogger(__name__)


def _failure(code: str, message_ja: str) -> PublishArticleOutput:
    return PublishArticleOutput(success=False, error=PublishArticleError(code=code, message=message_ja))


def _execution_name(article_id: str) -> str:
    """A new name for the job's workflow execution (never one an earlier start may have used)."""
    return f"{article_id}-{secrets.token_hex(4)}"


class ArticleService:
    def __init__(self, runtime: AwsRuntime) -> None:
        self._rt = runtime
        self._jobs = runtime.article_jobs

    # -- API ------------------------------------------------------------------------------------

    def submit(
        self, user_id: str, body: ArticlePublishRequest, *, idempotency_key: str | None = None
    ) -> ArticleAccepted:
        target = self._rt.registry.get(body.target_id)
        role = target.role_of(user_id) if target is not None else None
        if target is None or role is None:
            raise ApiError(ApiErrorCode.TARGET_NOT_FOUND)
        if not role.covers(Role.EDITOR):  # an article is content: posts, media, categories and tags
            raise ApiError(ApiErrorCode.EDITOR_REQUIRED)
        if body.site_url is not None and not target.multisite:
            raise ApiError(ApiErrorCode.NOT_MULTISITE, fields=["siteUrl"])
        if idempotency_key is None:
            article_id = f"art_{uuid.uuid4().hex[:20]}"
        else:
            article_id = keyed_id("art", user_id, idempotency_key)
        execution = _execution_name(article_id)
        try:
            created = self._jobs.create(article_id, user_id, body, execution=execution)
        except ArticleTooLargeError:
            raise ApiError(
                ApiErrorCode.ARTICLE_TOO_LARGE,
                fields=["content"],
            ) from None
        if created:
            status = "Queued"
            self._start(article_id, execution)
        else:
            status = self._resume_submission(article_id, user_id, body)
        self._rt.telemetry.count(REQUESTS_TOTAL)
        logger.info(
            "article requested",
            extra={
                "type": "access",
                "user_id": user_id,
                "article_id": article_id,
                "target_id": target.target_id,
                "repeated": not created,
            },
        )
        return ArticleAccepted(article_id=article_id, status=status, status_url=f"/v1/articles/{article_id}")

    def _resume_submission(self, article_id: str, user_id: str, body: ArticlePublishRequest) -> str:
        """The same key again, its first attempt's answer lost: answer with the job it created (started
        if it is not yet). The job's status is returned."""
        job = self._jobs.get(article_id)
        if job is None:  # removed between the two reads (its time to live ran out): try again later
            raise ApiError(ApiErrorCode.REQUEST_IN_PROGRESS)
        if job.user_id != user_id or job.request != body:
            raise ApiError(ApiErrorCode.IDEMPOTENCY_KEY_REUSED)
        if job.restartable:
            execution = _execution_name(article_id)
            if self._jobs.requeue(article_id, execution=execution):
                self._start(article_id, execution)
                return "Queued"
            job = self._jobs.get(article_id) or job
        elif job.view.status == "Queued" and job.execution is not None:
            # The first attempt may have died before starting it; a start under the same name is
            # taken by Step Functions as the same execution.
            self._start(article_id, job.execution)
        return job.view.status

    def _start(self, article_id: str, execution: str) -> None:
        try:
            self._rt.workflow.start_article(article_id, execution)
        except Exception as exc:
            logger.exception("could not start the article job", extra={"article_id": article_id})
            self._jobs.transition(
                article_id, from_status="Queued", to_status="Failed", execution=execution, restartable=True,
                result=_failure("WORKFLOW_UNAVAILABLE", "公開処理を開始できませんでした。記事は作成されていません。"),
            )  # fmt: skip
            raise ApiError(
                ApiErrorCode.WORKFLOW_UNAVAILABLE,
                "公開処理を開始できませんでした。しばらくしてから同じ Idempotency-Key で再度お試しください。",
            ) from exc

    def view(self, user_id: str, article_id: str) -> ArticleJobView:
        found = (
            self._jobs.get(article_id) if field_rules.matches(field_rules.ARTICLE_ID, article_id) else None
        )
        if found is None or found.user_id != user_id:
            raise ApiError(ApiErrorCode.ARTICLE_NOT_FOUND)
        return found.view

    # -- the workflow's tasks -------------------------------------------------------------------

    def run(self, article_id: str, execution: str | None = None) -> dict[str, Any]:
        """PublishArticle: publish once. A retried invocation finishes what an earlier one of the same
        execution started (the post is found by its marker); an execution that does not own the job
        does nothing."""
        job = self._jobs.get(article_id)
        if job is None:
            raise LookupError(f"article job {article_id} not found")
        if execution is not None and job.execution is not None and job.execution != execution:
            logger.warning(
                "an execution that does not own the article job ends without running it",
                extra={"article_id": article_id, "execution": execution},
            )
            return {"articleId": article_id, "success": False}
        resume = job.view.status == "Running"  # an earlier attempt of this execution died midway
        if job.view.status == "Queued" and not self._jobs.transition(
            article_id, from_status="Queued", to_status="Running", execution=execution
        ):
            job = self._jobs.get(article_id) or job
            resume = job.view.status == "Running"
        if job.view.status in ("Completed", "Failed"):
            self._announce_once(article_id, job)  # its outcome may have been stored but not announced
            return {"articleId": article_id, "success": bool(job.view.result and job.view.result.success)}
        output = self._publish(article_id, job, resume=resume)
        self._finish(article_id, job, output)
        return {"articleId": article_id, "success": output.success}

    def _publish(self, article_id: str, job: ArticleJob, *, resume: bool) -> PublishArticleOutput:
        target = self._rt.registry.get(job.view.target_id)
        if target is None:
            return _failure(
                "TARGET_NOT_FOUND",
                "対象サイトの登録が見つからないため公開できませんでした。記事は作成されていません。",
            )
        publisher = ArticlePublisher(
            self._rt.wp_cli_for(target), self._rt.policy, audit=self._rt.audit, user_id=job.user_id,
            session_id=f"article-{article_id}", target_id=target.target_id,
        )  # fmt: skip
        article = PublishArticleInput.model_validate(job.request.model_dump(exclude={"target_id"}))
        return publisher.publish(article, publish_id=article_id, resume=resume)

    def record_failure(self, article_id: str, error: Any, execution: str | None = None) -> dict[str, Any]:
        """The task itself failed (not the publish) and was not retried further: mark the job failed
        with a generic message, or announce an outcome that was stored but not announced."""
        name = error.get("Error", "Unknown") if isinstance(error, dict) else "Unknown"
        logger.error(
            "article job failed in the workflow", extra={"article_id": article_id, "error_name": name}
        )
        job = self._jobs.get(article_id)
        if job is None or (execution is not None and job.execution not in (None, execution)):
            return {"recorded": False}  # gone, or owned by another execution (this one's start was lost)
        output = _failure(
            "UNKNOWN_ERROR",
            "公開処理中にシステムエラーが発生しました。作成途中の投稿が残っていないかサイトを確認してください"
            f"（投稿メタ {MARKER_META_KEY}={article_id} で特定できます）。",
        )
        for status in ("Running", "Queued"):
            if self._jobs.transition(article_id, from_status=status, to_status="Failed", result=output):
                self._announce(article_id, job, output)
                return {"recorded": True}
        found = self._jobs.get(article_id)
        if found is not None:
            self._announce_once(article_id, found)
        return {"recorded": False}

    def _finish(self, article_id: str, job: ArticleJob, output: PublishArticleOutput) -> None:
        status = "Completed" if output.success else "Failed"
        # Only the attempt that moves the job on tells the backend: a job already marked failed
        # (an interrupted attempt reported meanwhile) must not also be announced as published.
        if self._jobs.transition(article_id, from_status="Running", to_status=status, result=output):
            self._announce(article_id, job, output)
        else:
            logger.warning(
                "article job was no longer running; its outcome is not announced",
                extra={"article_id": article_id, "success": output.success},
            )

    def _announce_once(self, article_id: str, job: ArticleJob) -> None:
        if not job.announced and job.view.result is not None:
            self._announce(article_id, job, job.view.result)

    def _announce(self, article_id: str, job: ArticleJob, output: PublishArticleOutput) -> None:
        """The outcome event, then the mark that it went out (a crash between the two sends it again
        on the retry: events are at least once, with the article id to tell repeats apart)."""
        detail: dict[str, Any] = {
            "articleId": article_id,
            "userId": job.user_id,
            "targetId": job.view.target_id,
            "success": output.success,
        }
        if output.data is not None:
            detail |= output.data.to_json_dict()
        if output.error is not None:
            detail |= {"errorCode": output.error.code, "errorMessage": output.error.message}
            self._rt.telemetry.count(ERRORS_TOTAL, dimensions={"ErrorCode": output.error.code})
        self._rt.events.publish(ARTICLE_PUBLISHED if output.success else ARTICLE_FAILED, detail)
        self._jobs.mark_announced(article_id)
