"""Spec §4.1/§4.2/§4.4 models: camelCase JSON exactly as the spec's TypeScript, field-named errors."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.models.agent_io import (
    AgentInput,
    AgentMetadata,
    AgentOutput,
    ExecutedCommand,
    PartialSuccess,
    PartialSuccessDetail,
    error_info,
)
from wp_agent.models.article import PublishArticleInput, PublishArticleOutput, PublishedArticle


def test_agent_input_reads_camel_case() -> None:
    parsed = AgentInput.model_validate(
        {
            "message": "下書きの投稿を一覧で見せて",
            "multisite": {"siteId": 2},
            "conversationHistory": [{"role": "user", "content": "こんにちは"}],
            "maxIterations": 5,
            "skipDestructiveConfirmation": False,
        }
    )
    assert parsed.multisite is not None
    assert parsed.multisite.site_id == 2
    assert parsed.max_iterations == 5
    assert parsed.to_json_dict()["conversationHistory"][0]["role"] == "user"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "message"),
        ({"message": ""}, "message"),
        ({"message": "   "}, "message"),
        ({"message": "x" * 8001}, "message"),
        ({"message": "ok", "maxIterations": 0}, "maxIterations"),
        ({"message": "ok", "maxIterations": "ten"}, "maxIterations"),
        ({"message": "ok", "multisite": {"siteId": -1}}, "siteId"),
        ({"message": "ok", "multisite": {"siteUrl": "ftp://x"}}, "siteUrl"),
        ({"message": "ok", "conversationHistory": [{"role": "system", "content": "x"}]}, "role"),
        ({"message": "ok", "unexpected": 1}, "unexpected"),
    ],
)
def test_agent_input_errors_name_the_field(payload: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as excinfo:
        AgentInput.model_validate(payload)
    locations = [".".join(str(p) for p in e["loc"]) for e in excinfo.value.errors()]
    assert any(field in loc for loc in locations), locations


def test_agent_output_serialises_exactly_the_spec_shape() -> None:
    output = AgentOutput(
        success=False,
        response="3件中2件の記事を公開しました。1件はエラーにより失敗しました。",
        executed_commands=[
            ExecutedCommand(
                command="post update 45 --post_status=publish",
                success=True,
                output="Success: Updated post 45.",
                executed_at="2026-01-30T12:34:56.789Z",
                duration_ms=1234,
            )
        ],
        partial_success=PartialSuccess(
            succeeded=2,
            failed=1,
            details=[
                PartialSuccessDetail(
                    operation="post update 47 --post_status=publish", success=False, error="Post not found"
                )
            ],
        ),
        error=error_info(AgentErrorCode.PARTIAL_FAILURE),
        metadata=AgentMetadata(total_iterations=2, total_commands_executed=3, execution_time_ms=4567),
    )
    doc = json.loads(output.to_json())
    assert set(doc) == {"success", "response", "executedCommands", "partialSuccess", "error", "metadata"}
    assert set(doc["executedCommands"][0]) == {"command", "success", "output", "executedAt", "durationMs"}
    assert set(doc["partialSuccess"]) == {"succeeded", "failed", "details"}
    assert doc["error"] == {"code": "PARTIAL_FAILURE", "message": "一部の操作が失敗しました"}
    assert set(doc["metadata"]) == {"totalIterations", "totalCommandsExecuted", "executionTimeMs"}


def test_failure_output_carries_code_message_details() -> None:
    error = WpAgentError(
        AgentErrorCode.COMMAND_BLOCKED, details={"command": "db drop", "blockedPattern": "db drop"}
    )
    doc = AgentOutput.failure(error).to_json_dict()
    assert doc == {
        "success": False,
        "response": "",
        "executedCommands": [],
        "error": {
            "code": "COMMAND_BLOCKED",
            "message": "セキュリティ上の理由でこのコマンドは実行できません",
            "details": {"command": "db drop", "blockedPattern": "db drop"},
        },
    }


def test_the_readme_lists_every_run_error_code() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    listed = readme.split("Run error codes", 1)[1].split("\n\n", 1)[0]
    assert [c.value for c in AgentErrorCode if f"`{c.value}`" not in listed] == []


def test_every_spec_error_code_exists() -> None:
    assert {c.value for c in AgentErrorCode} == {
        "SSH_CONNECTION_FAILED",
        "COMMAND_TIMEOUT",
        "COMMAND_BLOCKED",
        "API_ERROR",
        "API_RATE_LIMITED",
        "MAX_ITERATIONS_EXCEEDED",
        "PARTIAL_FAILURE",
        "CONFIRMATION_REQUIRED",
        # Added after the spec (#42): a run ended by the user, and an approval nobody gave in time.
        "CANCELLED",
        "APPROVAL_EXPIRED",
        "UNKNOWN_ERROR",
    }


def test_publish_article_input_round_trip() -> None:
    payload = {
        "title": "AI活用入門",
        "content": "<p>本文</p>",
        "categories": ["ai-katsuyou"],
        "tags": ["AI", "入門"],
        "status": "future",
        "publishDate": "2026-11-23T09:00:00",
        "featuredImageUrl": "https://example.com/a.jpg",
        "meta": {"description": "説明"},
        "siteUrl": "https://example.com/tokyo",
    }
    parsed = PublishArticleInput.model_validate(payload)
    when = parsed.publish_datetime()
    assert when is not None
    assert when.utcoffset() == timedelta(hours=9)
    assert parsed.to_json_dict() == payload


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"content": "x", "status": "draft"}, "title"),
        ({"title": "t", "content": "x", "status": "pending"}, "status"),
        ({"title": "t", "content": "x", "status": "future"}, "publishDate"),
        ({"title": "t", "content": "x", "status": "future", "publishDate": "tomorrow 9am"}, "publishDate"),
        (
            {"title": "t", "content": "x", "status": "draft", "featuredImageUrl": "file:///etc/passwd"},
            "featuredImageUrl",
        ),
        ({"title": "t", "content": "x", "status": "draft", "meta": {"bad key!": "v"}}, "meta"),
        ({"title": "t", "content": "x", "status": "draft", "categories": ["ok", ""]}, "categories"),
        ({"title": "t\nx", "content": "x", "status": "draft"}, "title"),
    ],
)
def test_publish_article_errors_name_the_field(payload: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as excinfo:
        PublishArticleInput.model_validate(payload)
    text = json.dumps([e["loc"] for e in excinfo.value.errors()]) + str(excinfo.value)
    assert field in text


def test_publish_article_output_shape() -> None:
    out = PublishArticleOutput(
        success=True,
        data=PublishedArticle(
            post_id=12, post_url="https://e/x", edit_url="https://e/wp-admin/post.php?post=12&action=edit"
        ),
    )
    assert out.to_json_dict() == {
        "success": True,
        "data": {
            "postId": 12,
            "postUrl": "https://e/x",
            "editUrl": "https://e/wp-admin/post.php?post=12&action=edit",
        },
    }


def test_the_readme_article_example_is_a_valid_publish_article_input() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    example = re.search(r"An `article.json`:\n\n```json\n(.*?)```", readme, re.S)
    assert example is not None
    article = PublishArticleInput.model_validate(json.loads(example.group(1)))
    assert article.status == "future"


def test_one_run_status_vocabulary_is_documented_where_it_is_defined() -> None:
    from wp_agent.models import run_status

    doc = run_status.__doc__ or ""
    for status in run_status.RunStatus:
        assert status.value[:1].islower(), status  # camelCase, as the API's fields
        assert "_" not in status.value, status
        assert f"\n    {status.value} " in doc, status
    ended = run_status.ended_status
    assert ended(None, declined=False) is run_status.RunStatus.COMPLETED
    assert ended(None, declined=True) is run_status.RunStatus.DECLINED
    assert ended("PARTIAL_FAILURE", declined=True) is run_status.RunStatus.PARTIAL_FAILURE
    assert ended("CANCELLED", declined=False) is run_status.RunStatus.CANCELLED
    assert ended("APPROVAL_EXPIRED", declined=False) is run_status.RunStatus.EXPIRED
    assert ended("SSH_CONNECTION_FAILED", declined=False) is run_status.RunStatus.FAILED


def test_the_api_and_the_events_carry_the_same_run_statuses() -> None:
    from wp_agent.http_api.app import openapi_document
    from wp_agent.models.events import committed_schema
    from wp_agent.models.run_status import RunStatus

    values = {s.value for s in RunStatus}
    schemas = openapi_document()["components"]["schemas"]
    assert set(schemas["RunStatus"]["enum"]) == values
    for name in ("SessionView", "RunView", "AgentOutput"):
        assert "RunStatus" in json.dumps(schemas[name]["properties"]["runStatus"]), name
    for detail_type in ("Run Completed", "Run Failed", "Approval Requested"):
        text = json.dumps(committed_schema(detail_type))
        assert [v for v in sorted(values) if f'"{v}"' not in text] == [], detail_type


def test_every_audit_field_has_its_place_in_the_activity_view() -> None:
    """The activity route shows every stored record: a field added to the audit record and not to the
    view would make the route fail (500) on the first record that carries it."""
    from wp_agent.agent.audit_events import AuditEvent
    from wp_agent.models.api import ActivityRecord

    assert set(AuditEvent.model_fields) <= set(ActivityRecord.model_fields)
