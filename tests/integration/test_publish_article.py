"""publishArticle over the real sshd: ArticlePublisher (and `wp-agent publish`) → SshWpCli → OpenSSH →
the real WP-CLI on a real WordPress. Each test checks the site afterwards (WP-CLI and SQL). The
featured image is downloaded by the agent from a local image server (tests/fakes/media_server.py),
staged over SFTP as the rig's unprivileged user and imported by WordPress from that file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.clock import site_clock
from tests.fakes.media_server import MediaServer
from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import TestWordPress
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.ports import MemoryAuditLog
from wp_agent.cli.main import main
from wp_agent.executors.ssh import SshConnectionPool, SshWpCli, close_pooled_connections
from wp_agent.media.safe_download import parse_test_hosts
from wp_agent.models.article import PublishArticleInput, PublishArticleOutput
from wp_agent.policy import CommandPolicy
from wp_agent.publishing import MARKER_META_KEY, ArticlePublisher

pytestmark = pytest.mark.sshd

EN = "https://example.test/en/"
HTML = (
    "<!-- wp:paragraph -->\n<p class=\"lead\">「AI」と'WordPress' &amp; $HOME `id` $(whoami); a | b > c</p>\n"
    "<!-- /wp:paragraph -->\n<pre>alert(\"x\" + 'y');</pre>\n<p>100% \\n 改行\ttab</p>"
)
ARTICLE: dict[str, Any] = {
    "title": "AI活用で変わるWordPress運用",
    "content": HTML,
    "categories": ["ai-katsuyou", "wordpress"],
    "tags": ["生成AI", "業務効率化"],
    "status": "future",
    "publishDate": "2030-11-23T09:00:00+09:00",
    "featuredImageUrl": "https://images.example/ai-hero.jpg",  # each test: the local image server
    "meta": {"description": "AIでWordPress運用を効率化する方法を解説します。", "custom_note": "メモ"},
}


@pytest.fixture
def site(rig_site: TestWordPress) -> TestWordPress:
    return rig_site


@pytest.fixture(autouse=True)
def image_server(media_server: MediaServer, monkeypatch: pytest.MonkeyPatch) -> MediaServer:
    """The featured image comes from a local server the agent downloads from (the test setting
    WP_AGENT_MEDIA_TEST_HOSTS allows exactly it); WordPress gets the staged file."""
    monkeypatch.setitem(ARTICLE, "featuredImageUrl", media_server.url("/img/ai-hero.jpg?w=1200"))
    return media_server


@pytest.fixture
def missing_image_url(image_server: MediaServer) -> str:
    """An image address the server answers with 404."""
    return image_server.url("/images/missing.jpg")


@pytest.fixture
def wp(sshd_server: SshdRig, image_server: MediaServer) -> Iterator[SshWpCli]:
    pool = SshConnectionPool()  # its own, closed afterwards: no connection outlives the test
    yield SshWpCli(sshd_server.settings(wp_agent_media_test_hosts=image_server.host_entry), pool=pool)
    pool.close_all()


def publish(wp: SshWpCli, document: dict[str, Any], **kwargs: Any) -> PublishArticleOutput:
    image = str(ARTICLE["featuredImageUrl"])
    policy = CommandPolicy(media_test_hosts=parse_test_hosts(image.split("/")[2]))
    publisher = ArticlePublisher(wp, policy, **kwargs)
    return publisher.publish(PublishArticleInput.model_validate(document))


def article(**changes: Any) -> dict[str, Any]:
    return {**ARTICLE, **changes}


def _url(blog_id: int) -> str | None:
    return None if blog_id == 1 else EN


def snapshot(site: TestWordPress, blog_id: int = 1) -> dict[str, Any]:
    """Everything a half-made publish could leave behind (rows of the site's tables, uploaded files)."""
    prefix = "wp_" if blog_id == 1 else f"wp_{blog_id}_"
    return {
        "posts": site.sql(f"SELECT ID FROM {prefix}posts ORDER BY ID"),
        "terms": site.sql(
            f"SELECT tt.taxonomy, t.slug FROM {prefix}terms t JOIN {prefix}term_taxonomy tt USING (term_id)"
            " ORDER BY 1, 2"
        ),
        "meta": site.sql(f"SELECT post_id, meta_key FROM {prefix}postmeta ORDER BY 1, 2"),
        "relationships": site.sql(
            f"SELECT object_id, term_taxonomy_id FROM {prefix}term_relationships ORDER BY 1, 2"
        ),
        "uploads": {
            name: digest
            for name, digest in site.uploads_listing().items()
            if (name.startswith(f"sites/{blog_id}/") if blog_id != 1 else not name.startswith("sites/"))
        },
    }


def created_post(site: TestWordPress, output: PublishArticleOutput, blog_id: int = 1) -> dict[str, Any]:
    assert output.success, output
    assert output.data is not None
    post = site.post(output.data.post_id, url=_url(blog_id))
    assert post is not None
    return post


def terms_of(site: TestWordPress, post_id: int, taxonomy: str, blog_id: int = 1) -> dict[str, str]:
    rows = site.wp_json(
        "post", "term", "list", str(post_id), taxonomy, "--fields=slug,name", url=_url(blog_id)
    )
    return {row["slug"]: row["name"] for row in rows}


def meta_values(site: TestWordPress, post_id: int, key: str, blog_id: int = 1) -> list[str]:
    rows = site.wp_json(
        "post", "meta", "list", str(post_id), f"--keys={key}", "--fields=meta_value", url=_url(blog_id)
    )
    return [row["meta_value"] for row in rows]


def error_of(output: PublishArticleOutput) -> tuple[str, str]:
    assert not output.success
    assert output.error is not None
    return output.error.code, output.error.message


# --------------------------------------------------------------------------------- success paths


def test_scheduled_article_with_everything(
    site: TestWordPress, wp: SshWpCli, image_server: MediaServer
) -> None:
    audit = MemoryAuditLog()
    output = publish(wp, ARTICLE, audit=audit, user_id="argo", target_id="vps-1")
    post = created_post(site, output)
    post_id = post["ID"]
    assert (post["post_status"], post["post_type"], post["post_title"]) == (
        "future",
        "post",
        ARTICLE["title"],
    )
    assert (post["post_date"], post["post_date_gmt"]) == ("2030-11-23 09:00:00", "2030-11-23 00:00:00")
    assert post["post_content"] == HTML
    assert terms_of(site, post_id, "category") == {"ai-katsuyou": "ai-katsuyou", "wordpress": "WordPress"}
    tags = terms_of(site, post_id, "post_tag")
    assert tags["generative-ai"] == "生成AI"  # existing tag reused
    assert "業務効率化" in tags.values()  # new tag created
    [thumbnail] = meta_values(site, post_id, "_thumbnail_id")
    image = site.post(int(thumbnail))
    assert image is not None
    assert (image["post_type"], image["post_parent"], image["post_mime_type"]) == (
        "attachment",
        post_id,
        "image/jpeg",
    )
    # Downloaded by the agent (WordPress never saw the URL), imported from the staged file into the
    # uploads folder of the post's month under the URL's file name (the query string dropped).
    assert image_server.requests == ["/img/ai-hero.jpg?w=1200"]
    assert image["guid"] == "https://example.test/wp-content/uploads/2030/11/ai-hero.jpg"
    assert "2030/11/ai-hero.jpg" in site.uploads_listing()
    assert meta_values(site, post_id, "description") == [ARTICLE["meta"]["description"]]
    assert meta_values(site, post_id, "custom_note") == ["メモ"]
    assert len(meta_values(site, post_id, MARKER_META_KEY)) == 1
    assert output.data is not None
    assert output.data.post_url == f"https://example.test/?p={post_id}"
    assert output.data.edit_url == f"https://example.test/wp-admin/post.php?post={post_id}&action=edit"
    executed = [e for e in audit.events if e.type is AuditEventType.COMMAND_EXECUTED]
    assert len(executed) == 15  # 12 steps, the terms read back, both taxonomies looked at again (new terms)
    assert all(e.success and e.user_id == "argo" and e.target_id == "vps-1" for e in executed)


@pytest.mark.parametrize(
    ("publish_date", "timezone_string", "gmt_offset", "local", "gmt"),
    [
        ("2030-11-23T00:00:00Z", "Asia/Tokyo", "", "2030-11-23 09:00:00", "2030-11-23 00:00:00"),
        # No offset: the date is Japan time; the site shows it in its own zone.
        ("2030-11-23T09:00:00", "Asia/Tokyo", "", "2030-11-23 09:00:00", "2030-11-23 00:00:00"),
        ("2030-11-23T09:00:00", "America/New_York", "", "2030-11-22 19:00:00", "2030-11-23 00:00:00"),
        ("2030-07-01T09:00:00+09:00", "America/New_York", "", "2030-06-30 20:00:00", "2030-07-01 00:00:00"),
        ("2030-11-23T09:00:00+09:00", "", "5.5", "2030-11-23 05:30:00", "2030-11-23 00:00:00"),
    ],
)
def test_schedule_dates_follow_the_site_time_zone(
    site: TestWordPress,
    wp: SshWpCli,
    publish_date: str,
    timezone_string: str,
    gmt_offset: str,
    local: str,
    gmt: str,
) -> None:
    site.wp("option", "update", "timezone_string", timezone_string)
    site.wp("option", "update", "gmt_offset", gmt_offset)
    output = publish(wp, article(publishDate=publish_date, featuredImageUrl=None, categories=None, tags=None))
    post = created_post(site, output)
    assert (post["post_status"], post["post_date"], post["post_date_gmt"]) == ("future", local, gmt)


def test_publish_now_gets_a_pretty_permalink(site: TestWordPress, wp: SshWpCli) -> None:
    now = site_clock(site.site)
    started = now().replace(microsecond=0)
    output = publish(wp, article(status="publish", publishDate=None, categories=["news"], tags=None))
    post = created_post(site, output)
    assert post["post_status"] == "publish"
    published = datetime.strptime(post["post_date_gmt"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    assert started - timedelta(seconds=5) <= published <= now() + timedelta(seconds=5)
    assert output.data is not None
    # The main site of a subdirectory network: WordPress puts /blog/ before its post permalinks.
    assert output.data.post_url == f"https://example.test/blog/{post['post_name']}/"
    assert post["post_name"].startswith("ai%e6%b4%bb%e7%94%a8")
    assert terms_of(site, post["ID"], "category") == {"news": "お知らせ"}


def test_draft_keeps_its_date_and_stays_unpublished(site: TestWordPress, wp: SshWpCli) -> None:
    output = publish(wp, article(status="draft", featuredImageUrl=None))
    post = created_post(site, output)
    assert (post["post_status"], post["post_name"]) == ("draft", "")
    assert (post["post_date"], post["post_date_gmt"]) == ("2030-11-23 09:00:00", "2030-11-23 00:00:00")
    assert output.data is not None
    assert output.data.post_url == f"https://example.test/?p={post['ID']}"


def test_multisite_site_url_is_passed_as_url(site: TestWordPress, wp: SshWpCli) -> None:
    main_site = snapshot(site, 1)
    output = publish(wp, article(siteUrl=EN, status="publish", publishDate=None))
    post = created_post(site, output, blog_id=2)
    assert output.data is not None
    assert output.data.edit_url == f"{EN}wp-admin/post.php?post={post['ID']}&action=edit"
    assert output.data.post_url.startswith(EN)
    assert terms_of(site, post["ID"], "category", blog_id=2) == {
        "ai-katsuyou": "ai-katsuyou",
        "wordpress": "wordpress",
    }
    [thumbnail] = meta_values(site, post["ID"], "_thumbnail_id", blog_id=2)
    assert site.post(int(thumbnail), url=EN) is not None
    assert snapshot(site, 1) == main_site


def test_unknown_site_url_stops_before_anything_is_created(site: TestWordPress, wp: SshWpCli) -> None:
    before = snapshot(site)
    code, message = error_of(publish(wp, article(siteUrl="https://example.test/blog/")))
    assert code == "VALIDATION_ERROR"
    assert message == (
        "入力内容に誤りがあります: siteUrl（https://example.test/blog/ に一致するサイトがありません"
        "（WordPressは https://example.test のサイトとして応答しました））。サイトには何も作成していません。"
    )
    assert snapshot(site) == before
    # A host that no site has is refused by WP-CLI itself.
    code, message = error_of(publish(wp, article(siteUrl="https://other.test/")))
    assert code == "PUBLISH_FAILED"
    assert "（WP-CLI: Error: Site 'other.test/' not found." in message
    assert snapshot(site) == before


def test_large_article_within_one_command(site: TestWordPress, wp: SshWpCli) -> None:
    body = "<p>" + "長文の記事です。" * 4_800 + "</p>"  # about 115 KB: fits the remote shell's 128 KiB
    post = created_post(site, publish(wp, article(content=body, featuredImageUrl=None)))
    assert post["post_content"] == body
    too_big = "<p>" + "長文の記事です。" * 5_200 + "</p>"
    before = snapshot(site)
    code, message = error_of(publish(wp, article(content=too_big)))
    assert code == "VALIDATION_ERROR"
    assert message.startswith("入力内容に誤りがあります: content（本文とメタデータが大きすぎます")
    assert snapshot(site) == before


# --------------------------------------------------------------------------------- the CLI


@pytest.fixture
def cli_env(
    sshd_server: SshdRig, image_server: MediaServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    for name, value in sshd_server.environment().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("WP_AGENT_MEDIA_TEST_HOSTS", image_server.host_entry)
    monkeypatch.setenv("WP_AGENT_AUDIT_FILE", str(tmp_path / "audit.jsonl"))
    monkeypatch.setenv("LOG_LEVEL", "error")
    monkeypatch.setenv("HOME", str(tmp_path))  # ~/.wp-agent/published (publish once) of this test only
    yield tmp_path
    close_pooled_connections()  # the CLI runs in this process: its connection closes as at its exit


def write(directory: Path, document: Any) -> str:
    path = directory / "article.json"
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return str(path)


def test_cli_publishes_and_prints_only_the_output(
    site: TestWordPress, cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["publish", write(cli_env, article(status="publish", publishDate=None)), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    output = PublishArticleOutput.model_validate_json(captured.out)
    assert captured.out.count("\n") == 1
    post = created_post(site, output)
    assert post["post_status"] == "publish"
    audit = [json.loads(line) for line in (cli_env / "audit.jsonl").read_text().splitlines()]
    assert {record["type"] for record in audit} == {"command_executed"}
    assert any(record["command"].startswith("post create ") for record in audit)

    code = main(["publish", write(cli_env, article(status="draft", featuredImageUrl=None, tags=None))])
    captured = capsys.readouterr()
    assert code == 0
    assert captured.out.startswith("記事を下書きとして保存しました（投稿ID ")
    assert "編集: https://example.test/wp-admin/post.php?post=" in captured.out


def test_cli_publishes_an_article_once_and_prints_the_scheduled_date(
    site: TestWordPress, cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(cli_env, article(title="一度だけの記事"))
    assert main(["publish", path]) == 0
    first = capsys.readouterr().out
    assert "記事の予約投稿を設定しました（投稿ID " in first
    assert "公開予定日時: 2030-11-23 09:00:00（サイトのタイムゾーン）" in first
    post_id = int(first.split("投稿ID ")[1].split("）")[0])

    before = snapshot(site)
    assert main(["publish", path, "--json"]) == 0
    again = PublishArticleOutput.model_validate_json(capsys.readouterr().out)
    assert again.data is not None
    assert again.data.post_id == post_id  # the first post, answered again
    assert snapshot(site) == before  # nothing created the second time
    assert main(["publish", path]) == 0
    assert capsys.readouterr().out.startswith("この記事はすでに投稿済みです。")

    assert main(["publish", path, "--key", "another-run"]) == 0  # an explicit new key: a new post
    assert f"投稿ID {post_id}）" not in capsys.readouterr().out

    site.wp("post", "delete", str(post_id), "--force")  # gone from the site: published anew
    assert main(["publish", path, "--json"]) == 0
    renewed = PublishArticleOutput.model_validate_json(capsys.readouterr().out)
    assert renewed.data is not None
    assert renewed.data.post_id != post_id


@pytest.mark.parametrize(
    ("document", "fields"),
    [
        ({"content": "<p>x</p>", "status": "publish"}, ["title（必須項目です）"]),
        (article(status="future", publishDate=None), ["publishDate（status が future のときは必須です）"]),
        (
            article(featuredImageUrl="file:///etc/passwd", status="later"),
            ["status（", "featuredImageUrl（http:// または https://"],
        ),
        (
            article(publishDate="2020-01-01T09:00:00+09:00"),
            ["publishDate（予約公開には現在時刻より2分以上先"],
        ),
        ([ARTICLE], ["（JSONオブジェクトで指定してください）"]),
    ],
)
def test_cli_refuses_invalid_input_with_field_names(
    site: TestWordPress,
    cli_env: Path,
    capsys: pytest.CaptureFixture[str],
    document: Any,
    fields: list[str],
) -> None:
    before = snapshot(site)
    code = main(["publish", write(cli_env, document), "--json"])
    captured = capsys.readouterr()
    assert code == 2, captured
    assert captured.err.startswith("[VALIDATION_ERROR] 入力内容に誤りがあります: ")
    for field in fields:
        assert field in captured.err
    output = PublishArticleOutput.model_validate_json(captured.out)
    assert output.error is not None
    assert output.error.code == "VALIDATION_ERROR"
    assert snapshot(site) == before


def test_cli_reports_a_failed_publish(
    site: TestWordPress, cli_env: Path, missing_image_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["publish", write(cli_env, article(featuredImageUrl=missing_image_url))])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == ""
    assert captured.err.startswith("[PUBLISH_FAILED] アイキャッチ画像の取り込みに失敗しました")


# --------------------------------------------------------------------------------- failures midway


def test_failed_featured_image_import_leaves_nothing(
    site: TestWordPress, wp: SshWpCli, missing_image_url: str
) -> None:
    """The image URL answers 404: the agent's download fails before anything is staged, the draft goes."""
    before = snapshot(site)
    post_id = site.facts["next_post_id"]
    code, message = error_of(publish(wp, article(featuredImageUrl=missing_image_url)))
    assert code == "PUBLISH_FAILED"
    assert message == (
        "アイキャッチ画像の取り込みに失敗しました（WP-CLI: Error: 画像をダウンロードできませんでした（HTTP 404）:"
        f" {missing_image_url}）。この処理で作成した 投稿 ID {post_id} を削除しました。"
    )
    assert snapshot(site) == before


@pytest.mark.parametrize("failing", ["post term", "post update", "post get"])
def test_failure_after_the_post_was_created_is_rolled_back(
    site: TestWordPress, sshd_server: SshdRig, wp: SshWpCli, failing: str
) -> None:
    before = snapshot(site)
    post_id, term_id = site.facts["next_post_id"], site.facts["next_term_id"]
    sshd_server.set_fault(failing, error="Simulated failure", times=1)
    code, message = error_of(publish(wp, ARTICLE))
    assert code == "PUBLISH_FAILED"
    assert (
        f"（WP-CLI: Error: Simulated failure）。この処理で作成した 添付画像 ID {post_id + 1}、投稿 ID {post_id}、"
        in message
    )
    assert f"カテゴリ ID {term_id}（ai-katsuyou）" in message
    assert f"タグ ID {term_id + 1}（業務効率化）" in message
    assert message.endswith("を削除しました。")
    # No post, no orphan attachment (nor its file), no new terms, no meta.
    assert snapshot(site) == before


def test_failed_cleanup_says_what_is_left(site: TestWordPress, sshd_server: SshdRig, wp: SshWpCli) -> None:
    post_id, term_id = site.facts["next_post_id"], site.facts["next_term_id"]
    sshd_server.set_fault("post update", error="Simulated failure", times=1)
    sshd_server.set_fault("post delete", error="Simulated delete failure")
    code, message = error_of(publish(wp, ARTICLE))
    assert code == "PARTIAL_FAILURE"
    assert message == (
        "投稿の公開・予約に失敗しました（WP-CLI: Error: Simulated failure）。"
        f"この処理で作成した タグ ID {term_id + 1}（業務効率化）、カテゴリ ID {term_id}（ai-katsuyou） を削除しました。"
        f"添付画像 ID {post_id + 1}、投稿 ID {post_id} は削除できなかったため、サイトに残っています。"
        "WordPressの管理画面などで確認して削除してください。"
    )
    left = site.post(post_id)
    assert left is not None
    assert left["post_status"] == "draft"  # never published
    assert site.post(post_id + 1) is not None
