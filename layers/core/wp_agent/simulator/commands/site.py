"""`wp site list|create|delete` on a multisite network (wp-cli/entity-command src/Site_Command.php)."""

from __future__ import annotations

import re
from typing import Any

from wp_agent.simulator.args import php_int
from wp_agent.simulator.commands.input import flag, text
from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue, Formatter
from wp_agent.simulator.model import Blog, SiteRow
from wp_agent.simulator.registry import command, describe
from wp_agent.simulator.seed import new_blog
from wp_agent.simulator.synopsis import Param
from wp_agent.simulator.wordpress.posts import insert_post
from wp_agent.simulator.wordpress.taxonomy import insert_term

describe(
    "site", "Creates, deletes, empties, moderates, and lists one or more sites on a multisite installation."
)

NOT_MULTISITE = "This is not a multisite installation."
RESERVED = ("page", "comments", "blog", "files", "feed")


def _require_multisite(ctx: Context) -> None:
    if not ctx.multisite:
        ctx.error(NOT_MULTISITE)


def _site_item(ctx: Context, site: SiteRow) -> dict[str, Any]:
    home = ctx.network.blog(site["blog_id"]).home_url if ctx.network.has_blog(site["blog_id"]) else ""
    return {
        "blog_id": str(site["blog_id"]),
        "site_id": "1",
        "domain": site["domain"],
        "path": site["path"],
        "registered": site["registered"],
        "last_updated": site["last_updated"],
        "public": str(site["public"]),
        "archived": str(site["archived"]),
        "mature": str(site["mature"]),
        "spam": str(site["spam"]),
        "deleted": str(site["deleted"]),
        "lang_id": str(site["lang_id"]),
        "url": home.rstrip("/") + "/",
    }


@command(
    "site list",
    "[--network=<id>] [--<field>=<value>] [--site__in=<value>] [--field=<field>] [--fields=<fields>] "
    "[--format=<format>]",
    params={
        "format": Param(
            "Render output in a particular format.", ("table", "csv", "count", "ids", "json", "yaml"), "table"
        )
    },
    description="Lists all sites in a multisite installation.",
)
def list_sites(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    _require_multisite(ctx)
    if isinstance(assoc.get("fields"), str):
        assoc["fields"] = ",".join(re.split(r",[ \t]*", str(assoc["fields"])))
    else:
        assoc["fields"] = "blog_id,url,last_updated,registered"
    items = [_site_item(ctx, site) for site in ctx.network.sites]
    for column in (
        "blog_id",
        "last_updated",
        "registered",
        "domain",
        "path",
        "public",
        "archived",
        "mature",
        "spam",
        "deleted",
        "lang_id",
    ):
        if isinstance(assoc.get(column), str):
            wanted = str(assoc.pop(column))
            items = [item for item in items if item[column] == wanted]
    if isinstance(assoc.get("site__in"), str):
        order = [value.strip() for value in str(assoc.pop("site__in")).split(",")]
        items = sorted(
            (item for item in items if item["blog_id"] in order),
            key=lambda item: order.index(item["blog_id"]),
        )
    formatter = Formatter(ctx.out, assoc, None, "site")
    if formatter.format == "ids":
        formatter.display_items([item["blog_id"] for item in items])
    else:
        formatter.display_items(items)


def _install_default_content(ctx: Context, blog: Blog) -> None:
    insert_term(blog, "未分類", "category", slug="uncategorized")
    for fields in (
        {
            "post_title": "Hello world!",
            "post_content": "WordPress へようこそ。こちらは最初の投稿です。",
            "post_status": "publish",
            "post_name": "hello-world",
        },
        {
            "post_title": "サンプルページ",
            "post_content": "これはサンプルページです。",
            "post_status": "publish",
            "post_type": "page",
            "post_name": "sample-page",
        },
    ):
        insert_post(blog, ctx.clock, fields, 1)


@command(
    "site create",
    "--slug=<slug> [--title=<title>] [--email=<email>] [--network_id=<network-id>] [--private] [--porcelain]",
    mutates=True,
    params={
        "slug": Param(
            "Path for the new site. Subdomain on subdomain installs, directory on subdirectory installs."
        ),
    },
    description="Creates a site in a multisite installation.",
)
def create_site(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    _require_multisite(ctx)
    base = text(assoc, "slug")
    if re.fullmatch(r"[a-zA-Z0-9-]+", base):
        base = base.lower()
    if base in RESERVED:
        ctx.error("The following words are reserved and cannot be used as blog names: " + ", ".join(RESERVED))
    network_id = text(assoc, "network_id")
    if network_id and network_id != "1":
        ctx.error(f"Network with id {network_id} does not exist.")
    domain = str(ctx.network.raw["network"]["domain"])
    path = f"{ctx.network.raw['network']['path']}{base}/"
    if any(site["domain"] == domain and site["path"] == path for site in ctx.network.sites):
        ctx.error("Sorry, that site already exists!")
    blog_id = int(ctx.network.raw["network"]["next_blog_id"])
    ctx.network.raw["network"]["next_blog_id"] = blog_id + 1
    home = f"https://{domain}{path}".rstrip("/")
    title = text(assoc, "title", base[:1].upper() + base[1:])
    ctx.network.raw["blogs"][str(blog_id)] = new_blog(blog_id, home, title)
    now = ctx.now_gmt()
    ctx.network.sites.append(
        SiteRow(
            blog_id=blog_id,
            domain=domain,
            path=path,
            registered=now,
            last_updated=now,
            public=0 if flag(assoc, "private") else 1,
            archived=0,
            mature=0,
            spam=0,
            deleted=0,
            lang_id=0,
        )
    )
    blog = ctx.network.blog(blog_id)
    _install_default_content(ctx, blog)
    admin = ctx.network.user(1)
    if admin is not None:
        admin["roles"][str(blog_id)] = ["administrator"]
    if flag(assoc, "porcelain"):
        ctx.out.line(str(blog_id))
    else:
        ctx.out.success(f"Site {blog_id} created: {home}/")


@command(
    "site delete",
    "[<site-id>] [--slug=<slug>] [--yes] [--keep-tables]",
    mutates=True,
    description="Deletes a site in a multisite installation.",
)
def delete_site(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    _require_multisite(ctx)
    site: SiteRow | None = None
    if isinstance(assoc.get("slug"), str):
        slug = str(assoc["slug"]).strip("/")
        site = next((s for s in ctx.network.sites if s["path"].strip("/") == slug), None)
    else:
        if not args:
            ctx.error("Need to specify a blog id.")
        if php_int(args[0]) == 1:
            ctx.error("You cannot delete the root site.")
        site = ctx.network.site(php_int(args[0]))
    if site is None or not ctx.network.has_blog(site["blog_id"]):
        ctx.error("Site not found.")
    url = ctx.network.blog(site["blog_id"]).site_url + "/"
    ctx.confirm(f"Are you sure you want to delete the '{url}' site?")
    ctx.network.raw["sites"] = [s for s in ctx.network.sites if s["blog_id"] != site["blog_id"]]
    del ctx.network.raw["blogs"][str(site["blog_id"])]
    for user in ctx.network.users:
        user["roles"].pop(str(site["blog_id"]), None)
    ctx.out.success(f"The site at '{url}' was deleted.")
