"""Articles (spec §4.4 publishArticle): a deterministic WP-CLI sequence, no model; a job to poll."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from wp_agent.http_api.routing import (
    ArticleId,
    KeyHeader,
    UserHeader,
    answers,
    idempotent,
    json_response,
    request_runtime,
)
from wp_agent.models.api import ArticleAccepted, ArticleJobView, ArticlePublishRequest
from wp_agent.service.api_identity import user_id_from
from wp_agent.service.articles import ArticleService

router = APIGatewayRouter()  # type: ignore[no-untyped-call]


@router.post(
    "/v1/articles",
    operation_id="publishArticle",
    summary="Publish an article on a target (a job: poll getArticle for its result)",
    responses=answers(202, "publish job accepted", ArticleAccepted),
)
def publish_article(
    body: Annotated[ArticlePublishRequest, Body()], user: UserHeader, idempotency_key: KeyHeader = None
) -> Response[str]:
    caller = user_id_from(user)
    service = ArticleService(request_runtime())
    return idempotent(
        router,
        "articles",
        caller,
        idempotency_key,
        lambda: json_response(202, service.submit(caller, body, idempotency_key=idempotency_key)),
    )


@router.get(
    "/v1/articles/<article_id>",
    operation_id="getArticle",
    summary="Read a publish job and its PublishArticleOutput",
    responses=answers(200, "publish job and its PublishArticleOutput", ArticleJobView),
)
def get_article(article_id: ArticleId, user: UserHeader) -> Response[str]:
    return json_response(200, ArticleService(request_runtime()).view(user_id_from(user), article_id))
