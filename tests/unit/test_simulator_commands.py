"""Term, option, user, theme, plugin, comment, menu, media and maintenance commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.simulator_fixtures import SimSite


@pytest.fixture
def site(tmp_path: Path) -> SimSite:
    return SimSite.create(tmp_path)


# ------------------------------------------------------------------------------------ terms


def test_term_create_and_duplicate(site: SimSite) -> None:
    created = site.wp("term", "create", "category", "AI活用", "--description=生成AIの活用")
    assert (created.exit_code, created.stdout) == (0, "Success: Created category 13.\n")
    duplicate = site.wp("term", "create", "category", "AI活用")
    assert (duplicate.exit_code, duplicate.stderr) == (
        1,
        "Error: A term with the name provided already exists with this parent.\n",
    )
    tag = site.wp("term", "create", "post_tag", "初心者")
    assert tag.stderr == "Error: A term with the name provided already exists in this taxonomy.\n"
    assert site.wp("term", "create", "post_tag", "新しいタグ", "--porcelain").stdout == "14\n"


def test_term_list_and_get(site: SimSite) -> None:
    names = site.wp("term", "list", "category", "--field=name").stdout.splitlines()
    assert "未分類" in names
    assert "AI活用" not in names
    term = json.loads(
        site.wp("term", "get", "category", "uncategorized", "--by=slug", "--format=json").stdout
    )
    assert (term["term_id"], term["name"]) == (1, "未分類")
    assert site.wp("term", "get", "category", "999").stderr == "Error: Term doesn't exist.\n"
    assert site.wp("term", "list", "genre").stderr == "Error: Taxonomy genre doesn't exist.\n"


def test_term_update_and_delete(site: SimSite) -> None:
    assert site.wp("term", "update", "category", "3", "--name=WP").stdout == "Success: Term updated.\n"
    deleted = site.wp("term", "delete", "category", "5")
    assert deleted.stdout == "Deleted category 5.\nSuccess: Deleted 1 of 1 terms.\n"
    missing = site.wp("term", "delete", "category", "99")
    assert (missing.exit_code, missing.stdout, missing.stderr) == (
        0,
        "Success: Term already deleted.\n",
        "Warning: category 99 doesn't exist.\n",
    )


# ------------------------------------------------------------------------------------ options


def test_option_get_update_delete(site: SimSite) -> None:
    assert site.wp("option", "get", "home").stdout == "https://example.test\n"
    assert site.wp("option", "get", "timezone_string").stdout == "Asia/Tokyo\n"
    assert site.wp("option", "get", "nope").stderr == "Error: Could not get 'nope' option. Does it exist?\n"
    assert (
        site.wp("option", "update", "blogname", "新サイト").stdout == "Success: Updated 'blogname' option.\n"
    )
    assert site.wp("option", "update", "blogname", "新サイト").stdout == (
        "Success: Value passed for 'blogname' option is unchanged.\n"
    )
    assert site.wp("option", "add", "blogname", "x").stderr == (
        "Error: Could not add option 'blogname'. Does it already exist?\n"
    )
    deleted = site.wp("option", "delete", "blogdescription", "nope")
    assert deleted.exit_code == 0
    assert deleted.stdout == "Success: Deleted 'blogdescription' option.\n"
    assert deleted.stderr == "Warning: Could not delete 'nope' option. Does it exist?\n"


def test_option_arrays(site: SimSite) -> None:
    assert site.wp("option", "get", "active_plugins", "--format=json").stdout == (
        '["akismet\\/akismet.php","contact-form-7\\/wp-contact-form-7.php",'
        '"wp-multibyte-patch\\/wp-multibyte-patch.php"]\n'
    )
    assert site.wp("option", "get", "active_plugins").stdout.startswith(
        "array (\n  0 => 'akismet/akismet.php',\n"
    )
    listed = site.wp("option", "list", "--search=active_plugins", "--format=csv").stdout
    assert 'a:3:{i:0;s:19:""akismet/akismet.php""' in listed
    site.wp("option", "add", "argo_settings", '{"mode":"ai"}', "--format=json")
    assert site.wp("option", "pluck", "argo_settings", "mode").stdout == "ai\n"


# ------------------------------------------------------------------------------------ users


def test_user_list_and_get(site: SimSite) -> None:
    logins = site.wp("user", "list", "--field=user_login").stdout.split()
    assert logins == ["admin", "hanako", "taro", "yuki"]
    admin = json.loads(site.wp("user", "get", "admin", "--format=json").stdout)
    assert (admin["ID"], admin["roles"]) == ("1", "administrator")
    assert admin["user_pass"].startswith("$P$B")
    assert site.wp("user", "get", "nobody").stderr == "Error: Invalid user ID, email or login: 'nobody'\n"
    assert site.wp("user", "list", "--role=editor", "--format=ids").stdout == "2"


def test_user_create_update_delete(site: SimSite) -> None:
    created = site.wp("user", "create", "kenji", "kenji@example.test", "--role=author", "--user_pass=pw")
    assert created.stdout == "Success: Created user 5.\n"
    generated = site.wp("user", "create", "sakura", "sakura@example.test")
    assert generated.stdout.startswith("Success: Created user 6.\nPassword: ")
    assert site.wp("user", "create", "kenji", "k2@example.test").stderr == (
        "Error: The 'kenji' username is already registered.\n"
    )
    assert site.wp("user", "create", "mika", "mika@example.test", "--role=wizard").stderr == (
        "Error: Role doesn't exist: wizard\n"
    )
    updated = site.wp("user", "update", "2", "99", "--display_name=花子さん")
    assert (updated.exit_code, updated.stdout) == (0, "Success: Updated user 2.\n")
    assert updated.stderr == "Warning: Invalid user ID, email or login: '99'\n"
    assert site.wp("user", "set-role", "taro", "editor").stdout == (
        "Success: Added taro (3) to https://example.test as editor.\n"
    )
    unconfirmed = site.wp("user", "delete", "4")
    assert (unconfirmed.exit_code, unconfirmed.stdout) == (
        0,
        "--reassign parameter not passed. All associated posts will be deleted. Proceed? [y/n] ",
    )
    assert (
        site.wp("user", "delete", "4", "--yes").stdout
        == "Success: Removed user 4 from https://example.test.\n"
    )
    assert site.wp("user", "delete", "3", "--reassign=1").stdout == (
        "Success: Removed user 3 from https://example.test.\n"
    )
    assert site.store.get_post(11)["post_author"] == "1"  # type: ignore[index]


# ------------------------------------------------------------------------------------ themes


def test_theme_list_and_activate(site: SimSite) -> None:
    listed = site.wp("theme", "list", "--status=active", "--format=csv").stdout
    assert (
        listed
        == "name,status,update,version,update_version,auto_update\ntwentytwentyfour,active,available,1.1,1.2,off\n"
    )
    assert site.wp("theme", "activate", "twentytwentythree").stdout == (
        "Success: Switched to 'Twenty Twenty-Three' theme.\n"
    )
    again = site.wp("theme", "activate", "twentytwentythree")
    assert (again.exit_code, again.stderr) == (
        0,
        "Warning: The 'Twenty Twenty-Three' theme is already active.\n",
    )
    assert site.wp("theme", "is-active", "twentytwentyfour").exit_code == 1


def test_ambiguous_theme_name_gets_a_suggestion(site: SimSite) -> None:
    result = site.wp("theme", "activate", "flavor-flavour")
    assert (result.exit_code, result.stderr) == (
        1,
        "Error: The 'flavor-flavour' theme could not be found. Did you mean 'flavor-flavor'?\n",
    )


def test_theme_install_and_delete(site: SimSite) -> None:
    installed = site.wp("theme", "install", "astra")
    assert installed.stdout.splitlines()[0] == "Installing Astra (4.7.3)"
    assert installed.stdout.endswith("Theme installed successfully.\nSuccess: Installed 1 of 1 themes.\n")
    unknown = site.wp("theme", "install", "no-such-theme")
    assert (unknown.exit_code, unknown.stderr) == (
        1,
        "Warning: no-such-theme: Theme not found\nError: No themes installed.\n",
    )
    active = site.wp("theme", "delete", "twentytwentyfour")
    assert active.stderr == (
        "Warning: Can't delete the currently active theme: twentytwentyfour\nError: No themes deleted.\n"
    )
    assert (
        site.wp("theme", "delete", "astra").stdout
        == "Deleted 'astra' theme.\nSuccess: Deleted 1 of 1 themes.\n"
    )


# ------------------------------------------------------------------------------------ plugins


def test_plugin_activate_and_deactivate(site: SimSite) -> None:
    assert site.wp("plugin", "activate", "hello-dolly").stdout == (
        "Plugin 'hello-dolly' activated.\nSuccess: Activated 1 of 1 plugins.\n"
    )
    already = site.wp("plugin", "activate", "hello-dolly")
    assert (already.stdout, already.stderr) == (
        "Success: Plugin already activated.\n",
        "Warning: Plugin 'hello-dolly' is already active.\n",
    )
    assert site.wp("plugin", "deactivate", "akismet").stdout == (
        "Plugin 'akismet' deactivated.\nSuccess: Deactivated 1 of 1 plugins.\n"
    )
    missing = site.wp("plugin", "activate", "nope")
    assert (missing.exit_code, missing.stderr) == (
        1,
        "Warning: The 'nope' plugin could not be found.\nError: No plugins activated.\n",
    )
    assert site.wp("plugin", "is-active", "hello-dolly").exit_code == 0
    assert site.wp("plugin", "is-installed", "nope").exit_code == 1


def test_plugin_install_from_catalogue(site: SimSite) -> None:
    installed = site.wp("plugin", "install", "wordpress-seo", "--activate")
    assert installed.stdout == (
        "Installing Yoast SEO (23.1)\n"
        "Downloading install package from https://downloads.wordpress.org/plugin/wordpress-seo.23.1.zip...\n"
        "Unpacking the package...\n"
        "Installing the plugin...\n"
        "Plugin installed successfully.\n"
        "Activating 'wordpress-seo'...\n"
        "Plugin 'wordpress-seo' activated.\n"
        "Success: Installed 1 of 1 plugins.\n"
    )
    again = site.wp("plugin", "install", "akismet")
    assert (again.stdout, again.stderr) == (
        "Success: Plugin already installed.\n",
        "Warning: akismet: Plugin already installed.\n",
    )
    unknown = site.wp("plugin", "install", "no-such-plugin")
    assert unknown.stderr == "Warning: no-such-plugin: Plugin not found.\nError: No plugins installed.\n"


def test_plugin_update_and_list(site: SimSite) -> None:
    rows = json.loads(site.wp("plugin", "list", "--update=available", "--format=json").stdout)
    assert [row["name"] for row in rows] == ["akismet", "contact-form-7"]
    updated = site.wp("plugin", "update", "akismet")
    assert updated.stdout.endswith("akismet\t5.3.2\t5.3.3\tUpdated\nSuccess: Updated 1 of 1 plugins.\n")
    assert site.wp("plugin", "update", "akismet").stdout == "Success: Plugin already updated.\n"
    assert site.wp("plugin", "update").stderr == "Error: Please specify one or more plugins, or use --all.\n"


def test_plugin_uninstall_requires_inactive(site: SimSite) -> None:
    active = site.wp("plugin", "uninstall", "akismet")
    assert active.stderr == "Warning: The 'akismet' plugin is active.\nError: No plugins uninstalled.\n"
    done = site.wp("plugin", "uninstall", "hello-dolly")
    assert (
        done.stdout == "Uninstalled and deleted 'hello-dolly' plugin.\nSuccess: Uninstalled 1 of 1 plugins.\n"
    )


# ------------------------------------------------------------------------------------ comments, menus, media


def test_comments(site: SimSite) -> None:
    assert site.wp("comment", "list", "--format=ids").stdout == "5 3 2 1"
    assert site.wp("comment", "count").stdout == (
        "approved:        3\nspam:            1\ntrash:           1\npost-trashed:    0\n"
        "all:             4\nmoderated:       1\ntotal_comments:  5\n"
    )
    assert site.wp("comment", "approve", "3").stdout == "Success: Approved comment 3.\n"
    assert site.wp("comment", "delete", "3").stdout == "Success: Trashed comment 3.\n"
    assert site.wp("comment", "delete", "3", "--force").stdout == "Success: Deleted comment 3.\n"
    assert site.wp("comment", "get", "99").stderr == "Error: Could not find the comment with ID 99.\n"
    created = site.wp("comment", "create", "--comment_post_ID=10", "--comment_content=参考になりました")
    assert created.stdout == "Success: Created comment 7.\n"


def test_menus(site: SimSite) -> None:
    assert site.wp("menu", "list", "--fields=name,locations").stdout == (
        "name\tlocations\nフッターメニュー\tfooter\nメインメニュー\tprimary\n"
    )
    assert site.wp("menu", "create", "サイドメニュー").stdout == "Success: Created menu 13.\n"
    assert site.wp("menu", "item", "add-post", "サイドメニュー", "10").stdout == "Success: Menu item added.\n"
    items = site.wp("menu", "item", "list", "side-menu", "--format=json")
    assert items.stderr == "Error: Invalid menu.\n"
    titles = site.wp("menu", "item", "list", "main-menu", "--fields=title", "--format=csv").stdout
    assert titles == "title\n会社概要\nブログ\n"
    assert site.wp("menu", "location", "assign", "サイドメニュー", "footer").stdout == (
        "Success: Assigned location footer to menu サイドメニュー.\n"
    )
    assert site.wp("menu", "location", "assign", "サイドメニュー", "nowhere").stderr == (
        "Error: Invalid location nowhere.\n"
    )


def test_media_import_records_an_attachment(site: SimSite) -> None:
    result = site.wp(
        "media",
        "import",
        "https://cdn.example.test/photos/hero.jpg",
        "--post_id=46",
        "--featured_image",
        env={"WP_SIM_NOW": "2025-06-01 00:00:00"},
    )
    assert result.stdout == (
        "Imported file 'https://cdn.example.test/photos/hero.jpg' as attachment ID 57 and attached to post 46 "
        "as featured image.\nSuccess: Imported 1 of 1 items.\n"
    )
    attachment = site.store.get_post(57)
    assert attachment is not None
    assert (attachment["post_type"], attachment["post_mime_type"], attachment["post_title"]) == (
        "attachment",
        "image/jpeg",
        "hero",
    )
    assert attachment["guid"] == "https://example.test/wp-content/uploads/2025/06/hero.jpg"
    assert site.store.get_post_meta(46, "_thumbnail_id") == ["57"]
    missing = site.wp("media", "import", "/nowhere/photo.png")
    assert missing.stderr == (
        "Warning: Unable to import file '/nowhere/photo.png'. Reason: File doesn't exist.\n"
        "Error: No items imported.\n"
    )


def test_maintenance_commands(site: SimSite) -> None:
    assert site.wp("cache", "flush").stdout == "Success: The cache was flushed.\n"
    assert site.wp("rewrite", "flush").stdout == "Success: Rewrite rules flushed.\n"
    assert site.wp("core", "version").stdout == "6.5.5\n"
    assert "page\tPages" in site.wp("post-type", "list").stdout
    assert site.wp("taxonomy", "list", "--field=name").stdout.splitlines()[:2] == ["category", "post_tag"]
    assert site.wp("role", "list", "--field=role").stdout.split() == [
        "administrator",
        "editor",
        "author",
        "contributor",
        "subscriber",
    ]
