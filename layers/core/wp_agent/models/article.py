"""Spec §4.4 publishArticle interface (camelCase JSON)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo

from pydantic import Field, ValidationInfo, field_validator

from wp_agent.models.base import CamelModel, RequestModel

DEFAULT_PUBLISH_TIMEZONE = ZoneInfo("Asia/Tokyo")
MAX_CONTENT_CHARS = 1_000_000
_META_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]{0,99}$")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _clean_label(value: str) -> str:
    stripped = value.strip()
    if not stripped:
        raise ValueError("must not be empty")
    if _CONTROL.search(stripped) or "\n" in stripped:
        raise ValueError("must not contain control characters or newlines")
    return stripped


def parse_publish_date(value: str) -> datetime:
    """ISO 8601; a value without an offset is taken as Asia/Tokyo."""
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=DEFAULT_PUBLISH_TIMEZONE)
    return parsed


class PublishArticleInput(RequestModel):
    title: str = Field(min_length=1, max_length=500)
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    categories: list[str] | None = Field(default=None, max_length=50)
    tags: list[str] | None = Field(default=None, max_length=100)
    status: Literal["draft", "publish", "future"]
    publish_date: str | None = Field(default=None, validate_default=True)
    featured_image_url: str | None = Field(default=None, max_length=2_048)
    meta: dict[str, str | None] | None = None
    site_url: str | None = Field(default=None, max_length=2_048)

    @field_validator("title")
    @classmethod
    def _title(cls, value: str) -> str:
        return _clean_label(value)

    @field_validator("content")
    @classmethod
    def _content(cls, value: str) -> str:
        if "\x00" in value:
            raise ValueError("must not contain NUL characters")
        return value

    @field_validator("categories", "tags")
    @classmethod
    def _labels(cls, values: list[str] | None) -> list[str] | None:
        if values is None:
            return None
        cleaned = [_clean_label(v) for v in values]
        if any(len(v) > 200 for v in cleaned):
            raise ValueError("each entry must be at most 200 characters")
        return list(dict.fromkeys(cleaned))

    @field_validator("publish_date")
    @classmethod
    def _date(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            if info.data.get("status") == "future":  # named on the field, so errors point at it
                raise ValueError("publishDate is required when status is 'future'")
            return None
        try:
            parse_publish_date(value)
        except ValueError as exc:
            raise ValueError(
                "publishDate must be an ISO 8601 date-time, e.g. 2026-11-23T09:00:00+09:00"
            ) from exc
        return value

    @field_validator("featured_image_url", "site_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[^\s/?#]+", value):
            raise ValueError("must be an http:// or https:// URL")
        return value

    @field_validator("meta")
    @classmethod
    def _meta(cls, value: dict[str, str | None] | None) -> dict[str, str | None] | None:
        if value is None:
            return None
        if len(value) > 50:
            raise ValueError("at most 50 meta entries")
        for key, item in value.items():
            if not _META_KEY.match(key):
                raise ValueError(f"meta key {key!r} must be letters, digits, '_' or '-' (max 100)")
            if item is not None and (len(item) > 10_000 or "\x00" in item):
                raise ValueError(f"meta value for {key!r} is too long or contains NUL")
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
