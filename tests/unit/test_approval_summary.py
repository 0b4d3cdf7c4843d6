"""Approval summaries tell the truth: where the effect depends on the site's state, the agent reads
the state first and says what will really happen, including 「元に戻せません」 for permanent loss.

The WP-CLI behaviour behind each case was checked on WordPress 6.1 / WP-CLI 2.10: `post delete 11`
of a trashed post printed "Deleted post 11." and the post was gone; `user set-role 1 subscriber`
replaced administrator.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.approval_summary import IRREVERSIBLE, POST_RECREATED_ONLY, describe

POLICY = CommandPolicy()


def site(answers: dict[tuple[str, ...], Any]) -> tuple[Callable[[list[str]], str | None], list[list[str]]]:
    """A reader answering by argv prefix; every read must be a read-only command."""
    asked: list[list[str]] = []

    def read(argv: list[str]) -> str | None:
        assert POLICY.classify_argv(argv).category.value == "read", argv
        asked.append(argv)
        for prefix, answer in answers.items():
            if tuple(argv[: len(prefix)]) == prefix:
                return answer if isinstance(answer, str) or answer is None else json.dumps(answer)
        return None

    return read, asked


def summary(command: str, read: Callable[[list[str]], str | None] | None) -> tuple[str, str]:
    decision = POLICY.classify(command)
    assert decision.needs_approval, decision
    return describe(decision, read)


def test_deleting_an_already_trashed_post_says_it_is_gone_for_good() -> None:
    read, asked = site({("post", "list"): [{"ID": 41, "post_status": "trash", "post_type": "post"}]})
    text, impact = summary("post delete 41", read)
    assert text == "投稿（ID: 41）を完全に削除します（既にゴミ箱にあるため）"
    assert impact == IRREVERSIBLE + POST_RECREATED_ONLY  # undo only makes it again: said what differs
    assert "--post__in=41" in asked[0]


def test_a_published_post_goes_to_the_trash() -> None:
    read, _ = site({("post", "list"): [{"ID": 45, "post_status": "publish", "post_type": "post"}]})
    assert summary("post delete 45", read) == (
        "投稿（ID: 45）をゴミ箱へ移動します",
        "ゴミ箱から復元できますが、サイトからは見えなくなります。",
    )


def test_mixed_states_are_told_per_id() -> None:
    rows = [
        {"ID": 41, "post_status": "trash", "post_type": "post"},
        {"ID": 45, "post_status": "draft", "post_type": "page"},
        {"ID": 7, "post_status": "inherit", "post_type": "attachment"},
    ]
    read, _ = site({("post", "list"): rows})
    text, impact = summary("post delete 41 45 7", read)
    assert "ID 41 はゴミ箱にあるため完全に削除" in text
    assert "ID 45 はゴミ箱へ移動" in text
    assert "ID 7 は削除されません" in text
    assert "ID 41 は" + IRREVERSIBLE in impact


def test_unknown_state_is_described_conservatively() -> None:
    for read in (None, site({})[0]):
        text, impact = summary("post delete 45", read)
        assert "既にゴミ箱にあるものは完全に削除" in text
        assert IRREVERSIBLE in impact


def test_forced_delete_and_spam_comments_are_permanent() -> None:
    assert IRREVERSIBLE + POST_RECREATED_ONLY in summary("post delete 45 --force", None)[1]
    read, _ = site({("comment", "get"): {"comment_ID": "3", "comment_approved": "spam"}})
    text, impact = summary("comment delete 3", read)
    assert "完全に削除" in text
    assert IRREVERSIBLE in impact


def test_a_demotion_is_not_described_as_an_administrator_grant() -> None:
    read, _ = site({("user", "get"): {"ID": 1, "user_login": "admin", "roles": "administrator"}})
    text, impact = summary("user set-role 1 subscriber", read)
    assert text == "ユーザー（admin）の権限グループを「administrator」から「subscriber」に変更します（降格）"
    assert "管理者の権限を失い" in impact
    assert "付与" not in text


def test_a_promotion_to_administrator_says_so() -> None:
    read, _ = site({("user", "get"): {"ID": 2, "user_login": "taro", "roles": "editor"}})
    text, impact = summary("user update 2 --role=administrator", read)
    assert "管理者権限を付与" in text
    assert "全ての操作" in impact


def test_an_email_change_shows_the_old_and_new_address() -> None:
    read, _ = site({("user", "get"): {"ID": 1, "user_login": "admin", "user_email": "admin@example.com"}})
    text, impact = summary("user update 1 --user_email=attacker@evil.example", read)
    assert (
        text
        == "ユーザー（admin）のメールアドレスを「admin@example.com」から「attacker@evil.example」に変更します"
    )
    assert "パスワード再設定" in impact


def test_a_password_change_never_shows_the_password() -> None:
    text, impact = summary("user update 1 --user_pass=Secret-99", None)
    assert "Secret-99" not in text + impact
    assert "パスワードを変更" in text


@pytest.mark.parametrize(
    ("command", "answers", "expected"),
    [
        (
            "user create eve eve@example.com --role=editor",
            {},
            "ログインできる新しいアカウント（ユーザー名: eve、メールアドレス: eve@example.com）を「editor」の権限で作成します",
        ),
        (
            "user create eve eve@example.com",
            {("option", "get"): "administrator\n"},
            "ログインできる新しいアカウント（ユーザー名: eve、メールアドレス: eve@example.com）を「administrator」の権限で作成します"
            "（指定がないためサイトの既定の権限グループ）",
        ),
    ],
)
def test_new_accounts_name_their_real_role(
    command: str, answers: dict[tuple[str, ...], Any], expected: str
) -> None:
    read, _ = site(answers)
    assert summary(command, read)[0] == expected


def test_a_site_with_an_address_says_an_account_is_created_for_it() -> None:
    text, impact = summary("site create --slug=evil --title=Evil --email=attacker@evil.test", None)
    assert (
        text
        == "新しいサイト（evil）を作成し、メールアドレス attacker@evil.test のアカウントをその管理者にします"
    )
    assert "ログインできるアカウントが新しく作成され" in impact


def test_a_site_at_an_address_the_network_answers_says_what_it_takes_away() -> None:
    text, impact = summary("site create --slug=wp-admin --title=x", None)
    assert text == "新しいサイトをアドレス「/wp-admin/」に作成します"
    assert "管理画面" in impact
    assert "元の機能が使えなくなります" in impact
    # Held by the site check (a page of the main site at /about/): the summary reads the same pages.
    decision = dataclasses.replace(
        POLICY.classify("site create --slug=about --title=x"),
        category=PolicyCategory.DESTRUCTIVE,
        rule="confirm.site_check",
    )
    read, asked = site({("post", "list", "--post_type=page", "--name=about"): "5"})
    text, impact = describe(decision, read)
    assert text == "新しいサイトをアドレス「/about/」に作成します"
    assert impact.startswith("メインサイトに同じアドレスの固定ページ（ID: 5）があります。")
    assert "固定ページはこのアドレスで表示されなくなります" in impact
    assert asked


@pytest.mark.parametrize(
    ("command", "words"),
    [
        # A post update held for something other than trashing never says it goes to the trash.
        ('post update 45 --meta_input=\'{"_price":"100"}\'', "保護されたキー"),
        ("post update 45 --post_type=product", "post_type"),
        ("post meta update 45 _price 100", "保護されたキー"),
        ("option update html_type text/plain", "html_type"),
        ("plugin activate akismet", "プラグイン自身のコード"),
        ("plugin install akismet", "Webから直接アクセス"),
        ("site unarchive 3", "ネットワーク"),
        ("plugin install akismet --activate-network", "ネットワーク"),
    ],
)
def test_held_writes_say_why(command: str, words: str) -> None:
    text, impact = summary(command, None)
    assert words in text + impact
    assert "ゴミ箱" not in text + impact


def test_deleting_a_user_says_which_posts_go_to_the_trash_and_which_are_gone() -> None:
    """WordPress's wp_delete_user: posts and pages go to the trash; media (with its files), posts
    already in the trash and other types are deleted for good (tried on the sandbox)."""
    read, asked = site({
        ("user", "get"): {"ID": 3, "user_login": "hanako"},
        ("post", "list"): [
            {"ID": 12, "post_type": "post", "post_status": "publish"},
            {"ID": 22, "post_type": "post", "post_status": "trash"},
            {"ID": 58, "post_type": "attachment", "post_status": "inherit"},
        ],
    })  # fmt: skip
    text, impact = summary("user delete hanako --yes", read)
    assert text == "ユーザー（hanako）を削除します"
    assert "投稿 ID 12 はゴミ箱へ移動" in impact
    assert "ID 22、58 は完全に削除" in impact
    assert "メディア ID 58 はファイルも削除" in impact
    assert any(a[:2] == ["post", "list"] and "--author=3" in a for a in asked)


def test_on_a_network_a_user_delete_leaves_the_account() -> None:
    read, _ = site({("core", "is-installed"): "", ("user", "get"): {"ID": 3, "user_login": "hanako"},
                    ("post", "list"): []})  # fmt: skip
    text, _impact = summary("user delete 3 --reassign=1", read)
    assert text == "ユーザー（hanako）をこのサイトから外します（アカウントはネットワークに残ります）"


def test_an_option_change_shows_the_current_value() -> None:
    read, _ = site({("option", "get"): "https://example.com\n"})
    assert summary("option update siteurl https://evil.example", read)[0] == (
        "サイト設定「siteurl」を「https://example.com」から「https://evil.example」に変更します"
    )


def test_a_theme_switch_names_the_theme_it_replaces() -> None:
    read, _ = site({("theme", "list"): "twentytwentythree\n"})
    assert (
        summary("theme activate astra", read)[0] == "テーマを「twentytwentythree」から「astra」に切り替えます"
    )


@pytest.mark.parametrize(
    "command",
    [
        "term delete category 5",
        "plugin delete akismet",
        "theme delete astra",
        "site delete 3 --yes",
        "menu delete 2",
    ],
)
def test_permanent_losses_say_so(command: str) -> None:
    assert IRREVERSIBLE in summary(command, None)[1]


# -- issue 37: every object, on the command's site, with its side flags --------------------------


def test_every_user_a_role_change_names_is_described() -> None:
    read, _ = site({("user", "get", "1"): {"ID": 1, "user_login": "admin", "roles": "administrator"},
                    ("user", "get", "3"): {"ID": 3, "user_login": "hanako", "roles": "author"}})  # fmt: skip
    text, impact = summary("user update 1 3 --role=administrator", read)
    assert "admin" in text
    assert "hanako" in text
    assert "「author」から「administrator」" in text
    assert "管理者権限" in text + impact


def test_every_option_a_delete_names_is_described() -> None:
    text, impact = summary("option delete posts_per_page blogdescription", None)
    assert "posts_per_page" in text
    assert "blogdescription" in text
    assert "キャッチフレーズ" in impact


def test_the_summary_reads_the_site_the_command_runs_on() -> None:
    read, asked = site({("post", "list"): [{"ID": 5, "post_status": "trash", "post_type": "post"}]})
    text, impact = summary("post delete 5 --url=https://example.test/en/", read)
    assert asked[0][-1] == "--url=https://example.test/en/"
    assert "完全に削除" in text
    assert "https://example.test/en/" in text
    assert IRREVERSIBLE in impact


def test_a_forced_delete_of_media_says_its_files_go_and_undo_cannot_bring_them_back() -> None:
    read, _ = site({("post", "list"): [{"ID": 58, "post_status": "inherit", "post_type": "attachment"}]})
    text, impact = summary("post delete 58 --force", read)
    assert "58" in text
    assert "ファイルも全て削除" in impact
    assert "undo）でも戻せません" in impact


def test_a_site_deleted_by_slug_is_named_as_the_network_knows_it() -> None:
    read, _ = site({("site", "list"): [{"blog_id": 1, "url": "https://example.test/"},
                                       {"blog_id": 3, "url": "https://example.test/shop/"}]})  # fmt: skip
    text, _impact = summary("site delete --slug=shop", read)
    assert "ID 3: https://example.test/shop/" in text
    text, _impact = summary("site delete 3 --keep-tables", read)
    assert "テーブルは残します" in text


def test_a_network_wide_user_delete_says_every_site() -> None:
    text, impact = summary("user delete 3 --network", None)
    assert "全てのサイト" in text
    assert IRREVERSIBLE in impact


def test_a_meta_delete_of_all_keys_names_the_post_and_every_key() -> None:
    """`post meta delete 1 --all` read "全ての投稿" (every post); it is every field of post 1 (found by the
    summary conformance run on the real site)."""
    read, asked = site({("post", "meta", "list"): [{"meta_key": "_pingme"}, {"meta_key": "_wp_old_slug"}]})
    text, _impact = summary("post meta delete 1 --all", read)
    assert text == "投稿（ID: 1）のカスタムフィールドを全て（_pingme、_wp_old_slug）削除します"
    assert asked[0][:4] == ["post", "meta", "list", "1"]
    text, _impact = summary("post meta delete 10 color red", None)
    assert text == "投稿（ID: 10）のカスタムフィールド「color」のうち値が「red」のものを削除します"


def test_sites_menus_and_roles_are_named_as_the_site_has_them() -> None:
    """Found by the summary conformance run: `site archive 2` named no site, `menu delete 11` no menu,
    `user remove-role 4 subscriber` no user."""
    read, _ = site({("site", "list"): [{"blog_id": 2, "url": "https://example.test/en/"}],
                    ("menu", "list"): [{"term_id": 11, "name": "フッターメニュー", "slug": "footer", "count": 1}],
                    ("user", "get"): {"ID": 4, "user_login": "yuki", "roles": "subscriber"}})  # fmt: skip
    assert summary("site archive 2", read)[0] == "サイト（ID 2: https://example.test/en/）をアーカイブします"
    assert (
        summary("menu delete footer", read)[0]
        == "メニュー「フッターメニュー」（ID 11、項目 1 個）を削除します"
    )
    text, impact = summary("user remove-role 4 subscriber", read)
    assert text == "ユーザー（yuki）から権限グループ「subscriber」を外します（現在: subscriber → 残り: なし）"
    assert "何もできなくなります" in impact


def test_what_reading_each_held_path_on_the_sandbox_showed_untrue_is_told() -> None:
    """Read by eye on the sandbox: `option patch` said the option became 「a」, `user set-role 3` (no
    role) called a demotion to the default role a promotion, `session destroy --all` said every user,
    `theme install --activate` did not say it installs, `comment trash` and `reset-password` gave the
    policy's reason as the impact."""
    read, _ = site({("user", "get"): {"ID": 3, "user_login": "taro", "roles": "author"},
                    ("option", "get", "default_role"): "subscriber\n"})  # fmt: skip
    assert summary("option patch insert my_plugin_settings a 1", read)[0] == (
        "サイト設定「my_plugin_settings」の項目「a」に値「1」を追加します"
    )
    assert (
        summary("user set-role 3", read)[0]
        == "ユーザー（taro）の権限グループを「author」から「subscriber」に変更します（降格）"
    )
    text, impact = summary("user session destroy 3 --all", read)
    assert text == "ユーザー（taro）の全てのログインセッションを破棄します"
    assert "全てのユーザー" not in impact
    assert "インストール" in summary("theme install twentytwenty --activate", read)[0]
    assert summary("comment trash 2 3", read)[1] == "ゴミ箱から復元できますが、サイトからは見えなくなります。"
    text, impact = summary("user reset-password 3 --skip-email", read)
    assert text == "ユーザー（taro）のパスワードを新しいものに変更します"
    assert "ログインできません" in impact


def test_an_approval_names_the_script_it_lets_run_whatever_held_the_command() -> None:
    """Held as a new login, a user whose display name carries a script: the person reads that too."""
    from wp_agent.policy import CommandPolicy
    from wp_agent.policy.approval_summary import describe

    policy = CommandPolicy()
    user = policy.classify("user create eve eve@example.com --display_name='<img src=x onerror=alert(1)>'")
    _, impact = describe(user)
    assert "--display_name の値にonerror 属性" in impact
    title = policy.classify("post create --post_title='<script>x</script>'")
    _, said = describe(title)
    assert said.count("<script> 要素") == 1  # the policy's own reason tells it; no second note
    plain = policy.classify("user create eve eve@example.com --display_name=イヴ")
    assert "スクリプト" not in describe(plain)[1]
