"""The rules the API document publishes (models/field_rules.py and the models' schema constructs):
every engine that reads them reads them alike, and they say exactly what the code enforces."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Annotated, Any

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from wp_agent.models import field_rules
from wp_agent.models.agent_io import MultisiteOptions
from wp_agent.models.article import PublishArticleInput, parse_publish_date
from wp_agent.scheduling.expressions import parse_expression, validate_schedule

RULES = sorted(field_rules.REASONS_JA)
NOW = datetime(2026, 6, 1, tzinfo=UTC)
ABSENT = object()


def pydantic_accepts(pattern: str, value: str) -> bool:
    try:
        TypeAdapter(Annotated[str, Field(pattern=pattern)]).validate_python(value)
    except ValidationError:
        return False
    return True


def model_accepts(model: type[BaseModel], document: dict[str, Any]) -> bool:
    try:
        model.model_validate(document)
    except ValidationError:
        return False
    return True


def schema_accepts(schema: dict[str, Any], instance: Any) -> bool:
    return bool(jsonschema_rs.validator_for(schema).is_valid(instance))


@pytest.mark.parametrize("pattern", RULES, ids=range(len(RULES)))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_what_a_generator_makes_from_a_rule_every_engine_accepts(pattern: str, data: st.DataObject) -> None:
    # schemathesis generates with Python's `re`; pydantic checks with Rust's `regex`; JSON Schema
    # validators read ECMA-262. A value one of them makes, the others must take.
    value = data.draw(st.from_regex(pattern, fullmatch=True))
    assert pydantic_accepts(pattern, value), value
    assert schema_accepts({"type": "string", "pattern": pattern}, value), value
    assert field_rules.matches(pattern, value), value


@pytest.mark.parametrize(
    ("pattern", "value", "accepted"),
    [
        (field_rules.TARGET_ID, "site-a\n", False),  # Python's `$` would take a trailing newline
        (field_rules.SESSION_ID, "ses_abcdef12\n", False),
        (field_rules.VISIBLE_TEXT, " \t\n", False),
        (field_rules.VISIBLE_TEXT, "投稿を\n一覧して", True),
        (field_rules.NO_NUL, "a\x00b", False),
        (field_rules.LABEL, "秋\tの新メニュー", False),
        (field_rules.HTTP_URL, "https://example.com/a b", True),
        (field_rules.HTTP_URL, "https:///path", False),
        (field_rules.LOCAL_DATETIME, "2024-02-29T09:00", True),
        (field_rules.LOCAL_DATETIME, "2023-02-29T09:00", False),
        (field_rules.LOCAL_DATETIME, "1900-02-29T09:00", False),
        (field_rules.LOCAL_DATETIME, "2000-02-29T09:00:00.5+09:00", True),
        (field_rules.LOCAL_DATETIME, "2026-04-31T09:00Z", False),
        (field_rules.SCHEDULE_EXPRESSION, "rate(14 minutes)", False),
        (field_rules.SCHEDULE_EXPRESSION, "rate(15 minutes)", True),
        (field_rules.SCHEDULE_EXPRESSION, "rate(10001 days)", False),
        (field_rules.SCHEDULE_EXPRESSION, " cron(0 9 ? * MON *) ", True),
    ],
)
def test_engines_agree_on_the_edges(pattern: str, value: str, accepted: bool) -> None:
    assert pydantic_accepts(pattern, value) is accepted
    assert schema_accepts({"type": "string", "pattern": pattern}, value) is accepted
    assert field_rules.matches(pattern, value) is accepted


@settings(max_examples=200, deadline=None)
@given(st.from_regex(field_rules.LOCAL_DATETIME, fullmatch=True))
def test_every_date_time_the_rule_allows_is_a_real_one(value: str) -> None:
    parse_publish_date(value)


@settings(max_examples=200, deadline=None)
@given(st.from_regex(field_rules.SCHEDULE_EXPRESSION, fullmatch=True))
def test_every_rate_and_at_the_rule_allows_parses_and_a_rate_is_never_too_frequent(value: str) -> None:
    form = value.strip().split("(", 1)[0]
    if form == "cron":
        return  # cron field values are checked by the parser (INVALID_SCHEDULE_EXPRESSION, documented)
    parsed = parse_expression(value)
    if form == "rate":
        validate_schedule(parsed.expression, now=NOW)


SITE_SELECTORS: list[dict[str, Any]] = [
    {name: value for name, value in choice if value is not ABSENT}
    for choice in itertools.product(
        [("siteId", 2), ("siteId", None), ("siteId", ABSENT)],
        [("siteUrl", "https://example.test/en/"), ("siteUrl", None), ("siteUrl", ABSENT)],
        [("networkWide", True), ("networkWide", False), ("networkWide", ABSENT)],
    )
]


@pytest.mark.parametrize("options", SITE_SELECTORS, ids=str)
def test_the_documented_site_selector_rule_is_the_enforced_one(options: dict[str, Any]) -> None:
    enforced = model_accepts(MultisiteOptions, options)
    assert schema_accepts(MultisiteOptions.model_json_schema(by_alias=True), options) is enforced


@pytest.mark.parametrize(
    "extra",
    [
        {"status": "draft"},
        {"status": "publish", "publishDate": None},
        {"status": "future"},
        {"status": "future", "publishDate": None},
        {"status": "future", "publishDate": "2030-01-01T09:00:00+09:00"},
    ],
    ids=str,
)
def test_the_documented_publish_date_rule_is_the_enforced_one(extra: dict[str, Any]) -> None:
    document = {"title": "t", "content": "c", **extra}
    enforced = model_accepts(PublishArticleInput, document)
    assert schema_accepts(PublishArticleInput.model_json_schema(by_alias=True), document) is enforced


def test_a_whole_number_written_with_a_fraction_is_that_integer_and_nothing_else_is() -> None:
    schema = MultisiteOptions.model_json_schema(by_alias=True)
    assert MultisiteOptions.model_validate({"siteId": 2.0}).site_id == 2  # JSON Schema's "integer" too
    assert schema_accepts(schema, {"siteId": 2.0})
    for refused in (2.5, True, "2"):
        with pytest.raises(ValidationError):
            MultisiteOptions.model_validate({"siteId": refused})
        assert not schema_accepts(schema, {"siteId": refused})
