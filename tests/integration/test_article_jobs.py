"""publishArticle jobs when their workflow misbehaves: a start that failed (its answer maybe lost),
a retried attempt after the outcome was stored, an execution that does not own the job. Jobs in moto
DynamoDB; the workflow and the bus recorded, the publisher replaced. (Kills on the real stack:
test_lost_answers.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes import aws as aws_fakes
from tests.fakes.service_runtime import RecordedRuntime
from wp_agent.adapters.aws.article_jobs import ArticleJobStore
from wp_agent.adapters.aws.events import ARTICLE_PUBLISHED
from wp_agent.models.api import ArticlePublishRequest
from wp_agent.models.article import PublishArticleInput, PublishArticleOutput, PublishedArticle
from wp_agent.publishing import ArticlePublisher
from wp_agent.service.api_errors import ApiError
from wp_agent.service.articles import ArticleService

pytestmark = pytest.mark.usefixtures("aws")

REQUEST = ArticlePublishRequest(title="お知らせ", content="<p>本文</p>", status="publish", target_id="site-a")
PUBLISHED = PublishArticleOutput(
    success=True,
    data=PublishedArticle(post_id=7, post_url="https://example.test/?p=7", edit_url="https://example.test/e"),
)


@pytest.fixture
def rt() -> RecordedRuntime:
    runtime = RecordedRuntime()
    runtime.register_target()
    return runtime


@pytest.fixture
def publishes(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The publisher's calls (its keyword arguments); each one publishes post 7."""
    calls: list[dict[str, Any]] = []

    def publish(self: ArticlePublisher, article: PublishArticleInput, **kwargs: Any) -> PublishArticleOutput:
        calls.append(kwargs)
        return PUBLISHED

    monkeypatch.setattr(ArticlePublisher, "publish", publish)
    return calls


def jobs() -> ArticleJobStore:
    return ArticleJobStore(aws_fakes.TABLES["sessions"])


def test_the_same_key_answers_the_same_job_and_another_body_is_refused(
    rt: RecordedRuntime, publishes: list[dict[str, Any]]
) -> None:
    articles = ArticleService(rt)
    first = articles.submit("u1", REQUEST, idempotency_key="k-1")
    again = articles.submit("u1", REQUEST, idempotency_key="k-1")
    assert again.article_id == first.article_id
    assert len(rt.recording_workflow.started) == 2  # started again under the same name: one execution
    assert len(set(rt.recording_workflow.started)) == 1
    with pytest.raises(ApiError) as reused:
        articles.submit("u1", REQUEST.model_copy(update={"title": "別"}), idempotency_key="k-1")
    assert (reused.value.status, reused.value.code) == (422, "IDEMPOTENCY_KEY_REUSED")
    without_key = [articles.submit("u1", REQUEST).article_id for _ in range(2)]
    assert len({*without_key, first.article_id}) == 3  # no key: every request is its own


def test_a_start_that_failed_is_started_anew_by_the_resend_and_its_lost_execution_does_nothing(
    rt: RecordedRuntime, publishes: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    articles = ArticleService(rt)
    real_start = rt.recording_workflow._start
    lost: list[str] = []

    def started_but_answer_lost(name: str, payload: dict[str, str]) -> str:
        lost.append(name)  # Step Functions took it; the API never heard back
        raise ConnectionError("states endpoint timed out")

    monkeypatch.setattr(rt.recording_workflow, "_start", started_but_answer_lost)
    with pytest.raises(ApiError) as unavailable:
        articles.submit("u1", REQUEST, idempotency_key="k-2")
    assert (unavailable.value.status, unavailable.value.code) == (503, "WORKFLOW_UNAVAILABLE")
    monkeypatch.setattr(rt.recording_workflow, "_start", real_start)

    accepted = articles.submit("u1", REQUEST, idempotency_key="k-2")  # the backend retries
    assert accepted.status == "Queued"
    (restarted,) = rt.recording_workflow.started
    assert restarted != lost[0]  # a new execution owns the job

    # The execution whose start was reported failed runs anyway: it finds the job owned by another.
    assert articles.run(accepted.article_id, lost[0]) == {"articleId": accepted.article_id, "success": False}
    assert articles.record_failure(accepted.article_id, {"Error": "X"}, lost[0]) == {"recorded": False}
    assert publishes == []
    assert articles.run(accepted.article_id, restarted)["success"] is True
    assert rt.recording_events.kinds() == [ARTICLE_PUBLISHED]


def test_an_outcome_stored_but_not_announced_is_announced_once_by_the_retry(
    rt: RecordedRuntime, publishes: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    articles = ArticleService(rt)
    accepted = articles.submit("u1", REQUEST, idempotency_key="k-3")
    (execution,) = rt.recording_workflow.started

    def bus_down(detail_type: str, detail: dict[str, Any]) -> None:
        raise ConnectionError("events endpoint unreachable")

    real_publish = rt.recording_events.publish
    monkeypatch.setattr(rt.recording_events, "publish", bus_down)
    with pytest.raises(ConnectionError):
        articles.run(accepted.article_id, execution)
    monkeypatch.setattr(rt.recording_events, "publish", real_publish)
    job = jobs().get(accepted.article_id)
    assert job is not None
    assert (job.view.status, job.announced) == ("Completed", False)

    assert articles.run(accepted.article_id, execution)["success"] is True  # the workflow's retry
    assert articles.run(accepted.article_id, execution)["success"] is True  # and once more
    assert rt.recording_events.kinds() == [ARTICLE_PUBLISHED]
    assert len(publishes) == 1


def test_a_retried_attempt_resumes_with_the_job_as_its_marker(
    rt: RecordedRuntime, publishes: list[dict[str, Any]]
) -> None:
    articles = ArticleService(rt)
    accepted = articles.submit("u1", REQUEST, idempotency_key="k-4")
    (execution,) = rt.recording_workflow.started
    assert jobs().transition(accepted.article_id, from_status="Queued", to_status="Running")  # died
    articles.run(accepted.article_id, execution)
    assert publishes == [{"publish_id": accepted.article_id, "resume": True}]
