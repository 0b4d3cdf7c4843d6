"""publishArticle jobs in the sessions table (pk ARTICLE#<id>, sk JOB): the request, its state and
the PublishArticleOutput. State changes are conditional, so a job runs at most once."""

from __future__ import annotations

import json
import time
import zlib
from typing import Any

from wp_agent.adapters.aws.clients import resource
from wp_agent.errors import ArticleTooLargeError
from wp_agent.models.agent_io import utc_now_iso
from wp_agent.models.api import ArticleJobView, ArticlePublishRequest
from wp_agent.models.article import PublishArticleOutput

JOB_SK = "JOB"
# DynamoDB items stop at 400 KB; the rest of the item (ids, status, result) needs far less than 50 KB.
MAX_PACKED_REQUEST_BYTES = 350_000


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

    def create(self, article_id: str, user_id: str, request: ArticlePublishRequest) -> ArticleJobView:
        packed = zlib.compress(request.model_dump_json(by_alias=True).encode("utf-8"), 9)
        if len(packed) > MAX_PACKED_REQUEST_BYTES:
            raise ArticleTooLargeError(f"article request packs to {len(packed)} bytes")
        now = utc_now_iso()
        self._table.put_item(
            Item={
                **self._key(article_id),
                "user_id": user_id,
                "target_id": request.target_id,
                "status": "Queued",
                # The article (≤1 MB of HTML) compressed: HTML packs well, unlike embedded binary data.
                "request": packed,
                "created_at": now,
                "updated_at": now,
                "expires_at": int(time.time()) + self._ttl_seconds,
            },
            ConditionExpression="attribute_not_exists(pk)",
        )
        return ArticleJobView(
            article_id=article_id,
            target_id=request.target_id,
            status="Queued",
            created_at=now,
            updated_at=now,
        )

    def get(self, article_id: str) -> tuple[str, ArticleJobView, ArticlePublishRequest] | None:
        item = self._table.get_item(Key=self._key(article_id), ConsistentRead=True).get("Item")
        if item is None:
            return None
        result = PublishArticleOutput.model_validate_json(item["result"]) if "result" in item else None
        view = ArticleJobView(
            article_id=article_id, target_id=item["target_id"], status=item["status"], created_at=item["created_at"],
            updated_at=item["updated_at"], result=result,
        )  # fmt: skip
        request = ArticlePublishRequest.model_validate(json.loads(zlib.decompress(bytes(item["request"]))))
        return str(item["user_id"]), view, request

    def transition(
        self, article_id: str, *, from_status: str, to_status: str, result: PublishArticleOutput | None = None
    ) -> bool:
        """Move the job from one status to the next; False when it was not in `from_status`."""
        from botocore.exceptions import ClientError

        values: dict[str, Any] = {":from": from_status, ":to": to_status, ":now": utc_now_iso()}
        update = "SET #s = :to, updated_at = :now"
        if result is not None:
            update += ", #r = :result"
            values[":result"] = result.to_json()
        try:
            self._table.update_item(
                Key=self._key(article_id),
                UpdateExpression=update,
                ConditionExpression="#s = :from",
                ExpressionAttributeNames={"#s": "status", **({"#r": "result"} if result is not None else {})},
                ExpressionAttributeValues=values,
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True
