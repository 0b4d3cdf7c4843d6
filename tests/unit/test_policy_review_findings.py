"""Regression tests for the security review of the policy: each bypass it found stays closed."""

from __future__ import annotations

import pytest

from wp_agent.agent.tool_output import render_tool_result
from wp_agent.policy import CommandPolicy, PolicyCategory

POLICY = CommandPolicy()
B, D, W, R = PolicyCategory.BLOCKED, PolicyCategory.DESTRUCTIVE, PolicyCategory.WRITE, PolicyCategory.READ

CASES = [
    # search-replace: only a bare --dry-run is a dry run; a value on a flag is refused (PHP reads "0" and ""
    # as off: a summary would say "dry run" for a real replace); --log/--callback/export/wildcards never run
    (
        "search-replace 'http://example.com' 'https://evil.example' wp_posts --include-columns=post_content --dry-run=0",
        B,
    ),
    ("search-replace old new wp_posts --include-columns=post_content --dry-run=", B),
    ("plugin update akismet --dry-run=0", B),
    ("plugin update akismet --minor=0", B),
    ("search-replace old new wp_posts --include-columns=post_content --dry-run --no-dry-run", B),
    ("search-replace old new wp_posts --include-columns=post_content --dry-run", R),
    ("search-replace a b --dry-run --log=/var/www/html/wp-config.php", B),
    ("search-replace a b --log", B),
    ("search-replace 'x' 'y' wp_posts --dry-run --precise --callback=system", B),
    ("search-replace 'x' 'y' wp_posts --precise --callback=passthru", B),
    ("search-replace '^' '' wp_options --regex --dry-run --log --after_context=100000", B),
    ("search-replace a b '*'", B),
    ("search-replace a b 'wp_*'", B),
    (
        "search-replace old new wp_posts wp_comments --precise --include-columns=post_content,comment_content",
        D,
    ),
    # ...and only over the content tables' public columns (issue 24: no oracles)
    ("search-replace old new wp_posts wp_postmeta --precise --skip-columns=guid", B),
    # user_pass through WP-CLI's field prefix resolution
    ("user get 1 --field=pass", B),
    ("user get admin --fields=ID,login,pass,activation_key", B),
    ("user list --field=pass", B),
    ("user list --fields=ID,user_login,pass --format=json", B),
    ("user get 1 --fields=ID,activation_key", B),
    ("user meta get 1 session_tokens", B),
    ("user get 1 --field=login", R),
    # secret options by other routes
    ("option list --search=mailserver_pass --fields=option_name,option_value", B),
    ("option list --search=*key* --fields=option_name,option_value", B),
    ("option pluck my_plugin_settings api_key", B),
    ("option get logged_in_key", B),
    ("option get nonce_key", B),
    ("site option get logged_in_key", B),
    ("option get 'mailserver_pàss'", B),
    ("option list --search=blog*", R),
    # media import host tricks
    ("media import http://0x7f.1/x.png", B),
    ("media import http://127.1/x.png", B),
    ("media import http://0177.0.0.1/x.png", B),
    ("media import http://[::ffff:127.0.0.1]/x.png", B),
    ("media import https://example.com:22/x", B),
    ("media import https://example.com/a.jpg --destination-dir=/var/www/html", B),
    ("media import https://example.com:443/a.jpg", W),
    # privilege grants by raw meta or role definitions: refused (use user set-role, with approval)
    ("user meta update 5 wp_capabilities '{\"administrator\":true}' --format=json", B),
    ("user meta add 5 wp_capabilities '{\"administrator\":true}' --format=json", B),
    ("user meta update 5 wp_2_capabilities '{\"administrator\":true}' --format=json", B),
    ("user meta update 5 wp_user_level 10", B),
    ("option update wp_user_roles '{}' --format=json", B),
    ("option patch insert wp_user_roles subscriber capabilities manage_options 1", B),
    # destructive paths that were plain writes
    # look-alike names are refused outright: MariaDB's collation would make them the real key
    ("option update ' siteurl' https://evil.example", B),
    ("option update 'home ' https://evil.example", B),
    ("option update 'blogname\t' x", B),
    ("option update ' active_plugins' '[]' --format=json", B),
    ("option update ｓｉｔｅｕｒｌ https://evil.example", B),
    ("option update sìteurl https://evil.example", B),
    ("option update blog_public 0", D),
    ("user update 1 --user_pass=hunter2 --skip-email", D),
    ("user update admin --user_email=attacker@evil.example", D),
    ("user set-role 1 subscriber", D),
    ("user set-role 1 ''", B),
    ("user update 1 --role=subscriber", D),
    ("user update 1 --role=", B),
    ("theme enable twentytwentyfour --activate", D),
    ("theme enable twentytwentyfour --activate --network", D),
    ("post update 1 --post_status=' trash'", B),
    ("post update 1 --post_status=tr.ash", D),
    ("post update 1 --post_status=' TRASH'", B),
    ("post update 12 --post_status=auto-draft", D),
    ("post update 12 --post_status=inherit", D),
    ("comment update 1 --comment_approved=trash", D),
    ("plugin update akismet --version=3.0.0", D),
    ("plugin update --auto-update-indicated", D),
    # WordPress reads `1-` and `1-3` as 1: an ID written otherwise than it is read is refused (issue 37)
    ("comment spam 1-", B),
    ("post update 1-3 --post_status=publish", B),
    # legitimate commands that were blocked
    ("post meta update 12 separator '--'", W),
    ("post list --format=ids\n", R),
    ("language core install ja", D),  # translations load as PHP (.l10n.php): code waits (issue 40)
    # every visitor's and the dashboard's language waits for approval (issue 38)
    ("language core install ja --activate", D),
    ("language core activate en_US", D),
    ("site switch-language ja", D),
    ("widget add text sidebar-1 --title=お知らせ", W),
    ("media regenerate 123 --yes", W),
    ("media regenerate --yes", B),
    ("plugin verify-checksums --all", R),
    ("user update 3 --display_name='山田 太郎'", W),
    ("post update 45 --post_status=future --post_date='2026-11-23 09:00:00' --edit_date=1", W),
    # issue 40's red team: values judged as WordPress stores them (JSON decoded, nested meta_input)
    ("post meta update 5 foo '\"\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\"' --format=json", D),
    ("user meta update 2 description '\"\\u003cscript\\u003e\"' --format=json", D),
    ('term meta update 3 note \'{"a":["\\u003cimg src=x onerror=alert(1)\\u003e"]}\' --format=json', D),
    ('post update 5 --meta_input=\'{"foo":{"a":"<script>x</script>"}}\'', D),
    ('post meta update 5 foo \'{"a":"plain"}\' --format=json', W),
    # … the object cache, generated accounts, rendering, update offers, signups, network admins
    ("cache patch insert 1:site_admins 1 mallory --group=site-options", B),
    ("cache set alloptions x options", B),
    ("cache delete my_key my_group", D),
    ("user generate --count=1 --role=administrator", B),
    ("post block render 5", D),
    ("post block export 5 --format=html", B),
    ("post block export 5 --format=json", R),
    (
        "transient patch update update_plugins response akismet/akismet.php package https://evil.example/x.zip --network",
        B,
    ),
    ("site option patch update _site_transient_update_plugins response x y", B),
    ("user signup list --field=0", B),
    ("user signup get 3 --fields=0", B),
    ("network meta update 1 site_admins '[\"mallory\"]' --format=json", B),
    ("ability can-run core/get-site-info --input=x", D),
    # invisible controls that could spoof an approval summary
    ("post update 5 --post_title='\u202e1 tsop'", B),
    ("post list \x9b", B),
]


@pytest.mark.parametrize(("command", "expected"), CASES)
def test_review_finding(command: str, expected: PolicyCategory) -> None:
    decision = POLICY.classify(command)
    assert decision.category is expected, (command, decision.rule, decision.reason_ja)


def test_emoji_joiners_are_not_controls() -> None:
    assert POLICY.classify("post create --post_title='家族👨\u200d👩\u200d👧の写真'").category is W


def test_password_hashes_never_reach_the_model() -> None:
    stdout = '[{"ID":1,"user_login":"admin","user_pass":"$P$BabcdefghijklmnopqrstuvwxyZ0"}]'
    sent = render_tool_result(command="user list --format=json", exit_code=0, stdout=stdout, stderr="")
    assert "abcdefghijklmnopqrstuvwxy" not in sent


def test_secret_option_values_are_masked_for_the_model() -> None:
    stdout = '[{"option_name":"mailserver_pass","option_value":"hunter2"},{"option_name":"blogname","option_value":"My blog"}]'
    sent = render_tool_result(command="option list --format=json", exit_code=0, stdout=stdout, stderr="")
    assert "hunter2" not in sent
    assert "My blog" in sent
