"""Secrets never survive masking: option values, positional option values, keys and tokens."""

from __future__ import annotations

import pytest

from wp_agent.masking import MASK, mask_argv, mask_text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("user create bob b@x.com --user_pass=Sup3rSecret!", "Sup3rSecret!"),
        ("user update 1 --user_pass='two words'", "two words"),
        ('user update 1 --user_pass="quoted secret"', "quoted secret"),
        ("post update 5 --post_password=hunter2", "hunter2"),
        ("x --api_key=abcd1234efgh", "abcd1234efgh"),
        ("x --token=tok_987654321", "tok_987654321"),
        ("key is sk-ant-api03-AbCdEfGhIjKlMnOp", "AbCdEfGhIjKlMnOp"),
        ("aws AKIAABCDEFGHIJKLMNOP here", "ABCDEFGHIJKLMNOP"),
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "eyJhbGciOiJIUzI1NiJ9"),
        ('{"user_pass": "$P$Babcdefghijklmnopqrstuvwxyz012"}', "abcdefghijklmnopqrstuvwxyz"),
        ('{"password": "plain"}', "plain"),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----",
            "b3BlbnNzaC1rZXktdjEAAAA",
        ),
        ("vault hvs.CAESIJabcdefghijklmnop", "CAESIJabcdefghijklmnop"),
        ("ユーザーtaroを作成して。パスワードは Secr3tPassw0rd! でお願いします", "Secr3tPassw0rd!"),
        ("パスワード：abc123XYZ、権限は投稿者", "abc123XYZ"),
        ("new password: hunter22 please", "hunter22"),
    ],
)
def test_mask_text_hides_secrets(text: str, secret: str) -> None:
    masked = mask_text(text)
    assert secret not in masked
    assert MASK in masked


@pytest.mark.parametrize(
    "text",
    [
        "post list --format=json",
        "post meta update 45 --meta_key=description",
        'post create --post_title="パスワードの作り方"',
        "term list category",
    ],
)
def test_mask_text_leaves_ordinary_commands_alone(text: str) -> None:
    assert mask_text(text) == text


def test_mask_argv_masks_option_values_and_positional_secret_values() -> None:
    assert mask_argv(["user", "create", "bob", "b@x", "--user_pass=pw1"]) == [
        "user",
        "create",
        "bob",
        "b@x",
        f"--user_pass={MASK}",
    ]
    assert mask_argv(["option", "update", "mailserver_pass", "pw2"]) == [
        "option",
        "update",
        "mailserver_pass",
        MASK,
    ]
    assert mask_argv(["post", "meta", "update", "45", "api_token", "pw3"]) == [
        "post",
        "meta",
        "update",
        "45",
        "api_token",
        MASK,
    ]
    assert mask_argv(["option", "update", "blogname", "My blog"]) == [
        "option",
        "update",
        "blogname",
        "My blog",
    ]
