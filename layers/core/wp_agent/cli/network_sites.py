"""`--site-url` / `--site-id` resolved against the real network before the model runs: an unknown site
(or a site option on a single site) is a usage error (exit 2) that lists the sites there are, so
nothing is paid for and no command runs on a site nobody meant."""

from __future__ import annotations

import json
from dataclasses import dataclass

from wp_agent.executors.port import WpCli
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.site_scope import normalise_site_url

SITE_LIST = ["site", "list", "--fields=blog_id,url", "--format=json"]


@dataclass(frozen=True)
class Site:
    blog_id: int
    url: str


class SiteSelectionError(Exception):
    """The chosen site is not on this WordPress; `message_ja` says which ones are."""

    def __init__(self, message_ja: str, sites: list[Site]) -> None:
        self.message_ja = message_ja
        self.sites = sites
        super().__init__(message_ja)


def list_sites(wp_cli: WpCli, policy: CommandPolicy) -> list[Site] | None:
    """The network's sites; None when this WordPress is not a multisite network."""
    decision = policy.classify_argv(SITE_LIST)
    if decision.category is not PolicyCategory.READ:  # pragma: no cover - a read by the policy's own table
        raise SiteSelectionError("サイト一覧を取得できません（ポリシーで許可されていません）。", [])
    result = wp_cli.run(list(decision.argv))
    if result.exit_code != 0:
        return None
    try:
        rows = json.loads(result.stdout)
        return [Site(int(row["blog_id"]), str(row["url"])) for row in rows]
    except (ValueError, KeyError, TypeError):
        return None


def resolve_site(
    wp_cli: WpCli, policy: CommandPolicy, *, site_url: str | None, site_id: int | None
) -> str | None:
    """The site's URL as WordPress has it, or SiteSelectionError (WpAgentError when WP-CLI cannot run)."""
    if site_url is None and site_id is None:
        return None
    sites = list_sites(wp_cli, policy)
    chosen = f"--site-url {site_url}" if site_url is not None else f"--site-id {site_id}"
    if sites is None:
        raise SiteSelectionError(
            f"{chosen} が指定されましたが、このWordPressはマルチサイトではありません。--site-url・--site-id を外して実行してください。",
            [],
        )
    for site in sites:
        if site_id is not None and site.blog_id == site_id:
            return site.url
        if site_url is not None and normalise_site_url(site.url) == normalise_site_url(site_url):
            return site.url
    listing = "、".join(f"{s.blog_id}: {s.url}" for s in sites)
    raise SiteSelectionError(
        f"{chosen} のサイトはこのネットワークにありません。存在するサイト: {listing}", sites
    )
