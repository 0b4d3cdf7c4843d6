"""`wp menu`, `wp menu item`, `wp menu location` (wp-cli/entity-command src/Menu_Command.php,
src/Menu_Item_Command.php, src/Menu_Location_Command.php). Menus are `nav_menu` terms, items are
`nav_menu_item` posts, locations live in the active theme's theme mods.
"""

from __future__ import annotations

from typing import Any

from wp_agent.simulator.args import php_int
from wp_agent.simulator.commands.batch import report_batch_operation_results
from wp_agent.simulator.commands.input import flag, text
from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue, Formatter
from wp_agent.simulator.model import PostRow, TermRow
from wp_agent.simulator.registry import command, describe
from wp_agent.simulator.synopsis import Param
from wp_agent.simulator.wordpress.errors import WPError
from wp_agent.simulator.wordpress.posts import insert_post, permalink
from wp_agent.simulator.wordpress.taxonomy import insert_term, term_by, term_count

describe("menu", "Lists, creates, assigns, and deletes the active theme's navigation menus.")
describe("menu item", "List, add, and delete items associated with a menu.")
describe("menu location", "Assigns, removes, and lists a menu's locations.")

FORMAT_DESCRIPTION = "Render output in a particular format."


def menu_object(ctx: Context, reference: str) -> TermRow | None:
    """`wp_get_nav_menu_object`: term ID, slug or name."""
    return (
        term_by(ctx.blog, "id", reference, "nav_menu")
        or term_by(ctx.blog, "slug", reference, "nav_menu")
        or term_by(ctx.blog, "name", reference, "nav_menu")
    )


def _theme_mods(ctx: Context) -> dict[str, Any]:
    key = f"theme_mods_{ctx.blog.option_str('stylesheet')}"
    mods = ctx.blog.get_option(key)
    if not isinstance(mods, dict):
        mods = {}
        ctx.blog.set_option(key, mods)
    return mods


def _locations(ctx: Context) -> dict[str, Any]:
    locations = _theme_mods(ctx).setdefault("nav_menu_locations", {})
    return locations if isinstance(locations, dict) else {}


def _registered_locations(ctx: Context) -> dict[str, str]:
    theme = ctx.network.theme(ctx.blog.option_str("stylesheet"))
    return dict(theme["menu_locations"]) if theme else {}


def _menu_items(ctx: Context, menu: TermRow) -> list[PostRow]:
    ids = set(ctx.blog.term_object_ids(menu["term_taxonomy_id"]))
    items = [post for post in ctx.blog.posts if post["ID"] in ids and post["post_type"] == "nav_menu_item"]
    return sorted(items, key=lambda post: (post["menu_order"], post["ID"]))


@command(
    "menu list",
    "[--fields=<fields>] [--format=<format>]",
    params={"format": Param(FORMAT_DESCRIPTION, ("table", "csv", "json", "count", "ids", "yaml"), "table")},
    description="Gets a list of menus.",
)
def list_menus(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    join_locations = text(assoc, "format", "table") in ("csv", "table")
    locations = _locations(ctx)
    menus = []
    for menu in sorted(ctx.blog.terms_in("nav_menu"), key=lambda term: term["name"].casefold()):
        item: dict[str, Any] = dict(menu)
        item["count"] = term_count(ctx.blog, menu)
        assigned = [name for name, term_id in locations.items() if term_id == menu["term_id"]]
        item["locations"] = ",".join(assigned) if join_locations else assigned
        menus.append(item)
    formatter = Formatter(ctx.out, assoc, ("term_id", "name", "slug", "locations", "count"), "nav_menu")
    if formatter.format == "ids":
        formatter.display_items([menu["term_id"] for menu in menus])
    else:
        formatter.display_items(menus)


@command("menu create", "<menu-name> [--porcelain]", mutates=True, description="Creates a new menu.")
def create_menu(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    name = args[0]
    if term_by(ctx.blog, "name", name, "nav_menu") is not None:
        ctx.error(
            f"The menu name <strong>{name}</strong> conflicts with another menu name. Please try another."
        )
    menu = insert_term(ctx.blog, name, "nav_menu")
    if isinstance(menu, WPError):
        ctx.error(menu.message)
    if flag(assoc, "porcelain"):
        ctx.out.line(str(menu["term_id"]))
    else:
        ctx.out.success(f"Created menu {menu['term_id']}.")


@command("menu delete", "<menu>...", mutates=True, description="Deletes one or more menus.")
def delete_menus(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    successes = errors = 0
    for reference in args:
        menu = menu_object(ctx, reference)
        if menu is None:
            ctx.out.warning(f"Couldn't delete menu '{reference}'.")
            errors += 1
            continue
        for item in _menu_items(ctx, menu):
            ctx.blog.remove_post(item["ID"])
        ctx.blog.raw["terms"] = [term for term in ctx.blog.terms if term["term_id"] != menu["term_id"]]
        locations = _locations(ctx)
        for location, term_id in list(locations.items()):
            if term_id == menu["term_id"]:
                locations[location] = 0
        ctx.out.log(f"Deleted menu '{reference}'.")
        successes += 1
    report_batch_operation_results(ctx.out, "menu", "delete", len(args), successes, errors)


def _item_output(ctx: Context, item: PostRow) -> dict[str, Any]:
    kind = str(ctx.blog.get_meta(item["ID"], "_menu_item_type"))
    object_id = str(ctx.blog.get_meta(item["ID"], "_menu_item_object_id"))
    title = item["post_title"]
    link = str(ctx.blog.get_meta(item["ID"], "_menu_item_url"))
    if kind == "post_type":
        target = ctx.blog.post(php_int(object_id))
        if target is not None:
            title = title or target["post_title"]
            link = permalink(ctx.blog, target)
    return {
        "db_id": item["ID"],
        "type": kind,
        "title": title,
        "link": link,
        "position": item["menu_order"],
        "menu_item_parent": str(ctx.blog.get_meta(item["ID"], "_menu_item_menu_item_parent") or "0"),
        "object_id": object_id,
        "object": str(ctx.blog.get_meta(item["ID"], "_menu_item_object")),
        "type_label": "Custom Link" if kind == "custom" else "Page",
        "target": str(ctx.blog.get_meta(item["ID"], "_menu_item_target")),
        "attr_title": item["post_excerpt"],
        "description": item["post_content"],
        "classes": "",
        "xfn": str(ctx.blog.get_meta(item["ID"], "_menu_item_xfn")),
    }


@command(
    "menu item list",
    "<menu> [--fields=<fields>] [--format=<format>]",
    params={"format": Param(FORMAT_DESCRIPTION, ("table", "csv", "json", "count", "ids", "yaml"), "table")},
    description="Gets a list of items associated with a menu.",
)
def list_items(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    menu = menu_object(ctx, args[0])
    if menu is None:
        ctx.error("Invalid menu.")
    formatter = Formatter(ctx.out, assoc, ("db_id", "type", "title", "link", "position"), "menu_item")
    items = [_item_output(ctx, item) for item in _menu_items(ctx, menu)]
    if formatter.format == "ids":
        formatter.display_items([item["db_id"] for item in items])
    else:
        formatter.display_items(items)


def _add_item(
    ctx: Context, menu: TermRow, assoc: dict[str, ArgValue], meta: dict[str, Any], title: str
) -> None:
    position = php_int(text(assoc, "position", "0"))
    if position <= 0:
        position = len(_menu_items(ctx, menu)) + 1
    fields = {
        "post_title": title,
        "post_status": "publish",
        "post_type": "nav_menu_item",
        "menu_order": position,
        "post_content": text(assoc, "description"),
        "post_excerpt": text(assoc, "attr-title"),
    }
    item = insert_post(ctx.blog, ctx.clock, fields, ctx.current_user_id)
    if isinstance(item, WPError):
        ctx.error(item.message)
    item["post_name"] = str(item["ID"])
    values = {
        "_menu_item_type": "custom",
        "_menu_item_menu_item_parent": text(assoc, "parent-id", "0"),
        "_menu_item_object_id": str(item["ID"]),
        "_menu_item_object": "custom",
        "_menu_item_target": text(assoc, "target"),
        "_menu_item_classes": [text(assoc, "classes")],
        "_menu_item_xfn": text(assoc, "xfn"),
        "_menu_item_url": "",
    }
    values.update(meta)
    for key, value in values.items():
        ctx.blog.add_meta(item["ID"], key, value)
    ctx.blog.relationships.append([item["ID"], menu["term_taxonomy_id"]])
    if flag(assoc, "porcelain"):
        ctx.out.line(str(item["ID"]))
    else:
        ctx.out.success("Menu item added.")


_ITEM_OPTIONS = (
    "[--title=<title>] [--link=<link>] [--description=<description>] [--attr-title=<attr-title>] "
    "[--target=<target>] [--classes=<classes>] [--position=<position>] [--parent-id=<parent-id>] [--porcelain]"
)


@command(
    "menu item add-post",
    "<menu> <post-id> " + _ITEM_OPTIONS,
    mutates=True,
    description="Adds a post as a menu item.",
)
def add_post_item(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    menu = menu_object(ctx, args[0])
    if menu is None:
        ctx.error("Invalid menu.")
    post = ctx.blog.post(php_int(args[1]))
    if post is None:
        ctx.error("Invalid post.")
    meta = {
        "_menu_item_type": "post_type",
        "_menu_item_object_id": str(post["ID"]),
        "_menu_item_object": post["post_type"],
    }
    _add_item(ctx, menu, assoc, meta, text(assoc, "title"))


@command(
    "menu item add-custom",
    "<menu> <title> <link> " + _ITEM_OPTIONS.replace("[--title=<title>] [--link=<link>] ", ""),
    mutates=True,
    description="Adds a custom menu item.",
)
def add_custom_item(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    menu = menu_object(ctx, args[0])
    if menu is None:
        ctx.error("Invalid menu.")
    _add_item(ctx, menu, assoc, {"_menu_item_url": args[2]}, args[1])


@command("menu item delete", "<db-id>...", mutates=True, description="Deletes one or more items from a menu.")
def delete_items(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    successes = errors = 0
    for reference in args:
        item = ctx.blog.post(php_int(reference))
        if item is None or item["post_type"] != "nav_menu_item":
            ctx.out.warning(f"Couldn't delete menu item {reference}.")
            errors += 1
            continue
        ctx.blog.remove_post(item["ID"])
        successes += 1
    report_batch_operation_results(ctx.out, "menu item", "delete", len(args), successes, errors)


@command(
    "menu location list",
    "[--format=<format>]",
    params={"format": Param(FORMAT_DESCRIPTION, ("table", "csv", "json", "count", "yaml", "ids"), "table")},
    description="Lists locations for the current theme.",
)
def list_locations(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    rows = [{"location": name, "description": label} for name, label in _registered_locations(ctx).items()]
    formatter = Formatter(ctx.out, assoc, ("location", "description"))
    if formatter.format == "ids":
        formatter.display_items([row["location"] for row in rows])
    else:
        formatter.display_items(rows)


@command(
    "menu location assign", "<menu> <location>", mutates=True, description="Assigns a location to a menu."
)
def assign_location(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    reference, location = args
    menu = menu_object(ctx, reference)
    if menu is None:
        ctx.error(f"Invalid menu {reference}.")
    if location not in _registered_locations(ctx):
        ctx.error(f"Invalid location {location}.")
    _locations(ctx)[location] = menu["term_id"]
    ctx.out.success(f"Assigned location {location} to menu {reference}.")


@command(
    "menu location remove", "<menu> <location>", mutates=True, description="Removes a location from a menu."
)
def remove_location(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    menu = menu_object(ctx, args[0])
    if menu is None:
        ctx.error("Invalid menu.")
    locations = _locations(ctx)
    if locations.get(args[1]) != menu["term_id"]:
        ctx.error("Menu isn't assigned to location.")
    locations[args[1]] = 0
    ctx.out.success("Removed location from menu.")
