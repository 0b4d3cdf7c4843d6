"""Every rule sees the canonical command WP-CLI runs: aliases never change a decision."""

from __future__ import annotations

import pytest

from wp_agent.command_line.aliases import canonical_argv
from wp_agent.errors import ConfigurationError
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.custom_rules import load_custom_rules

POLICY = CommandPolicy()


@pytest.mark.parametrize(
    ("spelled", "canonical"),
    [
        ("option set siteurl http://x", "option update siteurl http://x"),
        (
            "--url=http://a/ option --autoload=no set blogname x",
            "--url=http://a/ option update blogname --autoload=no x",
        ),
        ("sql query x", "db query x"),
        ("blog option set home x", "site option update home x"),
        ("post-meta set 5 k v", "post meta update 5 k v"),
        ("evilpost-metax set 5 k v", "post meta update 5 k v"),
        ("user meta set 2 wp_capabilities x", "user meta update 2 wp_capabilities x"),
        ("theme uninstall twentytwenty", "theme delete twentytwenty"),
        ("plugin upgrade akismet", "plugin update akismet"),
        ("plugin update-all", "plugin update --all"),
        ("transient delete-all", "transient delete --all"),
        ("core language install ja", "language core install ja"),
        ("checksum plugin akismet", "plugin verify-checksums akismet"),
        ("db dump -", "db export -"),
        ("post list --format=json", "post list --format=json"),
        ("option get set", "option get set"),
    ],
)
def test_canonical_argv(spelled: str, canonical: str) -> None:
    assert canonical_argv(spelled.split()) == tuple(canonical.split())


@pytest.mark.parametrize(
    ("alias", "original"),
    [
        ("option set siteurl http://evil.example", "option update siteurl http://evil.example"),
        ("option set default_role administrator", "option update default_role administrator"),
        ("theme uninstall twentytwenty", "theme delete twentytwenty"),
        ("plugin update-all", "plugin update --all"),
        ("blog delete 2", "site delete 2"),
        ("sql query 'SELECT 1'", "db query 'SELECT 1'"),
        ("db dump -", "db export -"),
        ("core upgrade", "core update"),
        ("user meta set 2 wp_capabilities '{}'", "user meta update 2 wp_capabilities '{}'"),
        ("post-meta set 5 _thumbnail_id 7", "post meta update 5 _thumbnail_id 7"),
    ],
)
def test_an_alias_is_decided_as_its_canonical_command(alias: str, original: str) -> None:
    by_alias, by_name = POLICY.classify(alias), POLICY.classify(original)
    assert (by_alias.category, by_alias.rule, by_alias.argv) == (by_name.category, by_name.rule, by_name.argv)


def test_the_canonical_argv_is_what_runs() -> None:
    decision = POLICY.classify("option set blogname 新しい名前")
    assert decision.argv == ("option", "update", "blogname", "新しい名前")
    assert decision.command_path == ("option", "update")
    assert decision.category is PolicyCategory.DESTRUCTIVE


def test_custom_allow_of_option_and_sql_cannot_open_hard_blocks_or_skip_approval() -> None:
    with pytest.raises(ConfigurationError):
        CommandPolicy(load_custom_rules(None, '{"allow": ["option", "sql"]}'))
    policy = CommandPolicy(load_custom_rules(None, '{"allow": ["option", "site"]}'))
    assert policy.classify("option set siteurl http://evil.example").category is PolicyCategory.DESTRUCTIVE
    assert policy.classify("sql query 'SELECT user_pass FROM wp_users'").rule == "blocked.database"
    assert policy.classify("blog empty --yes").rule == "blocked.site_empty"


@pytest.mark.parametrize("rule", ["option set", "option update"])
def test_custom_deny_and_confirm_match_every_spelling(rule: str) -> None:
    deny = CommandPolicy(load_custom_rules(None, f'{{"deny": ["{rule}"]}}'))
    assert deny.classify("option set posts_per_page 5").blocked
    assert deny.classify("option update posts_per_page 5").blocked
    confirm = CommandPolicy(load_custom_rules(None, f'{{"confirm": ["{rule}"]}}'))
    assert confirm.classify("option set posts_per_page 5").needs_approval


def test_custom_allow_cannot_lower_a_built_in_category() -> None:
    with pytest.raises(ConfigurationError, match="post delete"):
        CommandPolicy(load_custom_rules(None, '{"allow": [{"command": "post delete", "category": "write"}]}'))
    with pytest.raises(ConfigurationError):
        CommandPolicy(load_custom_rules(None, '{"allow": [{"command": "option set", "category": "read"}]}'))


def test_a_custom_read_command_still_gets_argument_rules() -> None:
    policy = CommandPolicy(load_custom_rules(None, '{"allow": [{"command": "yoast", "category": "read"}]}'))
    assert policy.classify("yoast index").category is PolicyCategory.READ
    assert policy.classify("yoast index --network").needs_approval  # network-wide: held, custom read or not
