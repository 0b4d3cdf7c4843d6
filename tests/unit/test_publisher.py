"""ArticlePublisher: date conversion, term matching, the exact WP-CLI sequence and its cleanup,
with a recording WpCli over the in-process simulator (failures injected per command)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests.fakes.simulator_fixtures import SimSite
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.ports import MemoryAuditLog
from wp_agent.cli.main import main
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.port import CommandResult
from wp_agent.models.article import PublishArticleInput, PublishArticleOutput, parse_publish_date
from wp_agent.policy import CommandPolicy
from wp_agent.policy.custom_rules import CustomRules
from wp_agent.publishing import (
    MARKER_META_KEY,
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

# --------------------------------------------------------------------------------- the fake


@dataclass
class Rule:
    """What to do instead of (or after) running a command whose words start with `prefix`."""

    prefix: tuple[str, ...]
    error: AgentErrorCode | None = None  # raise WpAgentError with this code
    result: CommandResult | None = None  # answer this instead of running
    run_first: bool = False  # run the command, then fail (the outcome is unknown to the caller)
    times: int | None = 1


@dataclass
class RecordingWpCli:
    """A WpCli over the in-process simulator that records every argv and can fail on cue."""

    site: SimSite
    env: dict[str, str] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    calls: list[list[str]] = field(default_factory=list)

    max_concurrency = 1
    simulated = True

    def fail(self, *prefix: str, **kwargs: Any) -> None:
        self.rules.append(Rule(tuple(prefix), **kwargs))

    def run(self, argv: Sequence[str]) -> CommandResult:
        words = list(argv)
        self.calls.append(words)
        rule = next((r for r in self.rules if tuple(words[: len(r.prefix)]) == r.prefix), None)
        if rule is not None and rule.times is not None:
            rule.times -= 1
            if rule.times == 0:
                self.rules.remove(rule)
        if rule is not None and rule.result is not None and not rule.run_first:
            return rule.result
        if rule is not None and rule.error is not None and not rule.run_first:
            raise WpAgentError(rule.error)
        done = self.site.wp(*words, env=self.env)
        if rule is not None and rule.error is not None:
            raise WpAgentError(rule.error)
        if rule is not None and rule.result is not None:
            return rule.result
        return CommandResult(done.stdout, done.stderr, done.exit_code, 1)

    def close(self) -> None:
        return None

    def commands(self) -> list[str]:
        """The calls as `wp` lines without global options, for comparing sequences."""
        return [" ".join(w for w in call if not w.startswith(("--url=", "--user="))) for call in self.calls]


def _error(stderr: str, exit_code: int = 1) -> CommandResult:
    return CommandResult("", stderr, exit_code, 1)


@pytest.fixture
def site(tmp_path: Path) -> SimSite:
    return SimSite.create(tmp_path)


@pytest.fixture
def wp(site: SimSite) -> RecordingWpCli:
    return RecordingWpCli(site, env={"WP_SIM_NOW": "2026-06-01 00:00:00"})


def _publisher(wp: RecordingWpCli, **kwargs: Any) -> ArticlePublisher:
    kwargs.setdefault("clock", lambda: NOW)
    return ArticlePublisher(wp, kwargs.pop("policy", CommandPolicy()), **kwargs)


def _article(**fields: Any) -> PublishArticleInput:
    values: dict[str, Any] = {"title": "AI活用の始め方", "content": "<p>本文</p>", "status": "draft"}
    values.update(fields)
    return PublishArticleInput.model_validate(values)


FULL = {
    "title": "AI活用の始め方",
    "content": "<p>本文</p>",
    "categories": ["ai-katsuyou", "wordpress"],
    "tags": ["生成AI", "新しいタグ"],
    "status": "future",
    "publishDate": "2026-11-23T09:00:00+09:00",
    "featuredImageUrl": "https://cdn.example.test/img/hero.jpg",
    "meta": {"description": "説明文"},
}


def _error_of(output: PublishArticleOutput) -> tuple[str, str]:
    assert output.error is not None, output
    return output.error.code, output.error.message


def _ids(site: SimSite, post_type: str) -> set[int]:
    return {p["ID"] for p in site.store.posts(post_type=post_type)}


def _term_slugs(site: SimSite, taxonomy: str) -> set[str]:
    return {t["slug"] for t in site.store.network().blog(1).terms_in(taxonomy)}


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
    assert [t.label for t in wanted_terms("post_tag", ["AI", "ai", "Ai 活用", "ai-活用"])] == [
        "AI",
        "Ai 活用",
    ]


# --------------------------------------------------------------------------------- the sequence


def test_full_article_command_sequence(site: SimSite, wp: RecordingWpCli) -> None:
    output = _publisher(wp).publish(_article(**FULL))
    assert output.success, output
    assert output.data is not None
    post_id = output.data.post_id
    marker = site.store.get_post_meta(post_id, MARKER_META_KEY)[0]
    meta_json = (
        json.dumps({"description": "説明文", MARKER_META_KEY: marker}, ensure_ascii=False)
        .replace(", ", ",")
        .replace(": ", ":")
    )
    assert wp.commands() == [
        "option get siteurl",
        "option get timezone_string",
        "term list category --fields=term_id,name,slug --format=json",
        "term list post_tag --fields=term_id,name,slug --format=json",
        "post create --post_type=post --post_status=draft --post_title=AI活用の始め方 --post_content=<p>本文</p> "
        f"--post_date=2026-11-23 09:00:00 --post_date_gmt=2026-11-23 00:00:00 --meta_input={meta_json} --porcelain",
        f"media import https://cdn.example.test/img/hero.jpg --post_id={post_id} --featured_image --porcelain",
        "term create category ai-katsuyou --slug=ai-katsuyou --porcelain",
        "term create post_tag 新しいタグ --porcelain",
        f"post term set {post_id} category 13 3 --by=id",
        f"post term set {post_id} post_tag 10 14 --by=id",
        f"post update {post_id} --post_status=future --post_date=2026-11-23 09:00:00 "
        "--post_date_gmt=2026-11-23 00:00:00",
        f"post get {post_id} --fields=post_status,url --format=json",
    ]
    post = site.store.get_post(post_id)
    assert post is not None
    assert (post["post_status"], post["post_date"], post["post_date_gmt"]) == (
        "future",
        "2026-11-23 09:00:00",
        "2026-11-23 00:00:00",
    )
    assert output.data.post_url == f"https://example.test/?p={post_id}"  # future posts have plain links
    assert output.data.edit_url == f"https://example.test/wp-admin/post.php?post={post_id}&action=edit"


def test_draft_without_extras_runs_only_what_it_needs(wp: RecordingWpCli) -> None:
    output = _publisher(wp).publish(_article())
    assert output.success, output
    assert [c.split(" --")[0] for c in wp.commands()] == ["option get siteurl", "post create", "post get 57"]


def test_publish_now_lets_wordpress_date_it_at_publication(site: SimSite, wp: RecordingWpCli) -> None:
    output = _publisher(wp).publish(_article(status="publish", categories=["news"]))
    assert output.data is not None
    assert wp.commands()[-2] == f"post update {output.data.post_id} --post_status=publish"
    post = site.store.get_post(output.data.post_id)
    assert post is not None
    assert (post["post_status"], post["post_date_gmt"]) == ("publish", "2026-06-01 00:00:00")
    assert post["post_name"] == "ai%e6%b4%bb%e7%94%a8%e3%81%ae%e5%a7%8b%e3%82%81%e6%96%b9"
    assert output.data.post_url == f"https://example.test/{post['post_name']}/"


def test_publish_with_a_past_date_is_backdated(site: SimSite, wp: RecordingWpCli) -> None:
    output = _publisher(wp).publish(_article(status="publish", publishDate="2026-04-01T10:00:00+09:00"))
    assert output.data is not None
    post = site.store.get_post(output.data.post_id)
    assert post is not None
    assert (post["post_status"], post["post_date"], post["post_date_gmt"]) == (
        "publish",
        "2026-04-01 10:00:00",
        "2026-04-01 01:00:00",
    )


def test_publish_with_a_future_date_is_scheduled_by_wordpress(site: SimSite, wp: RecordingWpCli) -> None:
    output = _publisher(wp).publish(_article(status="publish", publishDate="2026-12-24T18:00:00+09:00"))
    assert output.success, output
    assert output.data is not None
    post = site.store.get_post(output.data.post_id)
    assert post is not None
    assert post["post_status"] == "future"


def test_site_url_goes_on_every_command_and_the_user_is_the_executors(
    site: SimSite, wp: RecordingWpCli
) -> None:
    article = _article(status="publish", siteUrl="https://example.test/en/", categories=["ai-katsuyou"])
    output = _publisher(wp, site_url="https://example.test/shop/").publish(article)
    assert output.data is not None
    assert all(call[-1] == "--url=https://example.test/en/" for call in wp.calls)
    assert not any(word.startswith("--user") for call in wp.calls for word in call)
    assert output.data.edit_url.startswith("https://example.test/en/wp-admin/post.php?post=")
    blog2 = site.store.network().blog(2)
    assert blog2.post(output.data.post_id) is not None
    assert "ai-katsuyou" in {t["slug"] for t in blog2.terms_in("category")}
    assert "ai-katsuyou" not in _term_slugs(site, "category")
    # The publisher's own site_url is the default when the article names none.
    other = RecordingWpCli(site)
    _publisher(other, site_url="https://example.test/shop/").publish(_article())
    assert all(call[-1] == "--url=https://example.test/shop/" for call in other.calls)


def test_site_url_must_be_the_site_wordpress_answers_for(wp: RecordingWpCli) -> None:
    output = _publisher(wp).publish(_article(siteUrl="http://EXAMPLE.test/en"))
    assert output.success, output  # scheme, host case and trailing slash do not matter
    wrong = RecordingWpCli(wp.site)
    code, message = _error_of(_publisher(wrong).publish(_article(siteUrl="https://example.test/blog/")))
    assert code == "VALIDATION_ERROR"
    assert message.startswith(
        "入力内容に誤りがあります: siteUrl（https://example.test/blog/ に一致するサイトがありません"
    )
    assert wrong.commands() == ["option get siteurl", "option get home"]


def test_content_reaches_wordpress_unchanged(site: SimSite, wp: RecordingWpCli) -> None:
    content = '<p class="x">\'quote\' & $HOME `id` $(id) ; | > \\ \n\t<script>alert("x")</script></p>'
    output = _publisher(wp).publish(_article(content=content, meta={"description": "a \"b\" & 'c'"}))
    assert output.data is not None
    post = site.store.get_post(output.data.post_id)
    assert post is not None
    assert post["post_content"] == content
    assert site.store.get_post_meta(output.data.post_id, "description") == ["a \"b\" & 'c'"]


def test_audit_records_each_command_masked_and_shortened(wp: RecordingWpCli) -> None:
    audit = MemoryAuditLog()
    publisher = _publisher(wp, audit=audit, user_id="u1", session_id="s1", target_id="t1")
    publisher.publish(_article(content="<p>" + "長" * 2_000 + "</p>"))
    events = audit.events
    assert [e.type for e in events] == [AuditEventType.COMMAND_EXECUTED] * len(wp.calls)
    assert {(e.user_id, e.session_id, e.target_id) for e in events} == {("u1", "s1", "t1")}
    create = events[1]
    assert create.command is not None
    assert "--post_content=<2007 chars>" in create.command
    assert (create.category, create.success, create.exit_code) == ("write", True, 0)
    assert create.reason == "記事公開（publishArticle）: 投稿を下書きとして作成"


# --------------------------------------------------------------------------------- refused up front


def test_blocked_featured_image_runs_nothing(wp: RecordingWpCli) -> None:
    audit = MemoryAuditLog()
    output = _publisher(wp, audit=audit).publish(_article(featuredImageUrl="http://127.0.0.1/a.jpg"))
    code, message = _error_of(output)
    assert code == "COMMAND_BLOCKED"
    assert "アイキャッチ画像の取り込みのコマンドがポリシーで拒否されました" in message
    assert message.endswith("サイトには何も作成していません。")
    assert wp.calls == []
    assert [e.type for e in audit.events] == [AuditEventType.COMMAND_BLOCKED]


def test_site_policy_requiring_approval_for_a_step_is_refused(wp: RecordingWpCli) -> None:
    policy = CommandPolicy(CustomRules.model_validate({"confirm": ["term create"]}))
    output = _publisher(wp, policy=policy).publish(_article(tags=["新しいタグ"]))
    assert _error_of(output)[0] == "CONFIRMATION_REQUIRED"
    assert wp.calls == []


def test_schedule_too_soon_is_a_validation_error(wp: RecordingWpCli) -> None:
    soon = (NOW + timedelta(seconds=90)).isoformat()
    code, message = _error_of(_publisher(wp).publish(_article(status="future", publishDate=soon)))
    assert code == "VALIDATION_ERROR"
    assert "publishDate（予約公開には現在時刻より2分以上先の日時を指定してください）" in message
    assert wp.calls == []


def test_article_too_large_for_one_command_is_refused(wp: RecordingWpCli) -> None:
    big = "あ" * (MAX_COMMAND_BYTES // 3)
    code, message = _error_of(_publisher(wp).publish(_article(content=big)))
    assert code == "VALIDATION_ERROR"
    assert message.startswith("入力内容に誤りがあります: content（本文とメタデータが大きすぎます")
    assert wp.calls == []


# --------------------------------------------------------------------------------- failures and cleanup


def test_failure_after_the_post_removes_everything_it_created(site: SimSite, wp: RecordingWpCli) -> None:
    before = (_ids(site, "post"), _ids(site, "attachment"), _term_slugs(site, "category"))
    wp.fail("post", "update", result=_error("Error: Database connection lost.\n"))
    code, message = _error_of(_publisher(wp).publish(_article(**FULL)))
    assert code == "PUBLISH_FAILED"
    assert message == (
        "投稿の公開・予約に失敗しました（WP-CLI: Error: Database connection lost.）。"
        "この処理で作成した 添付画像 ID 58、投稿 ID 57、タグ ID 14（新しいタグ）、"
        "カテゴリ ID 13（ai-katsuyou） を削除しました。"
    )
    assert (_ids(site, "post"), _ids(site, "attachment"), _term_slugs(site, "category")) == before
    assert "新しいタグ" not in {t["name"] for t in site.store.network().blog(1).terms_in("post_tag")}
    assert wp.commands()[-4:] == [
        "post delete 58 --force",
        "post delete 57 --force",
        "term delete post_tag 14",
        "term delete category 13",
    ]


def test_timed_out_create_is_found_by_its_marker_and_removed(site: SimSite, wp: RecordingWpCli) -> None:
    before = _ids(site, "post")
    wp.fail("post", "create", error=AgentErrorCode.COMMAND_TIMEOUT, run_first=True)
    code, message = _error_of(_publisher(wp).publish(_article()))
    assert code == "COMMAND_TIMEOUT"
    assert "この処理で作成した 投稿 ID 57 を削除しました。" in message
    assert _ids(site, "post") == before
    assert wp.commands()[-2].startswith(
        f"post list --post_type=post --post_status=any --meta_key={MARKER_META_KEY}"
    )


def test_timed_out_import_is_found_as_a_child_and_removed(site: SimSite, wp: RecordingWpCli) -> None:
    before = _ids(site, "attachment")
    wp.fail("media", "import", error=AgentErrorCode.COMMAND_TIMEOUT, run_first=True)
    article = _article(featuredImageUrl="https://cdn.example.test/a.png")
    code, message = _error_of(_publisher(wp).publish(article))
    assert code == "COMMAND_TIMEOUT"
    assert "添付画像 ID 58、投稿 ID 57 を削除しました" in message
    assert _ids(site, "attachment") == before
    assert site.store.get_post_meta(57, "_thumbnail_id") == []


def test_timed_out_term_create_is_found_by_listing_again(site: SimSite, wp: RecordingWpCli) -> None:
    wp.fail("term", "create", error=AgentErrorCode.COMMAND_TIMEOUT, run_first=True)
    code, message = _error_of(_publisher(wp).publish(_article(categories=["ai-katsuyou"])))
    assert code == "COMMAND_TIMEOUT"
    assert "カテゴリ ID 13（ai-katsuyou）" in message
    assert "ai-katsuyou" not in _term_slugs(site, "category")


def test_failed_cleanup_names_what_still_exists(site: SimSite, wp: RecordingWpCli) -> None:
    wp.fail("post", "term", result=_error("Error: Failed to set terms.\n"))
    wp.fail("post", "delete", result=_error("Error: Failed deleting post.\n"), times=None)
    article = _article(categories=["ai-katsuyou"], featuredImageUrl="https://cdn.example.test/a.png")
    code, message = _error_of(_publisher(wp).publish(article))
    assert code == "PARTIAL_FAILURE"
    assert message == (
        "カテゴリの設定に失敗しました（WP-CLI: Error: Failed to set terms.）。"
        "この処理で作成した カテゴリ ID 13（ai-katsuyou） を削除しました。"
        "添付画像 ID 58、投稿 ID 57 は削除できなかったため、サイトに残っています。"
        "WordPressの管理画面などで確認して削除してください。"
    )
    assert site.store.get_post(57) is not None
    assert site.store.get_post(58) is not None


def test_lost_connection_stops_cleanup_after_one_attempt(site: SimSite, wp: RecordingWpCli) -> None:
    wp.fail("post", "update", error=AgentErrorCode.SSH_CONNECTION_FAILED)
    wp.fail("post", "delete", error=AgentErrorCode.SSH_CONNECTION_FAILED, times=None)
    code, message = _error_of(_publisher(wp).publish(_article(status="publish", tags=["新しいタグ"])))
    assert code == "PARTIAL_FAILURE"
    assert message.startswith("投稿の公開・予約に失敗しました: WordPressサーバーにSSH接続できませんでした")
    assert "投稿 ID 57、タグ ID 13（新しいタグ） は削除できなかったため" in message
    assert sum(c.startswith(("post delete", "term delete")) for c in wp.commands()) == 1


def test_unconfirmable_create_is_reported(site: SimSite, wp: RecordingWpCli) -> None:
    wp.fail("post", "create", error=AgentErrorCode.SSH_CONNECTION_FAILED, run_first=True)
    wp.fail("post", "list", error=AgentErrorCode.SSH_CONNECTION_FAILED)
    code, message = _error_of(_publisher(wp).publish(_article()))
    assert code == "PARTIAL_FAILURE"
    assert f"投稿が作成されたかどうか確認できませんでした（投稿メタ {MARKER_META_KEY}=" in message


def test_schedule_wordpress_published_at_once_is_rolled_back(site: SimSite, wp: RecordingWpCli) -> None:
    # The server's clock is past the date our own clock still sees as future.
    wp.env = {"WP_SIM_NOW": "2026-12-01 00:00:00"}
    code, message = _error_of(_publisher(wp).publish(_article(**FULL)))
    assert code == "PUBLISH_FAILED"
    assert message.startswith(
        "予約日時が現在時刻に近すぎる（または過ぎた）ため、WordPressが予約せずに即時公開しました。"
    )
    assert "投稿 ID 57" in message
    assert site.store.get_post(57) is None


def test_wp_cli_before_2_8_gets_the_url_from_post_list(site: SimSite, wp: RecordingWpCli) -> None:
    wp.fail("post", "get", result=_error("Error: Invalid field: url.\n"))
    output = _publisher(wp).publish(_article(status="publish"))
    assert output.success, output
    assert output.data is not None
    assert wp.commands()[-1] == (
        f"post list --post__in={output.data.post_id} --post_type=post --post_status=any "
        "--fields=post_status,url --format=json"
    )
    assert output.data.post_url.startswith("https://example.test/ai%e6%b4%bb")


def test_unexpected_error_still_cleans_up(site: SimSite, wp: RecordingWpCli) -> None:
    wp.fail("post", "get", result=CommandResult("not json", "", 0, 1))
    code, message = _error_of(_publisher(wp).publish(_article()))
    assert code == "PUBLISH_FAILED"
    assert message == "投稿のURLを読み取れませんでした。この処理で作成した 投稿 ID 57 を削除しました。"
    assert site.store.get_post(57) is None


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


def test_cli_reads_stdin_and_labels_the_sandbox(
    sandbox_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    document = {"title": "標準入力から", "content": "<p>x</p>", "status": "publish", "tags": ["新しいタグ"]}
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(document, ensure_ascii=False)))
    assert main(["publish", "-"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("【サンドボックス】シミュレーションのサイトで記事を公開しました（投稿ID ")
    assert out[1].startswith("URL: https://example.test/")
    assert out[2].startswith("編集: https://example.test/wp-admin/post.php?post=")


# --------------------------------------------------------------------------------- simulator extension


def test_deleting_an_attachment_removes_featured_image_references(site: SimSite) -> None:
    """wp_delete_attachment() deletes every `_thumbnail_id` row that points at the attachment."""
    imported = site.wp(
        "media", "import", "https://cdn.example.test/x.jpg", "--post_id=46", "--featured_image", "--porcelain"
    )
    attachment = int(imported.stdout)
    site.wp("post", "meta", "update", "45", "_thumbnail_id", str(attachment))
    assert site.store.get_post_meta(46, "_thumbnail_id") == [str(attachment)]
    assert (
        site.wp("post", "delete", str(attachment), "--force").stdout
        == f"Success: Deleted post {attachment}.\n"
    )
    assert site.store.get_post_meta(46, "_thumbnail_id") == []
    assert site.store.get_post_meta(45, "_thumbnail_id") == []
    # Deleting an ordinary post leaves other posts' featured images alone.
    site.wp("post", "meta", "update", "45", "_thumbnail_id", "46")
    site.wp("post", "delete", "46", "--force")
    assert site.store.get_post_meta(45, "_thumbnail_id") == ["46"]
