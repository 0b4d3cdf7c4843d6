"""ArticlePublisher without WordPress: date conversion, term matching, input validation, what is refused
before any command runs, failure texts. The WP-CLI sequence and its cleanup on the real WordPress are
in tests/integration/test_publisher_sequence.py."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.ports import MemoryAuditLog
from wp_agent.cli.main import main
from wp_agent.executors.port import CommandResult
from wp_agent.models.article import PublishArticleInput, PublishArticleOutput, parse_publish_date
from wp_agent.policy import CommandPolicy
from wp_agent.policy.custom_rules import CustomRules
from wp_agent.publishing import (
    ArticlePublisher,
    PublishErrorCode,
    input_problems,
    validation_output,
)
from wp_agent.publishing.outcome import CleanupReport, Resource, failure_output
from wp_agent.publishing.publisher import MAX_COMMAND_BYTES
from wp_agent.publishing.schedule import SiteTimezoneError, post_dates, site_timezone
from wp_agent.publishing.terms import SiteTerm, Taxonomy, WantedTerm, find_term, slug_key, wanted_terms

NOW = datetime(2026, 6, 1, 0, 0, tzinfo=UTC)


# --------------------------------------------------------------------------------- a WpCli that must not run


class NoWordPress:
    """For checks that must refuse before any command: records calls, runs nothing."""

    max_concurrency = 1
    simulated = False

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def run(self, argv: Sequence[str]) -> CommandResult:
        self.calls.append(list(argv))
        raise AssertionError(f"no command may run here: {list(argv)}")

    def close(self) -> None:
        return None


@pytest.fixture
def wp() -> NoWordPress:
    return NoWordPress()


def _publisher(wp: NoWordPress, **kwargs: Any) -> ArticlePublisher:
    kwargs.setdefault("clock", lambda: NOW)
    return ArticlePublisher(wp, kwargs.pop("policy", CommandPolicy()), **kwargs)


def _article(**fields: Any) -> PublishArticleInput:
    values: dict[str, Any] = {"title": "AI活用の始め方", "content": "<p>本文</p>", "status": "draft"}
    values.update(fields)
    return PublishArticleInput.model_validate(values)


def _error_of(output: PublishArticleOutput) -> tuple[str, str]:
    assert output.error is not None, output
    return output.error.code, output.error.message


# --------------------------------------------------------------------------------- dates


@pytest.mark.parametrize(
    ("publish_date", "zone", "offset", "local", "gmt"),
    [
        ("2026-11-23T09:00:00+09:00", "Asia/Tokyo", "", "2026-11-23 09:00:00", "2026-11-23 00:00:00"),
        ("2026-11-23T00:00:00Z", "Asia/Tokyo", "", "2026-11-23 09:00:00", "2026-11-23 00:00:00"),
        # No offset: Asia/Tokyo is assumed, then shown in the site's zone (New York, EST in November).
        ("2026-11-23T09:00:00", "America/New_York", "", "2026-11-22 19:00:00", "2026-11-23 00:00:00"),
        # ... and EDT in July.
        ("2026-07-01T09:00:00+09:00", "America/New_York", "", "2026-06-30 20:00:00", "2026-07-01 00:00:00"),
        ("2026-11-23T09:00:00.987+09:00", "", "5.5", "2026-11-23 05:30:00", "2026-11-23 00:00:00"),
        ("2026-11-23T09:00:00+09:00", "", "-3", "2026-11-22 21:00:00", "2026-11-23 00:00:00"),
        ("2026-11-23T09:00:00+09:00", "", "", "2026-11-23 00:00:00", "2026-11-23 00:00:00"),
        ("2026-11-23T09:00:00+09:00", "UTC", "9", "2026-11-23 00:00:00", "2026-11-23 00:00:00"),
    ],
)
def test_post_dates_in_the_site_time_zone(
    publish_date: str, zone: str, offset: str, local: str, gmt: str
) -> None:
    dates = post_dates(parse_publish_date(publish_date), site_timezone(zone, offset))
    assert (dates.local, dates.gmt) == (local, gmt)


def test_site_timezone_offsets_and_errors() -> None:
    assert site_timezone("", "5.75").utcoffset(None) == timedelta(hours=5, minutes=45)
    assert site_timezone(" ", " -9.5 ").utcoffset(None) == timedelta(hours=-9, minutes=-30)
    for bad_zone, bad_offset in (("Mars/Olympus", ""), ("", "nine"), ("", "15"), ("", "nan")):
        with pytest.raises(SiteTimezoneError):
            site_timezone(bad_zone, bad_offset)
    with pytest.raises(ValueError, match="timezone-aware"):
        post_dates(datetime(2026, 1, 1), UTC)


# --------------------------------------------------------------------------------- terms


def test_term_matching_rules() -> None:
    terms = [
        SiteTerm(3, "WordPress", "wordpress"),
        SiteTerm(13, "AI活用", "ai%e6%b4%bb%e7%94%a8"),
        SiteTerm(10, "生成AI", "generative-ai"),
        SiteTerm(20, "news", "oshirase"),
        SiteTerm(21, "お知らせ", "news"),
    ]

    def found(taxonomy: Taxonomy, label: str) -> int | None:
        term = find_term(WantedTerm(taxonomy, label), terms)
        return term.term_id if term else None

    assert found("category", "wordpress") == 3
    assert found("category", "AI活用") == 13  # percent-encoded slug
    assert found("category", "news") == 21  # categories are slugs first
    assert found("category", "WordPress") == 3
    assert found("category", "ai-katsuyou") is None
    assert found("post_tag", "news") == 20  # tags are names first
    assert found("post_tag", "生成ai") == 10  # case-insensitive, like MySQL's collation
    assert found("post_tag", "generative-ai") == 10
    assert slug_key(" Hello  World ") == "hello-world"
    # Two copies made by publishes at the same time: every caller picks the older, whatever the order.
    copies = [SiteTerm(31, "同時", "same"), SiteTerm(30, "同時", "same"), *terms]
    assert find_term(WantedTerm("post_tag", "同時"), copies) == copies[1]
    assert find_term(WantedTerm("category", "same"), copies) == copies[1]
    assert [t.label for t in wanted_terms("post_tag", ["AI", "ai", "Ai 活用", "ai-活用"])] == [
        "AI",
        "Ai 活用",
    ]


# --------------------------------------------------------------------------------- refused up front


def test_blocked_featured_image_runs_nothing(wp: NoWordPress) -> None:
    audit = MemoryAuditLog()
    output = _publisher(wp, audit=audit).publish(_article(featuredImageUrl="http://127.0.0.1/a.jpg"))
    code, message = _error_of(output)
    assert code == "COMMAND_BLOCKED"
    assert "アイキャッチ画像の取り込みのコマンドがポリシーで拒否されました" in message
    assert message.endswith("サイトには何も作成していません。")
    assert wp.calls == []
    assert [e.type for e in audit.events] == [AuditEventType.COMMAND_BLOCKED]


def test_site_policy_requiring_approval_for_a_step_is_refused(wp: NoWordPress) -> None:
    policy = CommandPolicy(CustomRules.model_validate({"confirm": ["term create"]}))
    output = _publisher(wp, policy=policy).publish(_article(tags=["新しいタグ"]))
    assert _error_of(output)[0] == "CONFIRMATION_REQUIRED"
    assert wp.calls == []


def test_schedule_too_soon_is_a_validation_error(wp: NoWordPress) -> None:
    soon = (NOW + timedelta(seconds=90)).isoformat()
    code, message = _error_of(_publisher(wp).publish(_article(status="future", publishDate=soon)))
    assert code == "VALIDATION_ERROR"
    assert "publishDate（予約公開には現在時刻より2分以上先の日時を指定してください）" in message
    assert wp.calls == []


def test_article_too_large_for_one_command_is_refused(wp: NoWordPress) -> None:
    big = "あ" * (MAX_COMMAND_BYTES // 3)
    code, message = _error_of(_publisher(wp).publish(_article(content=big)))
    assert code == "VALIDATION_ERROR"
    assert message.startswith("入力内容に誤りがあります: content（本文とメタデータが大きすぎます")
    assert wp.calls == []


def test_failure_output_keeps_the_cause_code_only_when_cleanup_was_complete() -> None:
    clean = failure_output(
        PublishErrorCode.SSH_CONNECTION_FAILED,
        "接続できませんでした",
        CleanupReport(removed=[Resource("post", 5)]),
    )
    assert clean.error is not None
    assert (clean.error.code, clean.error.message) == (
        "SSH_CONNECTION_FAILED",
        "接続できませんでした。この処理で作成した 投稿 ID 5 を削除しました。",
    )
    left = failure_output(
        PublishErrorCode.COMMAND_TIMEOUT, "時間切れ", CleanupReport(remaining=[Resource("category", 9, "x")])
    )
    assert left.error is not None
    assert left.error.code == "PARTIAL_FAILURE"
    assert "カテゴリ ID 9（x） は削除できなかったため、サイトに残っています。" in left.error.message


# --------------------------------------------------------------------------------- input validation


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"content": "x", "status": "draft"}, "title（必須項目です）"),
        ({"title": " ", "content": "x", "status": "draft"}, "title（空白以外の文字を含め"),
        (
            {"title": "t", "content": "x", "status": "private"},
            "status（'draft', 'publish' or 'future' のいずれかを指定してください）",
        ),
        (
            {"title": "t", "content": "x", "status": "future"},
            "publishDate（status が future のときは必須です）",
        ),
        (
            {"title": "t", "content": "x", "status": "draft", "publishDate": "来週"},
            "publishDate（ISO 8601形式",
        ),
        (
            {"title": "t", "content": "x", "status": "draft", "featuredImageUrl": "ftp://x/a.jpg"},
            "featuredImageUrl（http://",
        ),
        (
            {"title": "t", "content": "x", "status": "draft", "tags": ["ok", ""]},
            "tags[1]（空白以外の文字を含め",
        ),
        (
            {"title": "t", "content": "x", "status": "draft", "meta": {"bad key": "v"}},
            "meta（キーは英字で始まり",
        ),
        (
            {"title": "t", "content": "x", "status": "draft", "author": "me"},
            "author（定義されていない項目です）",
        ),
        (
            {"title": "t", "content": "x", "status": "draft", "categories": "news"},
            "categories（配列で指定してください）",
        ),
    ],
)
def test_input_problems_name_the_field_in_japanese(document: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValidationError) as caught:
        PublishArticleInput.model_validate(document)
    output = validation_output(input_problems(caught.value))
    code, message = _error_of(output)
    assert code == "VALIDATION_ERROR"
    assert message.startswith("入力内容に誤りがあります: ")
    assert expected in message
    assert message.endswith("サイトには何も作成していません。")


# --------------------------------------------------------------------------------- the CLI


@pytest.fixture
def sandbox_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WP_CLI_MODE", "sandbox")
    monkeypatch.setenv("WP_AGENT_SANDBOX_SITE", str(tmp_path / "sandbox"))
    monkeypatch.setenv("WP_AGENT_AUDIT_FILE", str(tmp_path / "audit.jsonl"))
    monkeypatch.setenv("LOG_LEVEL", "error")
    return tmp_path


@pytest.mark.parametrize(
    ("args", "content", "expected"),
    [
        (
            ["missing.json"],
            None,
            "[VALIDATION_ERROR] 入力内容に誤りがあります: missing.json（ファイルを読み込めません",
        ),
        (["article.json"], "{not json", "article.json（JSONとして解釈できません"),
        (
            ["article.json", "--site-url", "example.test/en/"],
            json.dumps({"title": "t", "content": "c", "status": "draft"}),
            "--site-url（http:// または https:// で始まるURLを指定してください）",
        ),
    ],
)
def test_cli_input_errors_exit_2(
    sandbox_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    content: str | None,
    expected: str,
) -> None:
    monkeypatch.chdir(sandbox_env)
    if content is not None:
        (sandbox_env / "article.json").write_text(content, encoding="utf-8")
    assert main(["publish", *args]) == 2
    captured = capsys.readouterr()
    assert expected in captured.err
    assert captured.out == ""
    assert not (sandbox_env / "audit.jsonl").exists()
