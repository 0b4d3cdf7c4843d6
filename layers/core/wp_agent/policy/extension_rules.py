"""Plugins, themes and the core: an activation runs code, a pinned version may be a known-vulnerable one, and
a core update only in its plain forms.
"""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.global_flags import GLOBAL_OPTIONS
from wp_agent.policy.rule import Verdict, argument_rule
from wp_agent.whole_values import whole

B = PolicyCategory.BLOCKED
D = PolicyCategory.DESTRUCTIVE


# Theme switches, and any pinned version: an old release may be a known-vulnerable one.


@argument_rule(
    match=("plugin install contact-form-7 --version=5.3.1 --activate", "plugin install akismet --activate"),
    not_match=("plugin install akismet", "plugin install akismet --force"),
    paths=("plugin install",),
)
def plugin_activation(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if not cmd.has_flag("activate"):
        return None
    return Verdict(
        D,
        "confirm.plugin.activate",
        "プラグインを有効化します。有効化するとプラグイン自身のコード（有効化処理を含む）が実行され、"
        "何が変わるかを事前に確認できないため承認が必要です",
        "--activate",
    )


@argument_rule(
    match=("theme install twentytwentythree --activate", "theme enable twentytwentythree --activate"),
    not_match=("theme install twentytwentythree", "theme enable twentytwentythree"),
    paths=("theme install", "theme enable"),
)
def theme_activation(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if not cmd.has_flag("activate"):
        return None
    return Verdict(
        D,
        "confirm.theme.activate",
        "テーマを有効化（切り替え）します。サイト表示に影響するため承認が必要です",
        "--activate",
    )


@argument_rule(
    match=("plugin update akismet --version=5.0", "theme update twentytwentyone --version=1.0"),
    not_match=("plugin update akismet", "theme update twentytwentyone --dry-run"),
    paths=("plugin update", "theme update"),
)
def pinned_update(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if not cmd.has_flag("version"):
        return None
    return Verdict(
        D,
        "confirm.extension.version",
        "指定したバージョンへ入れ替えます（古い版への戻しを含む）。承認が必要です",
        "--version",
    )


@argument_rule(
    match=("theme install astra --version=1.0.0", "plugin install akismet --version"),
    not_match=("theme install astra", "plugin install akismet"),
    paths=("plugin install", "theme install"),
)
def pinned_install(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if not cmd.has_flag("version"):
        return None
    return Verdict(
        D,
        "confirm.extension.version",
        "最新版ではなく指定したバージョンをインストールします（脆弱性が知られた古い版の恐れがあります）。承認が必要です",
        "--version",
    )


_CORE_VERSION = whole(r"\d+\.\d+(?:\.\d+)?", "7.1", "7.1.5")


_CORE_UPDATE_OPTIONS = frozenset({"minor", "version"})


@argument_rule(
    match=(
        "core update /tmp/wordpress.zip",
        "core update https://example.com/wordpress.zip",
        "core update --version=nightly",
        "core update --version=6.8 --force",
        "core update --insecure",
        "core update --locale=en_US",
    ),
    not_match=("core update", "core update --minor", "core update --version=7.1.5"),
    paths=("core update",),
)
def core_update_forms(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """A core update only from WordPress.org's own offers, to a release by its number: never a package
    from a path or URL (code from anywhere), a nightly build, a forced downgrade (files older than the
    database), TLS checks turned off, or another language's package."""
    for value in cmd.args_after(path):
        return Verdict(
            B,
            "blocked.core_update_package",
            "WordPress本体は WordPress.org の公開版からのみ更新できます（ファイルやURLのパッケージは指定できません）",
            value,
        )
    for option in cmd.options:
        if option.name not in _CORE_UPDATE_OPTIONS and option.name not in GLOBAL_OPTIONS:
            return Verdict(
                B,
                "blocked.core_update_option",
                f"core update のオプション --{option.name} は使用できません（使えるのは --minor と --version=番号 です）",
                f"--{option.name}",
            )
    for version in cmd.option_values("version"):
        if not _CORE_VERSION.fits(version):
            return Verdict(
                B,
                "blocked.core_update_option",
                f"--version には公開版の番号（例: 7.1.5）を指定してください: {version[:40]}",
                f"--version={version[:40]}",
            )
    return None
