"""publishArticle over the API: a job that the workflow runs once on the turn function (which has the
target's SSH access), and whose PublishArticleOutput the caller polls."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from wp_agent.errors import ArticleTooLargeError
from wp_agent.models import field_rules
from wp_agent.models.api import ArticleAccepted, ArticleJobView, ArticlePublishRequest
from wp_agent.models.article import PublishArticleError, PublishArticleInput, PublishArticleOutput
from wp_agent.models.events import ARTICLE_FAILED, ARTICLE_PUBLISHED
from wp_agent.publishing import ArticlePublisher
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.runtime import AwsRuntime
from wp_agent.telemetry import ERRORS_TOTAL, REQUESTS_TOTAL

logger = logging.getLogger(__name__)


def _failure(code: str, message_ja: str) -> PublishArticleOutput:
    return PublishArticleOutput(success=False, error=PublishArticleError(code=code, message=message_ja))


class ArticleService:
    def __init__(self, runtime: AwsRuntime) -> None:
        self._rt = runtime
        self._jobs = runtime.article_jobs

    # -- API ------------------------------------------------------------------------------------

    def submit(self, user_id: str, body: ArticlePublishRequest) -> ArticleAccepted:
        target = self._rt.registry.get(body.target_id)
        if target is None or not target.owned_by(user_id):
            raise ApiError(ApiErrorCode.TARGET_NOT_FOUND)
        if body.site_url is not None and not target.multisite:
            raise ApiError(ApiErrorCode.NOT_MULTISITE, fields=["siteUrl"])
        article_id = f"art_{uuid.uuid4().hex[:20]}"
        try:
            self._jobs.create(article_id, user_id, body)
        except ArticleTooLargeError:
            raise ApiError(
                ApiErrorCode.ARTICLE_TOO_LARGE,
                fields=["content"],
            ) from None
        try:
            self._rt.workflow.start_article(article_id)
        except Exception as exc:
            logger.exception("could not start the article job", extra={"article_id": article_id})
            self._jobs.transition(
                article_id, from_status="Queued", to_status="Failed",
                result=_failure("WORKFLOW_UNAVAILABLE", "公開処理を開始できませんでした。記事は作成されていません。"),
            )  # fmt: skip
            raise ApiError(
                ApiErrorCode.WORKFLOW_UNAVAILABLE,
                "公開処理を開始できませんでした。しばらくしてから再度お試しください。",
            ) from exc
        self._rt.telemetry.count(REQUESTS_TOTAL)
        logger.info(
            "article requested",
            extra={
                "type": "access",
                "user_id": user_id,
                "article_id": article_id,
                "target_id": target.target_id,
            },
        )
        return ArticleAccepted(
            article_id=article_id, status="Queued", status_url=f"/v1/articles/{article_id}"
        )

    def view(self, user_id: str, article_id: str) -> ArticleJobView:
        found = (
            self._jobs.get(article_id) if field_rules.matches(field_rules.ARTICLE_ID, article_id) else None
        )
        if found is None or found[0] != user_id:
            raise ApiError(ApiErrorCode.ARTICLE_NOT_FOUND)
        return found[1]

    # -- the workflow's tasks -------------------------------------------------------------------

    def run(self, article_id: str) -> dict[str, Any]:
        """PublishArticle: publish once. A repeated invocation never publishes again."""
        found = self._jobs.get(article_id)
        if found is None:
            raise LookupError(f"article job {article_id} not found")
        user_id, job, request = found
        if not self._jobs.transition(article_id, from_status="Queued", to_status="Running"):
            if job.status == "Running":  # an earlier attempt died midway: report, don't retry
                output = _failure(
                    "PUBLISH_INTERRUPTED",
                    "前回の公開処理が途中で中断されました。作成途中の投稿が残っている可能性があります"
                    "（投稿メタ _wp_agent_publish_id で特定できます）。サイトを確認してください。",
                )
                self._finish(article_id, user_id, job.target_id, output)
                return {"articleId": article_id, "success": False}
            return {"articleId": article_id, "success": bool(job.result and job.result.success)}
        target = self._rt.registry.get(job.target_id)
        if target is None:
            output = _failure(
                "TARGET_NOT_FOUND",
                "対象サイトの登録が見つからないため公開できませんでした。記事は作成されていません。",
            )
        else:
            publisher = ArticlePublisher(
                self._rt.wp_cli_for(target), self._rt.policy, audit=self._rt.audit, user_id=user_id,
                session_id=f"article-{article_id}", target_id=target.target_id,
            )  # fmt: skip
            output = publisher.publish(
                PublishArticleInput.model_validate(request.model_dump(exclude={"target_id"}))
            )
        self._finish(article_id, user_id, job.target_id, output)
        return {"articleId": article_id, "success": output.success}

    def record_failure(self, article_id: str, error: Any) -> dict[str, Any]:
        """The task itself failed (not the publish): mark the job failed with a generic message."""
        name = error.get("Error", "Unknown") if isinstance(error, dict) else "Unknown"
        logger.error(
            "article job failed in the workflow", extra={"article_id": article_id, "error_name": name}
        )
        found = self._jobs.get(article_id)
        if found is None:
            return {"recorded": False}
        user_id, job, _ = found
        output = _failure(
            "UNKNOWN_ERROR",
            "公開処理中にシステムエラーが発生しました。作成途中の投稿が残っていないかサイトを確認してください。",
        )
        for status in ("Running", "Queued"):
            if self._jobs.transition(article_id, from_status=status, to_status="Failed", result=output):
                self._notify(article_id, user_id, job.target_id, output)
                return {"recorded": True}
        return {"recorded": False}

    def _finish(self, article_id: str, user_id: str, target_id: str, output: PublishArticleOutput) -> None:
        status = "Completed" if output.success else "Failed"
        # Only the attempt that moves the job on tells the backend: a job already marked failed
        # (an interrupted attempt reported meanwhile) must not also be announced as published.
        if self._jobs.transition(article_id, from_status="Running", to_status=status, result=output):
            self._notify(article_id, user_id, target_id, output)
        else:
            logger.warning(
                "article job was no longer running; its outcome is not announced",
                extra={"article_id": article_id, "success": output.success},
            )

    def _notify(self, article_id: str, user_id: str, target_id: str, output: PublishArticleOutput) -> None:
        detail: dict[str, Any] = {
            "articleId": article_id,
            "userId": user_id,
            "targetId": target_id,
            "success": output.success,
        }
        if output.data is not None:
            detail |= output.data.to_json_dict()
        if output.error is not None:
            detail |= {"errorCode": output.error.code, "errorMessage": output.error.message}
            self._rt.telemetry.count(ERRORS_TOTAL, dimensions={"ErrorCode": output.error.code})
        self._rt.events.publish(ARTICLE_PUBLISHED if output.success else ARTICLE_FAILED, detail)
