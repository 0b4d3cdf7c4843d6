"""`wp post-type list`, `wp taxonomy list`, `wp role list` (wp-cli/entity-command, wp-cli/role-command)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue, Formatter, php_string
from wp_agent.simulator.registry import command, describe
from wp_agent.simulator.synopsis import Param
from wp_agent.simulator.wordpress.posts import POST_TYPES
from wp_agent.simulator.wordpress.taxonomy import TAXONOMIES
from wp_agent.simulator.wordpress.users import ROLES

describe("post-type", "Retrieves details on the site's registered post types.")
describe("taxonomy", "Retrieves information about registered taxonomies.")
describe("role", "Manages user roles, including creating new roles and resetting to defaults.")

LIST_FORMATS = Param(
    "Render output in a particular format.", ("table", "csv", "json", "count", "yaml"), "table"
)


def _filter(items: list[dict[str, Any]], assoc: dict[str, ArgValue]) -> list[dict[str, Any]]:
    """`wp_filter_object_list` with loose (PHP ==) comparison on the given fields."""
    for key in list(assoc):
        if items and key in items[0] and key not in ("format", "fields", "field"):
            wanted = php_string(assoc.pop(key))
            items = [item for item in items if php_string(item[key]) == wanted]
    return items


@command(
    "post-type list",
    "[--<field>=<value>] [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": LIST_FORMATS},
    description="Lists registered post types.",
)
def list_post_types(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    items: list[dict[str, Any]] = [
        {
            "name": info.name,
            "label": info.label,
            "description": info.description,
            "hierarchical": info.hierarchical,
            "public": info.public,
            "capability_type": info.capability_type,
            "count": sum(1 for post in ctx.blog.posts if post["post_type"] == info.name),
        }
        for info in POST_TYPES.values()
    ]
    items = _filter(items, assoc)
    Formatter(
        ctx.out, assoc, ("name", "label", "description", "hierarchical", "public", "capability_type")
    ).display_items(items)


@command(
    "taxonomy list",
    "[--<field>=<value>] [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": LIST_FORMATS},
    description="Lists registered taxonomies.",
)
def list_taxonomies(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    items: list[dict[str, Any]] = [
        {
            "name": info.name,
            "label": info.label,
            "description": info.description,
            "object_type": ", ".join(info.object_types),
            "show_tagcloud": info.show_tagcloud,
            "hierarchical": info.hierarchical,
            "public": info.public,
        }
        for info in TAXONOMIES.values()
    ]
    items = _filter(items, assoc)
    Formatter(
        ctx.out,
        assoc,
        ("name", "label", "description", "object_type", "show_tagcloud", "hierarchical", "public"),
    ).display_items(items)


def _roles() -> Mapping[str, str]:
    return ROLES


@command(
    "role list",
    "[--fields=<fields>] [--field=<field>] [--format=<format>]",
    params={"format": LIST_FORMATS},
    description="Lists all roles.",
)
def list_roles(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    rows = [{"name": label, "role": role} for role, label in _roles().items()]
    Formatter(ctx.out, assoc, ("name", "role")).display_items(rows)
