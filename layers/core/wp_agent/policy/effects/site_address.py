"""The address of a new site of the network (`site create --slug=…`), as WordPress itself admits it.

On a sub-directory network the slug becomes a path of the main site's address, and WordPress finds
the site of a request by that path before anything else. WP-CLI's `site create` checks neither the
names WordPress reserves nor the main site's pages: on the real network `site create --slug=wp-admin`
made every `/wp-admin/` request load the new site, and `--slug=about` hid the main site's published
"about" page behind an empty site. WordPress's own screens refuse both (network/site-new.php: the
reserved names; wpmu_validate_blog_signup() and avoid_blog_page_permalink_collision(): a main-site
page's slug). So a new site runs without approval only at an address that takes nothing away:
a plain lowercase slug, not a reserved name, and no page of the main site at that path (read on the
site before the command runs).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.effects.values import SiteCheck, ValueCheck
from wp_agent.whole_values import whole

# get_subdirectory_reserved_names() of WordPress 6.1, and the network's default banned names.
RESERVED_SITE_NAMES = frozenset(
    {"page", "comments", "blog", "files", "feed", "wp-admin", "wp-content", "wp-includes", "wp-json",
     "embed", "www", "web", "root", "admin", "main", "invite", "administrator"}
)  # fmt: skip
_SITE_SLUG = whole(r"[a-z0-9][a-z0-9-]{0,62}", "shop", "blog-2")
_ALL_PAGE_STATUSES = "publish,future,draft,pending,private,trash,auto-draft,inherit"


def address_name(url: str) -> str:
    """The last part of a network site's address, what `--slug` names (https://x.test/shop/ -> shop)."""
    return url.rstrip("/").rsplit("/", 1)[-1].lower()


SITE_SLUG = ValueCheck(
    "半角英小文字・数字・- のアドレス（WordPressが予約している名前を除く）",
    lambda v: v is not None and _SITE_SLUG.fits(v) and v not in RESERVED_SITE_NAMES,
    samples=("tokyo", "news2026"),
)


def _no_page(stdout: str | None) -> bool:
    return stdout is not None and stdout.split() == []


def _page_conflict(slug: str, main_site: tuple[str, ...]) -> SiteCheck:
    return SiteCheck(
        argv=(
            "post",
            "list",
            "--post_type=page",
            f"--name={slug}",
            f"--post_status={_ALL_PAGE_STATUSES}",
            "--format=ids",
            *main_site,
        ),
        confirms=_no_page,
        reason_ja=(
            f"新しいサイトのアドレス「/{slug}/」に、メインサイトの固定ページがないことを確認できませんでした"
            "（同じアドレスの固定ページがあると、そのページが表示されなくなります）"
        ),
    )


def main_site_of(cmd: ParsedCommand) -> tuple[str, ...]:
    """The `--url` of the network's main site, where a new site's path is taken: the root of the
    site the command names (`--url=https://example.test/en/` → `https://example.test/`); none
    without a `--url` (WP-CLI then loads the main site). A network installed below the root does
    not answer there: the read fails and the site waits for approval."""
    urls = cmd.option_values("url")
    if not urls:
        return ()
    parts = urlsplit(urls[-1] if "://" in urls[-1] else f"http://{urls[-1]}")
    return (f"--url={parts.scheme}://{parts.netloc}/",)


def site_address_checks(cmd: ParsedCommand, path: tuple[str, ...]) -> list[SiteCheck]:
    """The main site's pages read before `site create`: none may have the new site's slug. The read
    names the main site itself: the command's own `--url` (any site of the network) does not decide
    where the new site goes (tried: `--url=…/en/` and `--slug=about` hid the main site's About page)."""
    main_site = main_site_of(cmd)
    return [_page_conflict(slug, main_site) for slug in cmd.option_values("slug") if SITE_SLUG.accepts(slug)]
