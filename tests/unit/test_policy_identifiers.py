"""Identifiers only in plain ASCII: look-alike keys that MariaDB folds onto real rows are refused.

The code points below were each checked on MariaDB 10.11 with utf8mb4_unicode_520_ci (WordPress's
collation): 'ab' = 'a<cp>b' holds for 680 code points (combining marks, format characters, …), and
`option get mailserver_p<U+0301>ass` returned the real mailserver_pass on a real WordPress 6.1.
"""

from __future__ import annotations

import pytest

from wp_agent.policy import CommandPolicy, PolicyCategory

POLICY = CommandPolicy()
# One of each kind MariaDB ignores inside a key, plus folded forms (NBSP, ideographic space).
IGNORED = ["\u200b", "\u200d", "\u0301", "\u20dd", "\u0903", "\uff9e", "\ufe70", "\u0600", "\u00a0", "\u3000"]


@pytest.mark.parametrize("mark", IGNORED)
@pytest.mark.parametrize(
    "template",
    [
        "user meta update 2 wp_capabil{m}ities '{{\"administrator\":true}}' --format=json",
        "user meta add 2 wp_2_capab{m}ilities x",
        "option get mailserver_p{m}ass",
        "option update siteurl{m} https://evil.example",
        "option pluck my_plugin api_{m}key",
        "user list --fields=ID,user_p{m}ass",
        "user set-role 2 admini{m}strator",
        "user update 2 --role=edi{m}tor",
        "post list --post_type=pa{m}ge",
        "term list cate{m}gory",
        "cron event delete my_{m}hook",
        "option list --search=*pa{m}ss*",
        "post create --post_ti{m}tle=x",
    ],
)
def test_a_look_alike_identifier_is_blocked(template: str, mark: str) -> None:
    decision = POLICY.classify(template.format(m=mark))
    assert decision.category is PolicyCategory.BLOCKED, decision
    assert decision.rule in {"blocked.non_ascii_identifier", "blocked.control_character"}


@pytest.mark.parametrize(
    "command",
    [
        "option update ｓｉｔｅｕｒｌ https://evil.example",
        "user meta update 2 ｗｐ_capabilities x",
        "ｏｐｔｉｏｎ get blogname",
        "option ｇｅｔ blogname",
        "post list --ｆｏｒｍａｔ=json",
    ],
)
def test_full_width_identifiers_and_command_words_are_blocked(command: str) -> None:
    decision = POLICY.classify(command)
    assert decision.rule == "blocked.non_ascii_identifier", decision
    assert "半角" in decision.reason_ja


@pytest.mark.parametrize(
    "command",
    [
        "post create --post_title='秋の新メニュー' --post_content='<p>本文です</p>' --post_status=draft",
        "term create category お知らせ",
        "term create post_tag 'ｆｕｌｌ ｗｉｄｔｈ' --slug=full-width",
        "post term add 45 category お知らせ",
        "option update blogname '山田商店のブログ'",
        "post meta update 45 description '説明\u200bです'",
        "menu create メインメニュー",
        "user update 3 --display_name='山田 太郎'",
        "post list --s=メニュー --post_type=post",
        "comment create --comment_post_ID=45 --comment_content='素敵です'",
    ],
)
def test_values_stay_free(command: str) -> None:
    assert not POLICY.classify(command).blocked


def test_the_reason_shows_an_invisible_character() -> None:
    decision = POLICY.classify("option get mailserver_p\u200bass")
    assert "\\u200b" in decision.reason_ja
