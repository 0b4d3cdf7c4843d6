"""Hooks, file placement, internal post types and versions: what would run code, change
settings or write files where it should not."""

from __future__ import annotations

import pytest

from wp_agent.errors import ConfigurationError
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.custom_rules import load_custom_rules

POLICY = CommandPolicy()
B, D, W = PolicyCategory.BLOCKED, PolicyCategory.DESTRUCTIVE, PolicyCategory.WRITE


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cron event schedule importer_scheduled_cleanup now --0=7", B),
        ("cron event schedule wp_version_check", B),
        ("cron event run --due-now", B),
        ("option patch insert cron 1700000000 '{\"importer_scheduled_cleanup\":{}}' --format=json", B),
        ("option set cron '{}' --format=json", B),
        ("option delete cron", B),
        ("option update upload_path /var/www/html", B),
        ("option update upload_url_path https://evil.example/", B),
        ("option add UPLOAD_PATH x", B),
        ("plugin install contact-form-7 --version=5.3.1 --activate", D),
        ("theme install astra --version=1.0.0", D),
        ("plugin install akismet --force", D),
        ("theme install astra --force", D),
        ("plugin update akismet --version=4.0", D),
        ("plugin install akismet --activate", D),  # activation runs the plugin's code (issue 24)
        ("plugin install akismet", D),  # third-party PHP files in the web root (issue 24)
        ("post create --post_type=customize_changeset --post_status=publish --post_content='{}'", B),
        ("post create --post_type=user_request --post_title=a@example.com", B),
        ("post update 8 --post_type=scheduled-action", B),
        ("post create --post_type=page --post_title=会社概要", W),
        ("cron event list --format=json", PolicyCategory.READ),
        ("option get upload_path", PolicyCategory.READ),
    ],
)
def test_hooks_placement_and_versions(command: str, expected: PolicyCategory) -> None:
    decision = POLICY.classify(command)
    assert decision.category is expected, (decision.rule, decision.reason_ja)


def test_no_custom_rule_reopens_cron_event_schedule() -> None:
    with pytest.raises(ConfigurationError):
        CommandPolicy(load_custom_rules(None, '{"allow": ["cron event schedule"]}'))
    policy = CommandPolicy(load_custom_rules(None, '{"allow": ["cron"]}'))
    assert policy.classify("cron event schedule my_hook now").blocked
