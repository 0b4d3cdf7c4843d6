"""`wp post ...` messages, exit codes and WordPress post behaviour in the simulator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.simulator_fixtures import SimSite

NOW = {"WP_SIM_NOW": "2025-06-01 00:00:00"}  # 09:00 in Asia/Tokyo


@pytest.fixture
def site(tmp_path: Path) -> SimSite:
    return SimSite.create(tmp_path)


def test_seed_facts(site: SimSite) -> None:
    assert site.store.get_post(45)["post_status"] == "draft"  # type: ignore[index]
    assert site.store.get_post(46)["post_status"] == "draft"  # type: ignore[index]
    assert site.store.get_post(47) is None
    statuses = {post["post_status"] for post in site.store.posts()}
    assert {"draft", "publish", "future", "private", "pending", "trash"} <= statuses


def test_create_reports_the_new_id(site: SimSite) -> None:
    result = site.wp("post", "create", "--post_title=新しい記事", "--post_content=本文")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "Success: Created post 57.\n", "")
    created = site.store.get_post(57)
    assert created is not None
    assert created["post_status"] == "draft"
    assert created["post_name"] == ""


def test_create_porcelain_prints_only_the_id(site: SimSite) -> None:
    assert site.wp("post", "create", "--post_title=x", "--porcelain").stdout == "57\n"


def test_create_without_content_fails(site: SimSite) -> None:
    result = site.wp("post", "create")
    assert (result.exit_code, result.stderr) == (1, "Error: Content, title, and excerpt are empty.\n")


def test_create_with_unknown_category_fails(site: SimSite) -> None:
    result = site.wp("post", "create", "--post_title=x", "--post_category=存在しない")
    assert result.stderr == "Error: No such post category '存在しない'.\n"


def test_create_with_categories_tags_and_meta(site: SimSite) -> None:
    created = site.wp(
        "post",
        "create",
        "--post_title=AI記事",
        "--post_status=publish",
        "--post_category=WordPress",
        "--tags_input=生成AI,新タグ",
        '--meta_input={"subtitle":"副題"}',
        "--porcelain",
        env=NOW,
    )
    post_id = created.stdout.strip()
    terms = site.wp("post", "term", "list", post_id, "category", "post_tag", "--field=slug")
    assert sorted(terms.stdout.splitlines()) == ["%e6%96%b0%e3%82%bf%e3%82%b0", "generative-ai", "wordpress"]
    assert site.wp("post", "meta", "get", post_id, "subtitle").stdout == "副題\n"
    post = site.store.get_post(int(post_id))
    assert post is not None
    assert post["post_name"] == "ai%e8%a8%98%e4%ba%8b"
    assert post["post_date"] == "2025-06-01 09:00:00"


def test_get_missing_post(site: SimSite) -> None:
    result = site.wp("post", "get", "47")
    assert (result.exit_code, result.stdout, result.stderr) == (
        1,
        "",
        "Error: Could not find the post with ID 47.\n",
    )


def test_get_returns_all_fields_with_url(site: SimSite) -> None:
    data = json.loads(site.wp("post", "get", "1", "--format=json").stdout)
    assert data["post_title"] == "Argo Note へようこそ"
    assert data["url"] == "https://example.test/welcome/"
    assert "filter" not in data
    assert data["post_author"] == "1"


def test_update_message(site: SimSite) -> None:
    result = site.wp("post", "update", "45", "--post_title=改題")
    assert (result.exit_code, result.stdout) == (0, "Success: Updated post 45.\n")
    assert site.store.get_post(45)["post_title"] == "改題"  # type: ignore[index]


def test_update_needs_fields(site: SimSite) -> None:
    assert site.wp("post", "update", "45").stderr == "Error: Need some fields to update.\n"


def test_multi_id_update_exit_code_follows_the_last_id(site: SimSite) -> None:
    missing_first = site.wp("post", "update", "47", "45", "--post_status=pending")
    assert missing_first.exit_code == 0
    assert missing_first.stdout == "Success: Updated post 45.\n"
    assert missing_first.stderr == "Warning: Invalid post ID.\n"
    missing_last = site.wp("post", "update", "45", "47", "--post_status=pending")
    assert missing_last.exit_code == 1
    assert missing_last.stdout == "Success: Updated post 45.\n"
    assert missing_last.stderr == "Warning: Invalid post ID.\n"


def test_delete_trashes_then_deletes(site: SimSite) -> None:
    first = site.wp("post", "delete", "45")
    assert (first.exit_code, first.stdout) == (0, "Success: Trashed post 45.\n")
    assert site.store.get_post(45)["post_status"] == "trash"  # type: ignore[index]
    second = site.wp("post", "delete", "45")
    assert second.stdout == "Success: Deleted post 45.\n"
    assert site.store.get_post(45) is None


def test_delete_force_skips_trash(site: SimSite) -> None:
    result = site.wp("post", "delete", "46", "--force")
    assert result.stdout == "Success: Deleted post 46.\n"
    assert site.store.get_post(46) is None


def test_attachments_cannot_be_trashed(site: SimSite) -> None:
    result = site.wp("post", "delete", "30")
    assert result.exit_code == 1
    assert result.stderr == (
        "Warning: Posts of type 'attachment' do not support being sent to trash.\n"
        "Please use the --force flag to skip trash and delete them permanently.\n"
    )
    assert site.wp("post", "delete", "30", "--force").stdout == "Success: Deleted post 30.\n"


def test_delete_missing_ids(site: SimSite) -> None:
    trash = site.wp("post", "delete", "45", "47")
    assert trash.exit_code == 1
    assert trash.stdout == "Success: Trashed post 45.\n"
    assert "Posts of type '' do not support being sent to trash." in trash.stderr
    forced = site.wp("post", "delete", "47", "--force")
    assert (forced.exit_code, forced.stderr) == (1, "Warning: Failed deleting post 47.\n")


def test_exists(site: SimSite) -> None:
    assert site.wp("post", "exists", "45").stdout == "Success: Post with ID 45 exists.\n"
    missing = site.wp("post", "exists", "47")
    assert (missing.exit_code, missing.stdout, missing.stderr) == (1, "", "")


def test_list_defaults(site: SimSite) -> None:
    ids = site.wp("post", "list", "--format=ids").stdout.split()
    assert "22" not in ids  # trash is not part of post_status=any
    assert "2" not in ids  # pages are not posts
    assert ids[0] == "25"  # newest first: the scheduled post
    pages = site.wp("post", "list", "--post_type=page", "--format=ids").stdout
    assert pages == "6 5 3 2"
    media = site.wp("post", "list", "--post_type=attachment", "--field=post_mime_type").stdout.split()
    assert sorted(media) == ["application/pdf", "image/jpeg", "image/png"]


def test_list_filters(site: SimSite) -> None:
    assert site.wp("post", "list", "--post_status=trash", "--format=ids").stdout == "22"
    assert site.wp("post", "list", "--post__in=10,1", "--orderby=post__in", "--format=ids").stdout == "10 1"
    assert site.wp("post", "list", "--author=3", "--post_status=publish", "--format=ids").stdout == "12 11"
    assert site.wp("post", "list", "--s=SEO", "--format=ids").stdout == "11"
    assert site.wp("post", "list", "--category_name=news", "--format=ids").stdout == "25 55 48"
    assert site.wp("post", "list", "--posts_per_page=2", "--format=ids").stdout == "25 55"


def test_publishing_a_draft_gets_a_slug(site: SimSite) -> None:
    site.wp("post", "update", "46", "--post_status=publish", env=NOW)
    post = site.store.get_post(46)
    assert post is not None
    assert post["post_status"] == "publish"
    assert (
        post["post_name"]
        == "wp-cli%e3%81%a7%e5%a7%8b%e3%82%81%e3%82%8b%e9%81%8b%e7%94%a8%e8%87%aa%e5%8b%95%e5%8c%96"
    )
    assert post["post_date"] == "2025-06-01 09:00:00"


def test_scheduling_a_draft_needs_edit_date(site: SimSite) -> None:
    # WordPress resets a draft's floating date unless edit_date is set: the post goes live now.
    site.wp("post", "update", "45", "--post_status=future", "--post_date=2025-06-02 09:00:00", env=NOW)
    clobbered = site.store.get_post(45)
    assert clobbered is not None
    assert (clobbered["post_status"], clobbered["post_date"]) == ("publish", "2025-06-01 09:00:00")

    site.wp(
        "post",
        "update",
        "46",
        "--post_status=future",
        "--post_date=2025-06-02 09:00:00",
        "--edit_date=1",
        env=NOW,
    )
    scheduled = site.store.get_post(46)
    assert scheduled is not None
    assert scheduled["post_status"] == "future"
    assert (scheduled["post_date"], scheduled["post_date_gmt"]) == (
        "2025-06-02 09:00:00",
        "2025-06-02 00:00:00",
    )


def test_publish_with_future_date_becomes_future(site: SimSite) -> None:
    result = site.wp(
        "post",
        "create",
        "--post_title=予約",
        "--post_status=publish",
        "--post_date=2030-01-01 09:00:00",
        "--porcelain",
        env=NOW,
    )
    post = site.store.get_post(int(result.stdout))
    assert post is not None
    assert post["post_status"] == "future"


def test_post_meta_commands(site: SimSite) -> None:
    assert site.wp("post", "meta", "list", "10", "--format=count").stdout == "2"
    assert site.wp("post", "meta", "get", "10", "subtitle").stdout == "初心者向け完全ガイド\n"
    assert site.wp("post", "meta", "get", "10", "missing").exit_code == 1
    assert site.wp("post", "meta", "add", "10", "k", "v").stdout == "Success: Added custom field.\n"
    assert site.wp("post", "meta", "update", "10", "k", "v").stdout == (
        "Success: Value passed for custom field 'k' is unchanged.\n"
    )
    assert site.wp("post", "meta", "update", "10", "k", "w").stdout == "Success: Updated custom field 'k'.\n"
    assert site.wp("post", "meta", "delete", "10", "k").stdout == "Success: Deleted custom field.\n"
    assert site.wp("post", "meta", "delete", "10", "k").stderr == "Error: Failed to delete custom field.\n"
    assert site.wp("post", "meta", "list", "47").stderr == "Error: Could not find the post with ID 47.\n"


def test_post_term_commands(site: SimSite) -> None:
    assert site.wp("post", "term", "add", "45", "category", "marketing").stdout == "Success: Added term.\n"
    assert site.wp("post", "term", "set", "45", "post_tag", "beginner", "tutorial").stdout == (
        "Success: Set terms.\n"
    )
    listed = site.wp("post", "term", "list", "45", "category", "post_tag", "--field=slug").stdout.split()
    assert sorted(listed) == ["beginner", "marketing", "tutorial", "uncategorized"]
    assert (
        site.wp("post", "term", "remove", "45", "category", "marketing").stdout == "Success: Removed term.\n"
    )
    assert site.wp("post", "term", "list", "45", "genre").stderr == "Error: Invalid taxonomy genre.\n"


def test_url_to_id(site: SimSite) -> None:
    assert site.wp("post", "url-to-id", "https://example.test/welcome/").stdout == "1\n"
    missing = site.wp("post", "url-to-id", "https://example.test/nothing/")
    assert missing.stderr == "Error: Could not get post with url https://example.test/nothing/.\n"
