"""Network-wide commands of a multisite: what changes the network rather than one site.

Two consequences: the policy holds every network-wide write for approval (`--network`,
`--activate-network`; the site activate/unarchive/unspam/public paths are destructive in the
command table), and the agent's site scope (policy/site_scope.py) lets only the network's
administrators ask for any network command, reads included.
"""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.rule import Verdict, argument_rule

# Commands that act on the network rather than one site.
NETWORK_PATHS: tuple[tuple[str, ...], ...] = (
    ("site", "create"),
    ("site", "delete"),
    ("site", "archive"),
    ("site", "unarchive"),
    ("site", "activate"),
    ("site", "deactivate"),
    ("site", "spam"),
    ("site", "unspam"),
    ("site", "public"),
    ("site", "private"),
    ("site", "mature"),
    ("site", "unmature"),
    ("site", "generate"),
    ("user", "signup"),
    ("site", "option"),
    ("site", "meta"),
    ("network",),
    ("super-admin",),
    ("theme", "enable"),
    ("theme", "disable"),
    ("user", "spam"),
    ("user", "unspam"),
    # Shared by every site: the code and translation files of the installation, and the automatic
    # updates of plugins (a network option on a multisite: enabled from one site, on for all).
    ("plugin", "update"),
    ("plugin", "auto-updates"),
    ("theme", "update"),
    ("theme", "auto-updates"),
    *(
        ("language", kind, verb)
        for kind in ("core", "plugin", "theme")
        for verb in ("install", "update", "uninstall")
    ),
)
# Flags that widen a command from this site to every site of the network.
NETWORK_FLAGS = ("network", "activate-network")
# Sites given back to the public or to their users: their content and logins are live again.
_SITE_RESTORES: dict[tuple[str, ...], str] = {
    ("site", "activate"): "無効化されたサイトを有効に戻します",
    ("site", "unarchive"): "アーカイブされたサイトを元に戻します",
    ("site", "unspam"): "スパム指定されたサイトを元に戻します",
    ("site", "public"): "サイトを検索エンジンに公開します",
}


def is_network_command(cmd: ParsedCommand, path: tuple[str, ...]) -> bool:
    return cmd.has_flag(*NETWORK_FLAGS) or any(path[: len(p)] == p for p in NETWORK_PATHS)


@argument_rule(
    match=("site unarchive 3", "site public 2"),
    not_match=("site archive 3", "site private 2"),
    paths=_SITE_RESTORES,
)
def site_restores(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """(`path` may be a custom command's that begins with one of these: it restores a site as well.)"""
    return Verdict(
        PolicyCategory.DESTRUCTIVE,
        "confirm.network_site_state",
        f"{_SITE_RESTORES[path[:2]]}（サイト: {', '.join(cmd.args_after(path)) or '指定なし'}）。"
        "ネットワーク上のサイトの状態（公開・利用の可否）が変わるため、ネットワーク管理者の承認が必要です",
        " ".join(path),
    )


@argument_rule(
    match=(
        "plugin activate akismet --network",
        "plugin install akismet --activate-network",
        "theme enable twentytwentyone --network",
        "transient delete x --network",
    ),
    not_match=("plugin install akismet", "theme enable twentytwentyone", "site create --slug=news"),
)
def network_wide(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    flag = next((o for o in cmd.options if o.name in NETWORK_FLAGS), None)
    if flag is None:
        return None
    return Verdict(
        PolicyCategory.DESTRUCTIVE,
        "confirm.network_wide",
        f"ネットワークの全サイトに影響する操作です（{flag.token}）。ネットワーク管理者の承認が必要です",
        flag.token,
    )
