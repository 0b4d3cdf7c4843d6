"""ArticlePublisher's exact WP-CLI sequence and its cleanup, on the real WordPress (local WP-CLI as the
site's owner, no SSH), with a recording WpCli that can fail any command on cue."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.clock import site_clock
from tests.fakes.wordpress import MISSING_IMAGE_URL, SAMPLE_IMAGE_URL, TestWordPress
from tests.fakes.wordpress_fixtures import sandbox_environment
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.ports import MemoryAuditLog
from wp_agent.cli.main import main
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.port import CommandResult
from wp_agent.models.article import PublishArticleInput, PublishArticleOutput
from wp_agent.policy import CommandPolicy
from wp_agent.publishing import MARKER_META_KEY, ArticlePublisher
from wp_agent.sandbox import SandboxSite

# --------------------------------------------------------------------------------- the recording WpCli


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
    """A WpCli on the test WordPress that records every argv and can fail on cue."""

    site: TestWordPress
    wp_user: str | None = None  # the target's WordPress user, added to every command as the executors do
    rules: list[Rule] = field(default_factory=list)
    calls: list[list[str]] = field(default_factory=list)

    max_concurrency = 1
    simulated = False

    def fail(self, *prefix: str, **kwargs: Any) -> None:
        self.rules.append(Rule(tuple(prefix), **kwargs))

    def run(self, argv: Sequence[str]) -> CommandResult:
        words = [*argv, *([f"--user={self.wp_user}"] if self.wp_user else [])]
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
        done = self.site.wp(*words)
        if rule is not None and rule.error is not None:
            raise WpAgentError(rule.error)
        if rule is not None and rule.result is not None:
            return rule.result
        return CommandResult(done.stdout, done.stderr, done.returncode, 1)

    def close(self) -> None:
        return None

    def commands(self) -> list[str]:
        """The calls as `wp` lines without global options, for comparing sequences."""
        return [" ".join(w for w in call if not w.startswith(("--url=", "--user="))) for call in self.calls]


def _error(stderr: str, exit_code: int = 1) -> CommandResult:
    return CommandResult("", stderr, exit_code, 1)


@pytest.fixture
def site(fresh_wordpress: TestWordPress) -> TestWordPress:
    return fresh_wordpress


@pytest.fixture
def wp(site: TestWordPress) -> RecordingWpCli:
    return RecordingWpCli(site)


def _publisher(wp: RecordingWpCli, **kwargs: Any) -> ArticlePublisher:
    kwargs.setdefault("clock", site_clock(wp.site.site))  # WordPress's own time, as a server's clock has it
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
    "publishDate": "2030-11-23T09:00:00+09:00",
    "featuredImageUrl": SAMPLE_IMAGE_URL,
    "meta": {"description": "説明文"},
}


def _error_of(output: PublishArticleOutput) -> tuple[str, str]:
    assert output.error is not None, output
    return output.error.code, output.error.message


def _ids(site: TestWordPress, post_type: str) -> set[int]:
    return set(site.posts(post_type=post_type))


def _term_slugs(site: TestWordPress, taxonomy: str, url: str | None = None) -> set[str]:
    return {t["slug"] for t in site.wp_json("term", "list", taxonomy, "--fields=slug", url=url)}


def _meta(site: TestWordPress, post_id: int, key: str) -> list[str]:
    rows = site.wp_json("post", "meta", "list", str(post_id), f"--keys={key}", "--fields=meta_value")
    return [row["meta_value"] for row in rows]


def _term_id(site: TestWordPress, taxonomy: str, slug: str) -> int:
    return int(site.facts["term_ids"][f"{taxonomy}:{slug}"])


# --------------------------------------------------------------------------------- the sequence


def test_full_article_command_sequence(site: TestWordPress, wp: RecordingWpCli) -> None:
    post_id, term_id = site.facts["next_post_id"], site.facts["next_term_id"]
    output = _publisher(wp).publish(_article(**FULL))
    assert output.success, output
    assert output.data is not None
    assert output.data.post_id == post_id
    marker = _meta(site, post_id, MARKER_META_KEY)[0]
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
        f"--post_date=2030-11-23 09:00:00 --post_date_gmt=2030-11-23 00:00:00 --meta_input={meta_json} --porcelain",
        f"media import {SAMPLE_IMAGE_URL} --post_id={post_id} --featured_image --porcelain",
        "term create category ai-katsuyou --slug=ai-katsuyou --porcelain",
        "term create post_tag 新しいタグ --porcelain",
        f"post term set {post_id} category {term_id} {_term_id(site, 'category', 'wordpress')} --by=id",
        f"post term set {post_id} post_tag {_term_id(site, 'post_tag', 'generative-ai')} {term_id + 1} --by=id",
        f"post term list {post_id} category post_tag --fields=term_id --format=ids",  # read back
        # It created terms: another publish at the same time may have created them too (the oldest is kept).
        "term list category --fields=term_id,name,slug --format=json",
        "term list post_tag --fields=term_id,name,slug --format=json",
        f"post update {post_id} --post_status=future --post_date=2030-11-23 09:00:00 "
        "--post_date_gmt=2030-11-23 00:00:00",
        f"post get {post_id} --fields=post_status,url --format=json",
    ]
    post = site.post(post_id)
    assert post is not None
    assert (post["post_status"], post["post_date"], post["post_date_gmt"]) == (
        "future",
        "2030-11-23 09:00:00",
        "2030-11-23 00:00:00",
    )
    assert output.data.post_url == f"https://example.test/?p={post_id}"  # future posts have plain links
    assert output.data.edit_url == f"https://example.test/wp-admin/post.php?post={post_id}&action=edit"


def test_draft_without_extras_runs_only_what_it_needs(site: TestWordPress, wp: RecordingWpCli) -> None:
    output = _publisher(wp).publish(_article())
    assert output.success, output
    post_id = site.facts["next_post_id"]
    assert [c.split(" --")[0] for c in wp.commands()] == [
        "option get siteurl",
        "post create",
        f"post get {post_id}",
    ]


def test_publish_now_lets_wordpress_date_it_at_publication(site: TestWordPress, wp: RecordingWpCli) -> None:
    now = site_clock(wp.site.site)
    started = now().replace(microsecond=0)
    output = _publisher(wp).publish(_article(status="publish", categories=["news"]))
    assert output.data is not None
    assert wp.commands()[-2] == f"post update {output.data.post_id} --post_status=publish"
    post = site.post(output.data.post_id)
    assert post is not None
    assert post["post_status"] == "publish"
    published = datetime.strptime(post["post_date_gmt"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    assert started - timedelta(seconds=5) <= published <= now() + timedelta(seconds=5)
    assert post["post_name"] == "ai%e6%b4%bb%e7%94%a8%e3%81%ae%e5%a7%8b%e3%82%81%e6%96%b9"
    # The main site of a subdirectory network: its post permalinks start with /blog/.
    assert output.data.post_url == f"https://example.test/blog/{post['post_name']}/"


def test_publish_with_a_past_date_is_backdated(site: TestWordPress, wp: RecordingWpCli) -> None:
    output = _publisher(wp).publish(_article(status="publish", publishDate="2026-04-01T10:00:00+09:00"))
    assert output.data is not None
    post = site.post(output.data.post_id)
    assert post is not None
    assert (post["post_status"], post["post_date"], post["post_date_gmt"]) == (
        "publish",
        "2026-04-01 10:00:00",
        "2026-04-01 01:00:00",
    )


def test_publish_with_a_future_date_is_scheduled_by_wordpress(
    site: TestWordPress, wp: RecordingWpCli
) -> None:
    output = _publisher(wp).publish(_article(status="publish", publishDate="2030-12-24T18:00:00+09:00"))
    assert output.success, output
    assert output.data is not None
    assert site.status_of(output.data.post_id) == "future"


def test_site_url_and_wp_user_go_on_every_command(site: TestWordPress) -> None:
    english = "https://example.test/en/"
    article = _article(status="publish", siteUrl=english, categories=["ai-katsuyou"])
    wp = RecordingWpCli(site, wp_user="admin")
    output = _publisher(wp, site_url="https://example.test/shop/").publish(article)
    assert output.data is not None
    assert all(call[-2:] == [f"--url={english}", "--user=admin"] for call in wp.calls)
    assert output.data.edit_url.startswith(f"{english}wp-admin/post.php?post=")
    assert site.post(output.data.post_id, url=english) is not None
    assert "ai-katsuyou" in _term_slugs(site, "category", english)
    assert "ai-katsuyou" not in _term_slugs(site, "category")
    # The publisher's own site_url is the default when the article names none.
    other = RecordingWpCli(site)
    _publisher(other, site_url="https://example.test/shop/").publish(_article())
    assert all(call[-1] == "--url=https://example.test/shop/" for call in other.calls)


def test_site_url_must_be_the_site_wordpress_answers_for(site: TestWordPress, wp: RecordingWpCli) -> None:
    output = _publisher(wp).publish(_article(siteUrl="http://EXAMPLE.test/en"))
    assert output.success, output  # scheme, host case and trailing slash do not matter
    wrong = RecordingWpCli(site)
    code, message = _error_of(_publisher(wrong).publish(_article(siteUrl="https://example.test/blog/")))
    assert code == "VALIDATION_ERROR"
    assert message.startswith(
        "入力内容に誤りがあります: siteUrl（https://example.test/blog/ に一致するサイトがありません"
    )
    assert wrong.commands() == ["option get siteurl", "option get home"]


def test_content_reaches_wordpress_unchanged(site: TestWordPress, wp: RecordingWpCli) -> None:
    content = '<p class="x">\'quote\' & $HOME `id` $(id) ; | > \\ \n\t<b>alert("x")</b></p>'
    article = _article(content=content, meta={"description": "a \"b\" & 'c'"})
    output = _publisher(wp).publish(article)
    assert output.data is not None
    post = site.post(output.data.post_id)
    assert post is not None
    assert post["post_content"] == content
    assert _meta(site, output.data.post_id, "description") == ["a \"b\" & 'c'"]


def test_a_script_in_an_article_waits_for_approval_whoever_writes(
    site: TestWordPress, wp: RecordingWpCli
) -> None:
    """Real WP-CLI without `--user` turns WordPress's HTML filter (kses) off and would store <script> as
    it is; as an editor WordPress would strip it. The policy holds it either way (active content), and
    nothing is created."""
    content = '<p>本文</p><script>alert("x")</script>'
    before = _ids(site, "post")
    for publisher in (_publisher(wp), _publisher(RecordingWpCli(site, wp_user="hanako"))):
        code, message = _error_of(publisher.publish(_article(content=content)))
        assert code == "CONFIRMATION_REQUIRED"
        assert "<script> 要素" in message
    assert _ids(site, "post") == before


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


# --------------------------------------------------------------------------------- failures and cleanup


def test_failure_after_the_post_removes_everything_it_created(
    site: TestWordPress, wp: RecordingWpCli
) -> None:
    post_id, term_id = site.facts["next_post_id"], site.facts["next_term_id"]
    before = (
        _ids(site, "post"),
        _ids(site, "attachment"),
        _term_slugs(site, "category"),
        site.uploads_listing(),
    )
    wp.fail("post", "update", result=_error("Error: Database connection lost.\n"))
    code, message = _error_of(_publisher(wp).publish(_article(**FULL)))
    assert code == "PUBLISH_FAILED"
    assert message == (
        "投稿の公開・予約に失敗しました（WP-CLI: Error: Database connection lost.）。"
        f"この処理で作成した 添付画像 ID {post_id + 1}、投稿 ID {post_id}、タグ ID {term_id + 1}（新しいタグ）、"
        f"カテゴリ ID {term_id}（ai-katsuyou） を削除しました。"
    )
    # Nothing left: no post, no attachment, no terms, and the downloaded image file is gone too.
    after = (
        _ids(site, "post"),
        _ids(site, "attachment"),
        _term_slugs(site, "category"),
        site.uploads_listing(),
    )
    assert after == before
    assert "新しいタグ" not in {t["name"] for t in site.wp_json("term", "list", "post_tag", "--fields=name")}
    assert wp.commands()[-6:] == [
        f"post delete {post_id + 1} --force",
        f"post delete {post_id} --force",
        # a term this call created is removed only when no other post uses it (article_terms.py)
        f"post list --tag_id={term_id + 1} --post_type=any --post_status=any --format=ids",
        f"term delete post_tag {term_id + 1}",
        f"post list --cat={term_id} --post_type=any --post_status=any --format=ids",
        f"term delete category {term_id}",
    ]


def test_timed_out_create_is_found_by_its_marker_and_removed(site: TestWordPress, wp: RecordingWpCli) -> None:
    before = _ids(site, "post")
    wp.fail("post", "create", error=AgentErrorCode.COMMAND_TIMEOUT, run_first=True)
    code, message = _error_of(_publisher(wp).publish(_article()))
    assert code == "COMMAND_TIMEOUT"
    assert f"この処理で作成した 投稿 ID {site.facts['next_post_id']} を削除しました。" in message
    assert _ids(site, "post") == before
    assert wp.commands()[-2].startswith(
        f"post list --post_type=post --post_status=any --meta_key={MARKER_META_KEY}"
    )


def test_timed_out_import_is_found_as_a_child_and_removed(site: TestWordPress, wp: RecordingWpCli) -> None:
    post_id = site.facts["next_post_id"]
    before = (_ids(site, "attachment"), site.uploads_listing())
    wp.fail("media", "import", error=AgentErrorCode.COMMAND_TIMEOUT, run_first=True)
    code, message = _error_of(_publisher(wp).publish(_article(featuredImageUrl=SAMPLE_IMAGE_URL)))
    assert code == "COMMAND_TIMEOUT"
    assert f"添付画像 ID {post_id + 1}、投稿 ID {post_id} を削除しました" in message
    assert (_ids(site, "attachment"), site.uploads_listing()) == before
    assert site.post(post_id) is None


def test_failed_import_of_a_missing_image_removes_the_draft(site: TestWordPress, wp: RecordingWpCli) -> None:
    """A 404 image: WordPress's download fails as on any real site; nothing is left behind."""
    before = (_ids(site, "post"), _ids(site, "attachment"), site.uploads_listing())
    code, message = _error_of(_publisher(wp).publish(_article(featuredImageUrl=MISSING_IMAGE_URL)))
    assert code == "PUBLISH_FAILED"
    assert f"Unable to import file '{MISSING_IMAGE_URL}'. Reason: Not Found" in message
    assert (_ids(site, "post"), _ids(site, "attachment"), site.uploads_listing()) == before


def test_timed_out_term_create_is_found_by_listing_again(site: TestWordPress, wp: RecordingWpCli) -> None:
    wp.fail("term", "create", error=AgentErrorCode.COMMAND_TIMEOUT, run_first=True)
    code, message = _error_of(_publisher(wp).publish(_article(categories=["ai-katsuyou"])))
    assert code == "COMMAND_TIMEOUT"
    assert f"カテゴリ ID {site.facts['next_term_id']}（ai-katsuyou）" in message
    assert "ai-katsuyou" not in _term_slugs(site, "category")


def test_failed_cleanup_names_what_still_exists(site: TestWordPress, wp: RecordingWpCli) -> None:
    post_id, term_id = site.facts["next_post_id"], site.facts["next_term_id"]
    wp.fail("post", "term", result=_error("Error: Failed to set terms.\n"))
    wp.fail("post", "delete", result=_error("Error: Failed deleting post.\n"), times=None)
    article = _article(categories=["ai-katsuyou"], featuredImageUrl=SAMPLE_IMAGE_URL)
    code, message = _error_of(_publisher(wp).publish(article))
    assert code == "PARTIAL_FAILURE"
    assert message == (
        "カテゴリの設定に失敗しました（WP-CLI: Error: Failed to set terms.）。"
        f"この処理で作成した カテゴリ ID {term_id}（ai-katsuyou） を削除しました。"
        f"添付画像 ID {post_id + 1}、投稿 ID {post_id} は削除できなかったため、サイトに残っています。"
        "WordPressの管理画面などで確認して削除してください。"
    )
    assert site.post(post_id) is not None
    assert site.post(post_id + 1) is not None


def test_lost_connection_stops_cleanup_after_one_attempt(site: TestWordPress, wp: RecordingWpCli) -> None:
    post_id, term_id = site.facts["next_post_id"], site.facts["next_term_id"]
    wp.fail("post", "update", error=AgentErrorCode.SSH_CONNECTION_FAILED)
    wp.fail("post", "delete", error=AgentErrorCode.SSH_CONNECTION_FAILED, times=None)
    code, message = _error_of(_publisher(wp).publish(_article(status="publish", tags=["新しいタグ"])))
    assert code == "PARTIAL_FAILURE"
    assert message.startswith("投稿の公開・予約に失敗しました: WordPressサーバーにSSH接続できませんでした")
    assert f"投稿 ID {post_id}、タグ ID {term_id}（新しいタグ） は削除できなかったため" in message
    assert sum(c.startswith(("post delete", "term delete")) for c in wp.commands()) == 1


def test_unconfirmable_create_is_reported(wp: RecordingWpCli) -> None:
    wp.fail("post", "create", error=AgentErrorCode.SSH_CONNECTION_FAILED, run_first=True)
    wp.fail("post", "list", error=AgentErrorCode.SSH_CONNECTION_FAILED)
    code, message = _error_of(_publisher(wp).publish(_article()))
    assert code == "PARTIAL_FAILURE"
    assert f"投稿が作成されたかどうか確認できませんでした（投稿メタ {MARKER_META_KEY}=" in message


def test_schedule_wordpress_published_at_once_is_rolled_back(site: TestWordPress, wp: RecordingWpCli) -> None:
    # Our clock is a day behind the server's: a date an hour ago is "future" to us, past to WordPress.
    now = site_clock(site.site)
    lagging = _publisher(wp, clock=lambda: now() - timedelta(days=1))
    published_date = (now() - timedelta(hours=1)).isoformat()
    post_id = site.facts["next_post_id"]
    code, message = _error_of(lagging.publish(_article(**{**FULL, "publishDate": published_date})))
    assert code == "PUBLISH_FAILED"
    assert message.startswith(
        "予約日時が現在時刻に近すぎる（または過ぎた）ため、WordPressが予約せずに即時公開しました。"
    )
    assert f"投稿 ID {post_id}" in message
    assert site.post(post_id) is None


def test_wp_cli_before_2_8_gets_the_url_from_post_list(wp: RecordingWpCli) -> None:
    wp.fail("post", "get", result=_error("Error: Invalid field: url.\n"))
    output = _publisher(wp).publish(_article(status="publish"))
    assert output.success, output
    assert output.data is not None
    assert wp.commands()[-1] == (
        f"post list --post__in={output.data.post_id} --post_type=post --post_status=any "
        "--fields=post_status,url --format=json"
    )
    assert output.data.post_url.startswith("https://example.test/blog/ai%e6%b4%bb")


def test_unexpected_error_still_cleans_up(site: TestWordPress, wp: RecordingWpCli) -> None:
    post_id = site.facts["next_post_id"]
    wp.fail("post", "get", result=CommandResult("not json", "", 0, 1))
    code, message = _error_of(_publisher(wp).publish(_article()))
    assert code == "PUBLISH_FAILED"
    assert (
        message == f"投稿のURLを読み取れませんでした。この処理で作成した 投稿 ID {post_id} を削除しました。"
    )
    assert site.post(post_id) is None


def test_deleting_an_attachment_removes_featured_image_references(site: TestWordPress) -> None:
    """What the cleanup relies on: wp_delete_attachment() deletes every `_thumbnail_id` pointing at it."""
    imported = site.wp("media", "import", SAMPLE_IMAGE_URL, "--post_id=46", "--featured_image", "--porcelain")
    attachment = int(imported.stdout)
    site.wp("post", "meta", "update", "45", "_thumbnail_id", str(attachment))
    assert _meta(site, 46, "_thumbnail_id") == [str(attachment)]
    deleted = site.wp("post", "delete", str(attachment), "--force")
    assert deleted.stdout == f"Success: Deleted post {attachment}.\n"
    assert _meta(site, 46, "_thumbnail_id") == []
    assert _meta(site, 45, "_thumbnail_id") == []
    # Deleting an ordinary post leaves other posts' featured images alone.
    site.wp("post", "meta", "update", "45", "_thumbnail_id", "46")
    site.wp("post", "delete", "46", "--force")
    assert _meta(site, 45, "_thumbnail_id") == ["46"]


# --------------------------------------------------------------------------------- the CLI in sandbox mode


def test_cli_reads_stdin_and_labels_the_sandbox(
    cli_sandbox: SandboxSite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, value in sandbox_environment(cli_sandbox).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("WP_AGENT_AUDIT_FILE", str(tmp_path / "audit.jsonl"))
    monkeypatch.setenv("HOME", str(tmp_path))  # its publish-once record: this test's, not the user's
    monkeypatch.setenv("LOG_LEVEL", "error")
    document = {"title": "標準入力から", "content": "<p>x</p>", "status": "publish", "tags": ["新しいタグ"]}
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(document, ensure_ascii=False)))
    assert main(["publish", "-"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("【サンドボックス】ローカルのWordPressで記事を公開しました（投稿ID ")
    post_id = int(out[0].split("投稿ID ")[1].rstrip("）"))
    assert out[1] == "URL: " + cli_sandbox.wp("post", "get", str(post_id), "--field=url").stdout.strip()
    assert out[2] == f"編集: https://example.test/wp-admin/post.php?post={post_id}&action=edit"
