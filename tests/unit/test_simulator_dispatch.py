"""Command lookup, argument validation, global options and multisite `--url` in the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.simulator_fixtures import SimSite
from wp_agent.simulator import run_wp

NOT_WORDPRESS = (
    "Error: This does not seem to be a WordPress installation.\n"
    "Pass --path=`path/to/wordpress` or run `wp core download`.\n"
)


@pytest.fixture
def site(tmp_path: Path) -> SimSite:
    return SimSite.create(tmp_path)


def test_unknown_command(site: SimSite) -> None:
    result = site.wp("eval", "echo 1;")
    assert (result.exit_code, result.stdout, result.stderr) == (
        1,
        "",
        "Error: 'eval' is not a registered wp command. See 'wp help' for available commands.\n",
    )


def test_unknown_command_with_suggestion(site: SimSite) -> None:
    result = site.wp("pots", "list")
    assert result.stderr == (
        "Error: 'pots' is not a registered wp command. See 'wp help' for available commands.\n"
        "Did you mean 'post'?\n"
    )


def test_unknown_subcommand(site: SimSite) -> None:
    result = site.wp("media", "list")
    assert (result.exit_code, result.stderr) == (
        1,
        "Error: 'list' is not a registered subcommand of 'media'. See 'wp help media' for available subcommands.\n",
    )
    nested = site.wp("post", "meta", "lst", "1")
    assert nested.stderr == (
        "Error: 'lst' is not a registered subcommand of 'post meta'. "
        "See 'wp help post meta' for available subcommands.\nDid you mean 'list'?\n"
    )


def test_post_type_and_taxonomy_hints(site: SimSite) -> None:
    assert site.wp("page", "list").stderr.endswith("Did you mean 'wp post --post_type=page <command>'?\n")
    assert site.wp("category", "list").stderr.endswith("Did you mean 'wp term <command>'?\n")


def test_composite_command_shows_usage(site: SimSite) -> None:
    result = site.wp("post", "meta")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "usage: wp post meta add <id> <key> [<value>] [--format=<format>]"
    assert lines[-1] == "See 'wp help post meta <command>' for more information on a specific command."


def test_missing_positional_prints_usage(site: SimSite) -> None:
    result = site.wp("post", "get")
    assert (result.exit_code, result.stdout) == (
        1,
        "usage: wp post get <id> [--field=<field>] [--fields=<fields>] [--format=<format>]\n",
    )


def test_parameter_errors(site: SimSite) -> None:
    assert site.wp("post", "get", "1", "2").stderr == "Error: Too many positional arguments: 2\n"
    assert (
        site.wp("post", "get", "1", "--foo=bar").stderr
        == "Error: Parameter errors:\n unknown --foo parameter\n"
    )


def test_no_wordpress_without_path() -> None:
    result = run_wp(["post", "list"], env={})
    assert (result.exit_code, result.stderr) == (1, NOT_WORDPRESS)


def test_no_wordpress_in_missing_directory(tmp_path: Path) -> None:
    result = run_wp([f"--path={tmp_path / 'missing'}", "post", "list"], env={})
    assert result.stderr == NOT_WORDPRESS
    unknown = run_wp([f"--path={tmp_path / 'missing'}", "foo"], env={})
    assert unknown.stderr == (
        "Warning: No WordPress installation found. If the command 'foo' is in a plugin or theme, "
        "pass --path=`path/to/wordpress`.\n"
        "Error: 'foo' is not a registered wp command. See 'wp help' for available commands.\n"
    )


def test_site_file_from_environment(tmp_path: Path) -> None:
    site_file = tmp_path / "elsewhere" / "site.json"
    result = run_wp(["option", "get", "blogname"], env={"WP_SIM_SITE": str(site_file)})
    assert result.stdout == "Argo Note サンプルサイト\n"
    assert site_file.exists()


def test_global_options_anywhere(site: SimSite) -> None:
    result = site.wp("post", "--skip-plugins", "get", "45", "--skip-themes", "--no-color", "--field=ID")
    assert result.stdout == "45\n"


def test_quiet_hides_success_and_warnings_but_not_errors(site: SimSite) -> None:
    assert site.wp("--quiet", "post", "update", "47", "45", "--post_title=x").stdout == ""
    assert site.wp("--quiet", "post", "update", "47", "45", "--post_title=x").stderr == ""
    assert site.wp("--quiet", "post", "get", "47").stderr == "Error: Could not find the post with ID 47.\n"
    assert site.wp("--quiet", "post", "create", "--post_title=x", "--porcelain").stdout == "57\n"


def test_user_option_sets_the_author(site: SimSite) -> None:
    created = site.wp("--user=hanako", "post", "create", "--post_title=x", "--porcelain")
    assert site.store.get_post(int(created.stdout))["post_author"] == "2"  # type: ignore[index]
    assert (
        site.wp("--user=nobody", "post", "list").stderr
        == "Error: Invalid user ID, email or login: 'nobody'\n"
    )


def test_help(site: SimSite) -> None:
    assert "  post " in site.wp("help").stdout
    assert site.wp("help", "post", "get").stdout.splitlines()[-1] == (
        "  wp post get <id> [--field=<field>] [--fields=<fields>] [--format=<format>]"
    )


# ------------------------------------------------------------------------------------ multisite


def test_url_selects_a_network_site(site: SimSite) -> None:
    assert (
        site.wp("--url=https://example.test/en/", "option", "get", "blogname").stdout == "Argo Note English\n"
    )
    assert site.wp("--url=example.test/shop", "post", "list", "--field=post_title").stdout == (
        "ショップオープンのお知らせ\n"
    )
    assert (
        site.wp("--url=https://example.test/", "option", "get", "blogname").stdout
        == "Argo Note サンプルサイト\n"
    )


def test_unknown_url(site: SimSite) -> None:
    result = site.wp("--url=https://other.test/", "post", "list")
    assert (result.exit_code, result.stderr) == (
        1,
        "Error: Site 'other.test/' not found. Verify `--url=<url>` matches an existing site.\n",
    )


def test_site_list_create_delete(site: SimSite) -> None:
    assert site.wp("site", "list", "--field=url").stdout == (
        "https://example.test/\nhttps://example.test/en/\nhttps://example.test/shop/\n"
    )
    assert site.wp("site", "create", "--slug=news", "--title=ニュース").stdout == (
        "Success: Site 4 created: https://example.test/news/\n"
    )
    assert site.wp("--url=https://example.test/news/", "post", "list", "--field=post_title").stdout == (
        "Hello world!\n"
    )
    assert site.wp("site", "delete", "1", "--yes").stderr == "Error: You cannot delete the root site.\n"
    assert site.wp("site", "delete", "4", "--yes").stdout == (
        "Success: The site at 'https://example.test/news/' was deleted.\n"
    )


def test_single_site_has_no_network(site: SimSite) -> None:
    site.store.set_multisite(False)
    result = site.wp("site", "list")
    assert (result.exit_code, result.stderr) == (1, "Error: This is not a multisite installation.\n")
    assert (
        site.wp("--url=https://other.test/", "option", "get", "blogname").stdout
        == "Argo Note サンプルサイト\n"
    )
