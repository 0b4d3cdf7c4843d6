"""Accounts and privileges: grants need approval, takeovers and raw privilege data are refused.

Each refused command was tried on WordPress 6.1 / MariaDB 10.11 / WP-CLI 2.10 before the fix:
`user update admin --user_activation_key=<time>:<hash>` stored the reset key, and
`user meta update 2 wp_capabil<U+200B>ities|WP_CAPABILITIES|'wp_capabilities '|ｗｐ_capabilities …`
each changed user 2's role.
"""

from __future__ import annotations

import pytest

from wp_agent.errors import ConfigurationError
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.custom_rules import load_custom_rules

POLICY = CommandPolicy()
B, D, W, R = PolicyCategory.BLOCKED, PolicyCategory.DESTRUCTIVE, PolicyCategory.WRITE, PolicyCategory.READ

CASES = [
    # password-reset takeover, in every spelling
    ("user update admin '--user_activation_key=1700000000:$P$Bxxxxxxxxxxxxxxxxxxx'", B),
    ("user update 1 --USER_ACTIVATION_KEY=x", B),
    ("user update 1 --user_activation_key x", B),
    ("wp user update admin --url=https://example.com/ --user_activation_key=x", B),
    ("user reset-password admin --show-password", B),
    # accounts that can publish or more
    ("user create eve eve@example.com --role=editor", D),
    ("user create eve eve@example.com --role=author", D),
    ("user create eve eve@example.com --role=administrator", D),
    ("user create eve eve@example.com --role=shop_manager", D),
    ("user create eve eve@example.com", D),
    ("user add-role 2 editor", D),
    ("user add-role 2 contributor administrator", D),
    ("user create taro taro@example.com --role=subscriber", D),  # a new login (issue 24)
    ("user create taro taro@example.com --role=CONTRIBUTOR", D),
    ("user add-role 2 contributor", W),
    # role changes, email and password changes
    ("user set-role 1 subscriber", D),
    ("user update 1 --role=subscriber", D),
    ("user update 1 --user_email=attacker@evil.example", D),
    ("user update 1 --user_pass=NewPass-123 --skip-email", D),
    ("user update 2 --spam=1", D),
    ("user update 2 --display_name=山田 --first_name=太郎", W),
    # raw privilege and secret meta, any prefix or spelling
    ("user meta update 2 wp_capabilities '{\"administrator\":true}' --format=json", B),
    ("user meta update 2 WP_CAPABILITIES x", B),
    ("user meta set 2 wp_2_capabilities x", B),
    ("user-meta set 2 xyz_user_level 10", B),
    ("user meta patch insert 2 wp_capabilities administrator 1", B),
    ("user meta delete 2 wp_capabilities", B),
    ("user meta update 1 session_tokens '{}' --format=json", B),
    ("user meta get 1 session_tokens", B),
    ("user meta list 1 --keys=session_tokens", B),
    ("user meta get 1 _two_factor_totp_key", B),
    ("user meta delete 1 _two_factor_enabled_providers", B),
    ("user meta get 1 googleauthenticator_secret", B),
    ("user meta pluck 1 _application_passwords 0 password", B),
    ("user meta get 1 wp_capabilities", B),
    ("user get 1 --field=user_activation_key", B),
    ("user list --fields=ID,user_login,user_pass", B),
    ("user meta list 1 --format=json", R),
    ("user meta get 1 nickname", R),
    ("user get 1 --field=roles", R),
    # grants refused: super admins, individual capabilities, capabilities added to roles, clones, resets
    ("super-admin add eve", B),
    ("user add-cap 2 unfiltered_html", B),
    ("role create shop Shop --clone=administrator", B),
    ("role create Editor 編集長", B),
    ("role delete editor", B),
    ("role reset --all", B),
    ("cap add editor manage_options", B),
    ("cap remove administrator manage_options", B),
    # a role with no capability, a deleted role of one's own, a capability taken from a role: approval
    ("role create shop Shop", D),
    ("role delete shop", D),
    ("cap remove editor edit_posts", D),
    ("option update wp_user_roles '{}' --format=json", B),
    ("option set wp_3_user_roles x", B),
    # reductions of rights still need approval
    ("super-admin remove eve", D),
    ("user remove-cap 2 edit_posts", D),
    ("user remove-role 2 editor", D),
]


@pytest.mark.parametrize(("command", "expected"), CASES)
def test_accounts(command: str, expected: PolicyCategory) -> None:
    decision = POLICY.classify(command)
    assert decision.category is expected, (decision.rule, decision.reason_ja)


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("super-admin add", "super-admin add eve"),
        ("super-admin", "super-admin add eve"),
        ("user add-cap", "user add-cap 2 manage_options"),
        ("role", "role create shop Shop --clone=administrator"),
        ("cap", "cap add editor manage_options"),
    ],
)
def test_no_custom_rule_can_allow_role_definitions_or_grants(rule: str, command: str) -> None:
    try:
        policy = CommandPolicy(load_custom_rules(None, f'{{"allow": ["{rule}"]}}'))
    except ConfigurationError:
        return
    assert policy.classify(command).blocked


def test_the_reason_of_a_takeover_attempt_is_japanese_and_names_the_field() -> None:
    decision = POLICY.classify("user update admin --user_activation_key=x")
    assert decision.rule == "blocked.user_field"
    assert "--user_activation_key" in decision.reason_ja


def test_a_user_update_approval_names_every_changed_credential() -> None:
    decision = POLICY.classify("user update 1 --user_email=a@example.com --user_pass=x")
    assert "メールアドレス" in decision.reason_ja
    assert "パスワード" in decision.reason_ja
