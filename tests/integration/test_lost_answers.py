"""A lost answer never doubles an article or a schedule (issue 30): on the serverless stack (the
synthesized state machine in moto, the real handlers in their containers, real sshd + WordPress) the
function is killed at each step — after the post is created, after it is published, after the job's
result is stored; after a schedule's registry items, after Scheduler created it, after the answer was
stored — and the backend resends with the same Idempotency-Key. Exactly one post or schedule, the job
ends as the published result, one event."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from threading import Event
from typing import Any

import boto3
import pytest

from tests.fakes import aws as aws_fakes
from tests.fakes.media_server import MediaServer
from tests.fakes.serverless import REGION, TARGET_ID, LambdaDiedError, ServerlessStack
from wp_agent.adapters.aws.article_jobs import ArticleJobStore
from wp_agent.adapters.aws.schedule_store import ScheduleStore
from wp_agent.adapters.aws.workflow import RunWorkflow
from wp_agent.executors.ssh import SshWpCli
from wp_agent.service.idempotency import IdempotentRequests
from wp_agent.service.schedules import ScheduleService

pytestmark = pytest.mark.sshd

TITLE = "再送しても一件だけの記事"
ARTICLE = {
    "title": TITLE,
    "content": "<p>応答が失われても二重に公開しません。</p>",
    "categories": ["lost-answers"],
    "tags": ["再送"],
    "status": "publish",
    "targetId": TARGET_ID,
}
KEY = {"Idempotency-Key": "backend-request-0001"}
SCHEDULE = {
    "name": "毎朝の下書き確認",
    "expression": "cron(0 9 * * ? *)",
    "timezone": "Asia/Tokyo",
    "targetId": TARGET_ID,
    "agentInput": {"message": "下書きの投稿を一覧で見せて"},
}


# -- the far ends, as the backend and an operator see them ---------------------------------------


def wait_for_article(stack: ServerlessStack, article_id: str, timeout: float = 90.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, job = stack.api("GET", f"/v1/articles/{article_id}")
        if status == 200 and job["status"] in {"Completed", "Failed"}:
            return dict(job)
        time.sleep(0.1)
    raise AssertionError(f"article job {article_id} did not finish")


def posts_titled(stack: ServerlessStack) -> dict[int, dict[str, str]]:
    return {i: row for i, row in stack.site.posts(post_type="post").items() if row["post_title"] == TITLE}


def attachments_of(stack: ServerlessStack, post_id: int) -> list[int]:
    rows = stack.site.posts(post_type="attachment").items()
    return [i for i, row in rows if row["post_parent"] == str(post_id)]


def terms_of(stack: ServerlessStack, post_id: int, taxonomy: str) -> list[str]:
    listed = stack.site.wp_json("post", "term", "list", str(post_id), taxonomy, "--fields=slug,name")
    return sorted(term["name"] for term in listed)


def article_executions(stack: ServerlessStack, article_id: str) -> list[str]:
    listed = stack.sfn.list_executions(stateMachineArn=stack.machine_arn)["executions"]
    return [e["name"] for e in listed if e["name"].startswith(article_id)]


def detail_types(stack: ServerlessStack, expected: int) -> list[str]:
    """The events the backend got: `expected` of them, then a moment for a late duplicate."""
    found = stack.events(expected, timeout=30.0) + stack.events(1, timeout=3.0)
    return [e["detail-type"] for e in found]


def expire_in_progress_records() -> None:
    """What 29 s (the API function's time) do to a dead attempt's in-progress idempotency record."""
    table = boto3.resource("dynamodb", region_name=REGION).Table(aws_fakes.TABLES["idempotency"])
    past = int(time.time() * 1000) - 1
    for item in table.scan()["Items"]:
        if item.get("status") == "INPROGRESS":
            table.update_item(
                Key={"id": item["id"]},
                UpdateExpression="SET in_progress_expiration = :past",
                ExpressionAttributeValues={":past": past},
            )


def forget_idempotency_records() -> None:
    """The stored answers have expired (an hour later): a resend reaches the services again."""
    table = boto3.resource("dynamodb", region_name=REGION).Table(aws_fakes.TABLES["idempotency"])
    for item in table.scan()["Items"]:
        table.delete_item(Key={"id": item["id"]})


# -- killing the function at one step ------------------------------------------------------------


def die_after_command(monkeypatch: pytest.MonkeyPatch, *words: str) -> list[str]:
    """The function dies right after WordPress ran the first command starting with `words`."""
    deaths: list[str] = []
    real_run = SshWpCli.run

    def run_then_die(self: SshWpCli, argv: Any) -> Any:
        result = real_run(self, argv)
        if not deaths and tuple(argv[: len(words)]) == words:
            deaths.append(" ".join(words))
            raise LambdaDiedError
        return result

    monkeypatch.setattr(SshWpCli, "run", run_then_die)
    return deaths


def die_after(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, when: Callable[..., bool]) -> list[str]:
    """The function dies right after `owner.name` returned, the first time `when(args, kwargs)` holds."""
    deaths: list[str] = []
    real = getattr(owner, name)

    def call_then_die(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        if not deaths and when(*args, **kwargs):
            deaths.append(name)
            raise LambdaDiedError
        return result

    monkeypatch.setattr(owner, name, call_then_die)
    return deaths


def kill_publish(monkeypatch: pytest.MonkeyPatch, step: str) -> list[str]:
    if step == "after the post is created":
        return die_after_command(monkeypatch, "post", "create")
    if step == "after the post is published":
        return die_after_command(monkeypatch, "post", "update")
    return die_after(  # after the job's result is stored, before its event
        monkeypatch, ArticleJobStore, "transition", lambda *a, **k: k.get("to_status") == "Completed"
    )


# -- articles ------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "step", ["after the post is created", "after the post is published", "after the result is stored"]
)
def test_a_publish_killed_midway_is_finished_by_its_retry_and_a_resend_answers_it(
    serverless: ServerlessStack, media_server: MediaServer, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    stack = serverless
    monkeypatch.setenv("WP_AGENT_MEDIA_TEST_HOSTS", media_server.host_entry)
    article = {**ARTICLE, "featuredImageUrl": media_server.url("/img/ai.jpg")}
    deaths = kill_publish(monkeypatch, step)

    status, accepted = stack.api("POST", "/v1/articles", body=article, headers=KEY)
    assert status == 202, accepted
    job = wait_for_article(stack, accepted["articleId"])
    assert deaths, "the function was not killed"
    assert job["status"] == "Completed", job
    post_id = job["result"]["data"]["postId"]
    assert list(posts_titled(stack)) == [post_id]
    assert stack.site.status_of(post_id) == "publish"
    assert len(attachments_of(stack, post_id)) == 1  # the featured image once
    assert terms_of(stack, post_id, "category") == ["lost-answers"]
    assert terms_of(stack, post_id, "post_tag") == ["再送"]
    assert detail_types(stack, 1) == ["Article Published"]
    assert [name for name, _ in stack.dispatcher.calls].count("publish_article") == 2  # the retry

    # The backend resends: the same article, nothing published again — with the stored answer,
    # and after it expired, found by the key.
    status, again = stack.api("POST", "/v1/articles", body=article, headers=KEY)
    assert (status, again["articleId"]) == (202, accepted["articleId"])
    forget_idempotency_records()
    status, again = stack.api("POST", "/v1/articles", body=article, headers=KEY)
    assert (status, again["articleId"], again["status"]) == (202, accepted["articleId"], "Completed")
    status, other = stack.api("POST", "/v1/articles", body={**article, "title": "別の記事"}, headers=KEY)
    assert (status, other["error"]["code"]) == (422, "IDEMPOTENCY_KEY_REUSED")
    assert list(posts_titled(stack)) == [post_id]
    assert len(article_executions(stack, accepted["articleId"])) == 1
    assert detail_types(stack, 0) == []


@pytest.mark.now_relative("expires an idempotency record a millisecond before now")
def test_an_api_call_that_died_after_starting_the_job_is_answered_by_the_resend(
    serverless: ServerlessStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = serverless
    deaths = die_after(monkeypatch, RunWorkflow, "start_article", lambda *a, **k: True)
    with pytest.raises(LambdaDiedError):
        stack.api("POST", "/v1/articles", body=ARTICLE, headers=KEY)
    assert deaths == ["start_article"]
    status, body = stack.api("POST", "/v1/articles", body=ARTICLE, headers=KEY)
    assert (status, body["error"]["code"]) == (409, "REQUEST_IN_PROGRESS")  # until its time is up
    expire_in_progress_records()
    status, accepted = stack.api("POST", "/v1/articles", body=ARTICLE, headers=KEY)
    assert status == 202, accepted
    job = wait_for_article(stack, accepted["articleId"])
    assert job["status"] == "Completed", job
    assert list(posts_titled(stack)) == [job["result"]["data"]["postId"]]
    assert len(article_executions(stack, accepted["articleId"])) == 1
    assert detail_types(stack, 1) == ["Article Published"]


@pytest.mark.now_relative("expires an idempotency record a millisecond before now")
def test_two_attempts_alive_at_once_make_one_article(
    serverless: ServerlessStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The in-progress record expires while the first attempt still runs (a function past its
    configured time, clocks that disagree): the resend runs beside it, and both answer the same job."""
    stack = serverless
    paused, release = Event(), Event()
    real_start = RunWorkflow.start_article

    def first_one_pauses(self: RunWorkflow, article_id: str, execution: str) -> str:
        if not paused.is_set():
            paused.set()
            assert release.wait(60)
        return real_start(self, article_id, execution)

    monkeypatch.setattr(RunWorkflow, "start_article", first_one_pauses)
    with ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(stack.api, "POST", "/v1/articles", body=ARTICLE, headers=KEY)
        assert paused.wait(60)
        expire_in_progress_records()
        status, second = stack.api("POST", "/v1/articles", body=ARTICLE, headers=KEY)
        assert status == 202, second
        release.set()
        first_status, first_answer = first.result(timeout=60)
    assert first_status == 202, first_answer
    assert first_answer["articleId"] == second["articleId"]
    assert len(stack.dispatcher.functions["api"].started) == 2  # the two ran in containers of their own
    job = wait_for_article(stack, second["articleId"])
    assert job["status"] == "Completed", job
    assert list(posts_titled(stack)) == [job["result"]["data"]["postId"]]
    assert len(article_executions(stack, second["articleId"])) == 1
    assert detail_types(stack, 1) == ["Article Published"]


# -- schedules -----------------------------------------------------------------------------------


def scheduled(stack: ServerlessStack) -> list[str]:
    listed = boto3.client("scheduler", region_name=REGION).list_schedules(GroupName="wp-agent")["Schedules"]
    return sorted(s["Name"] for s in listed)


def kill_schedule_creation(monkeypatch: pytest.MonkeyPatch, step: str) -> list[str]:
    if step == "after the registry items are written":
        return die_after(monkeypatch, ScheduleStore, "put", lambda *a, **k: True)
    if step == "after Scheduler created it":
        return die_after(monkeypatch, ScheduleService, "_create_in_scheduler", lambda *a, **k: True)
    return die_after(monkeypatch, IdempotentRequests, "call", lambda *a, **k: True)  # the answer is lost


@pytest.mark.parametrize(
    "step",
    ["after the registry items are written", "after Scheduler created it", "after the answer is stored"],
)
@pytest.mark.now_relative("expires an idempotency record a millisecond before now")
def test_a_schedule_whose_answer_was_lost_exists_once(
    serverless: ServerlessStack, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    stack = serverless
    deaths = kill_schedule_creation(monkeypatch, step)
    with pytest.raises(LambdaDiedError):
        stack.api("POST", "/v1/schedules", body=SCHEDULE, headers=KEY)
    assert deaths
    expire_in_progress_records()
    status, created = stack.api("POST", "/v1/schedules", body=SCHEDULE, headers=KEY)
    assert status == 201, created
    assert scheduled(stack) == [created["scheduleId"]]
    status, listed = stack.api("GET", "/v1/schedules")
    assert [s["scheduleId"] for s in listed["schedules"]] == [created["scheduleId"]]

    forget_idempotency_records()  # an hour later: found by the key
    status, again = stack.api("POST", "/v1/schedules", body=SCHEDULE, headers=KEY)
    assert (status, again["scheduleId"]) == (201, created["scheduleId"])
    status, other = stack.api("POST", "/v1/schedules", body={**SCHEDULE, "name": "別の予定"}, headers=KEY)
    assert (status, other["error"]["code"]) == (422, "IDEMPOTENCY_KEY_REUSED")
    assert scheduled(stack) == [created["scheduleId"]]
    status, listed = stack.api("GET", "/v1/schedules")
    assert len(listed["schedules"]) == 1
