"""A held command's side flags: described in its approval text, or the command is refused.

For every path that waits for approval and every flag of its synopsis: the flag only changes what
WP-CLI prints, or the approval text changes when it is given (the person reads what it does), or the
policy refuses the command with it. Never the plain command's text for a command that does more.
"""

from __future__ import annotations

import pytest

from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.approval_flags import OUTPUT_FLAGS, described_flags, held_paths
from wp_agent.policy.approval_summary import describe
from wp_agent.policy.command_grammar import synopses
from wp_agent.policy.host_resolution import static_resolver

# The server fetches embeds and replaced media: their sample host resolves to a public address here.
POLICY = CommandPolicy(resolver=static_resolver({"example.com": ["93.184.216.34"]}))
SAMPLES = {
    "id": "5", "user": "3", "key": "blogname", "plugin": "akismet", "theme": "twentytwentyfour", "menu": "2",
    "db-id": "48", "widget-id": "text-2", "sidebar-id": "sidebar-1", "taxonomy": "category", "term": "4",
    "language": "de_DE", "hook": "wp_version_check", "permastruct": "/%postname%/", "old": "http://a.test",
    "new": "https://a.test", "user-login": "taro", "user-email": "taro@example.com", "cap": "edit_posts",
    "role": "editor", "token": "abc", "action": "insert", "key-path": "a", "value": "1",
    "mod": "header_textcolor", "site-id": "2", "theme|zip|url": "twentytwentyfour", "plugin|zip|url": "akismet",
    "table": "wp_posts", "url": "https://example.com/watch", "file": "https://example.com/new.png",
    "attachment-id": "7", "family-id": "3", "collection": "google-fonts", "family": "roboto", "slug": "x",
}  # fmt: skip


def base_command(path: tuple[str, ...]) -> list[str]:
    words = [SAMPLES.get(a.name, "x") for a in synopses()[path].arguments if not a.optional]
    if not words and synopses()[path].arguments:  # `[<plugin>...]`: name one
        words = [SAMPLES.get(synopses()[path].arguments[0].name, "x")]
    if path == ("option", "patch"):
        words = ["insert", "my_plugin_settings", "a", "1"]
    if path == ("core", "update"):
        words = []  # (its optional `[<zip>]` is refused: a core update comes from WordPress.org only)
    if path == ("search-replace",):
        words = [*words, "wp_posts", "--include-columns=post_content"]
    return [*path, *words]


def text_of(argv: list[str]) -> str | None:
    decision = POLICY.classify_argv(argv)
    if decision.category is not PolicyCategory.DESTRUCTIVE:
        return None
    summary, impact = describe(decision, None)
    return summary + impact


CASES = [
    (path, name) for path in held_paths() for name in synopses()[path].options if name not in OUTPUT_FLAGS
]


def test_every_held_path_has_a_base_command_that_waits() -> None:
    assert [p for p in held_paths() if text_of(base_command(p)) is None] == []


@pytest.mark.parametrize(("path", "flag"), CASES)
def test_a_side_flag_is_described_or_refused(path: tuple[str, ...], flag: str) -> None:
    option = synopses()[path].options[flag]
    token = f"--{flag}=x" if option.takes_value else f"--{flag}"
    if flag in ("reassign", "parent-id"):
        token = f"--{flag}=1"
    base = base_command(path)
    if flag == "all":
        base = list(path)  # names and --all together are refused (command_grammar)
    flagged = text_of([*base, token])
    if flag not in described_flags(path):
        assert flagged is None, (path, flag)  # refused (or not held), never summarised as plain
        return
    if flagged is None:
        return  # another rule refuses it (e.g. an install source)
    assert flagged != text_of(base), (path, flag)


@pytest.mark.parametrize("flag", ["--skip-plugins", "--skip-themes", "--exclude=x", "--network"])
def test_flags_outside_the_table_are_refused_on_held_commands(flag: str) -> None:
    decision = POLICY.classify(f"post delete 5 {flag}")
    assert decision.blocked
    assert decision.rule in {
        "blocked.undescribed_flag",
        "confirm.network_wide",
        "blocked.declared_effect",
    } or (flag in decision.reason_ja)


def test_the_uninstaller_is_told() -> None:
    text = text_of(["plugin", "deactivate", "akismet", "--uninstall"])
    assert text is not None
    assert "アンインストール処理" in text
    assert "ファイルが削除" in text
