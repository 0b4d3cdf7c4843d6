"""Spec §4.4 publishArticle interface (camelCase JSON)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo

from pydantic import AfterValidator, ConfigDict, Field, ValidationInfo, field_validator
from pydantic.config import JsonDict

from wp_agent.models import field_rules
from wp_agent.models.base import CamelModel, RequestModel

DEFAULT_PUBLISH_TIMEZONE = ZoneInfo("Asia/Tokyo")
MAX_CONTENT_CHARS = 1_000_000
MAX_META_ENTRIES = 50

# A label (title, category, tag) is one line of visible text; surrounding white space is dropped.
Label = Annotated[str, Field(pattern=field_rules.LABEL), AfterValidator(str.strip)]
MetaKey = Annotated[str, Field(pattern=field_rules.META_KEY)]
MetaValue = Annotated[str, Field(max_length=10_000, pattern=field_rules.NO_NUL)]
# status "future" needs a publishDate; stated for the OpenAPI document (a validator enforces it)
_FUTURE_NEEDS_A_DATE: JsonDict = {
    "anyOf": [
        {"properties": {"status": {"enum": ["draft", "publish"]}}},
        {"required": ["publishDate"], "properties": {"publishDate": {"type": "string"}}},
    ]
}


def _only_the_keys_it_names(schema: dict[str, Any]) -> None:
    """A key that does not follow META_KEY is refused, so the document says no other keys."""
    for branch in schema.get("anyOf", [schema]):
        if branch.get("type") == "object":
            branch["additionalProperties"] = False


def parse_publish_date(value: str) -> datetime:
    """ISO 8601; a value without an offset is taken as Asia/Tokyo."""
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=DEFAULT_PUBLISH_TIMEZONE)
    return parsed


class PublishArticleInput(RequestModel):
    model_config = ConfigDict(json_schema_extra=_FUTURE_NEEDS_A_DATE)
    title: Label = Field(max_length=500)
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS, pattern=field_rules.NO_NUL)
    categories: list[Annotated[Label, Field(max_length=200)]] | None = Field(default=None, max_length=50)
    tags: list[Annotated[Label, Field(max_length=200)]] | None = Field(default=None, max_length=100)
    status: Literal["draft", "publish", "future"]
    publish_date: str | None = Field(default=None, validate_default=True, pattern=field_rules.LOCAL_DATETIME)
    featured_image_url: str | None = Field(default=None, max_length=2_048, pattern=field_rules.HTTP_URL)
    meta: dict[MetaKey, MetaValue | None] | None = Field(
        default=None, max_length=MAX_META_ENTRIES, json_schema_extra=_only_the_keys_it_names
    )
    site_url: str | None = Field(default=None, max_length=2_048, pattern=field_rules.HTTP_URL)

    @field_validator("categories", "tags")
    @classmethod
    def _each_once(cls, values: list[str] | None) -> list[str] | None:
        return None if values is None else list(dict.fromkeys(values))

    @field_validator("publish_date")
    @classmethod
    def _date(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.data.get("status") == "future":  # named on the field, so errors point at it
            raise ValueError("publishDate is required when status is 'future'")
        return value

    def publish_datetime(self) -> datetime | None:
        return parse_publish_date(self.publish_date) if self.publish_date else None


class PublishedArticle(CamelModel):
    post_id: int
    post_url: str
    edit_url: str


class PublishArticleError(CamelModel):
    code: str
    message: str


class PublishArticleOutput(CamelModel):
    success: bool
    data: PublishedArticle | None = None
    error: PublishArticleError | None = None
