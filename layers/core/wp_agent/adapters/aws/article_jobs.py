"""publishArticle jobs in the sessions table (pk ARTICLE#<id>, sk JOB): the request, its state and
the PublishArticleOutput. State changes are conditional, so a job runs at most once at a time.

A job names the workflow execution that owns it (`execution`): only that execution may run it, so an
execution whose start was reported failed but happened anyway finds the job owned by another and does
nothing. `announced` says whether the backend was told the job's outcome (set after the event went
out), so an attempt that stored the outcome and died before the event still announces it on retry.
`restartable` marks a job whose workflow could not be started: the same request again starts it anew.
"""

from __future__ import annotations

import json
import zlib
from typing import Any, NamedTuple

from wp_agent import clock
from wp_agent.adapters.aws.clients import resource
from wp_agent.errors import ArticleTooLargeError
from wp_agent.models.api import ArticleJobView, ArticlePublishRequest
from wp_agent.models.article import PublishArticleOutput

JOB_SK = "JOB"
# DynamoDB items stop at 400 KB; the rest of the item (ids, status, result) needs far less than 50 KB.
MAX_PACKED_REQUEST_BYTES = 350_000


class ArticleJob(NamedTuple):
    user_id: str
    view: ArticleJobView
    request: ArticlePublishRequest
    execution: str | None  # None: a job stored before executions were named
    announced: bool
    restartable: bool


class ArticleJobStore:
    def __init__(self, table_name: str, *, ttl_days: int = 90) -> None:
        self._table_name = table_name
        self._ttl_seconds = ttl_days * 86_400

    @property
    def _table(self) -> Any:
        return resource("dynamodb").Table(self._table_name)

    @staticmethod
    def _key(article_id: str) -> dict[str, str]:
        return {"pk": f"ARTICLE#{article_id}", "sk": JOB_SK}

    def create(
        self, article_id: str, user_id: str, request: ArticlePublishRequest, *, execution: str
    ) -> bool:
        """Store a Queued job; False (nothing written) when a job with this id exists."""
        from botocore.exceptions import ClientError

        packed = zlib.compress(request.model_dump_json(by_alias=True).encode("utf-8"), 9)
        if len(packed) > MAX_PACKED_REQUEST_BYTES:
            raise ArticleTooLargeError(f"article request packs to {len(packed)} bytes")
        now = clock.now_iso()
        try:
            self._table.put_item(
                Item={
                    **self._key(article_id),
                    "user_id": user_id,
                    "target_id": request.target_id,
                    "status": "Queued",
                    # The article (≤1 MB of HTML) compressed: HTML packs well, unlike embedded binary data.
                    "request": packed,
                    "execution": execution,
                    "created_at": now,
                    "updated_at": now,
                    "expires_at": clock.epoch_seconds() + self._ttl_seconds,
                },
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def get(self, article_id: str) -> ArticleJob | None:
        item = self._table.get_item(Key=self._key(article_id), ConsistentRead=True).get("Item")
        if item is None:
            return None
        result = PublishArticleOutput.model_validate_json(item["result"]) if "result" in item else None
        view = ArticleJobView(
            article_id=article_id, target_id=item["target_id"], status=item["status"], created_at=item["created_at"],
            updated_at=item["updated_at"], result=result,
        )  # fmt: skip
        request = ArticlePublishRequest.model_validate(json.loads(zlib.decompress(bytes(item["request"]))))
        return ArticleJob(
            user_id=str(item["user_id"]),
            view=view,
            request=request,
            execution=str(item["execution"]) if "execution" in item else None,
            # Jobs stored before the flag existed were announced in the same step as their result.
            announced=bool(item.get("announced", True)),
            restartable=bool(item.get("restartable", False)),
        )

    def transition(
        self,
        article_id: str,
        *,
        from_status: str,
        to_status: str,
        result: PublishArticleOutput | None = None,
        execution: str | None = None,
        restartable: bool = False,
    ) -> bool:
        """Move the job from one status to the next (only while `execution` owns it, when given);
        False when it was not in `from_status`. A stored result is not announced yet."""
        from botocore.exceptions import ClientError

        values: dict[str, Any] = {":from": from_status, ":to": to_status, ":now": clock.now_iso()}
        names = {"#s": "status"}
        update = "SET #s = :to, updated_at = :now"
        condition = "#s = :from"
        if result is not None:
            update += ", #r = :result, announced = :announced"
            names["#r"] = "result"
            values[":result"] = result.to_json()
            values[":announced"] = restartable  # a start that failed is answered, not announced
        if restartable:
            update += ", restartable = :restartable"
            values[":restartable"] = True
        if execution is not None:
            condition += " AND (attribute_not_exists(execution) OR execution = :execution)"
            values[":execution"] = execution
        try:
            self._table.update_item(
                Key=self._key(article_id),
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def requeue(self, article_id: str, *, execution: str) -> bool:
        """A job whose workflow could not be started: Queued again, owned by a new execution."""
        from botocore.exceptions import ClientError

        try:
            self._table.update_item(
                Key=self._key(article_id),
                UpdateExpression="SET #s = :queued, execution = :execution, updated_at = :now "
                "REMOVE #r, restartable, announced",
                ConditionExpression="#s = :failed AND restartable = :true",
                ExpressionAttributeNames={"#s": "status", "#r": "result"},
                ExpressionAttributeValues={
                    ":queued": "Queued", ":failed": "Failed", ":true": True,
                    ":execution": execution, ":now": clock.now_iso(),
                },
            )  # fmt: skip
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def mark_announced(self, article_id: str) -> None:
        self._table.update_item(
            Key=self._key(article_id),
            UpdateExpression="SET announced = :true",
            ExpressionAttributeValues={":true": True},
        )
