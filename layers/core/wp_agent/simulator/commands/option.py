"""`wp option get|list|add|update|delete|pluck` (wp-cli/entity-command src/Option_Command.php)."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any

from wp_agent.simulator.commands.input import flag, read_value, text, value_from_arg_or_stdin
from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue, Formatter, print_value, raw_db_value
from wp_agent.simulator.registry import command, describe
from wp_agent.simulator.synopsis import Param

describe("option", "Retrieves and sets site options, including plugin and WordPress settings.")

GET_FORMATS = Param("Get value in a particular format.", ("var_export", "json", "yaml"), "var_export")
VALUE_FORMATS = Param("The serialization format for the value.", ("plaintext", "json"), "plaintext")
AUTOLOAD = Param("Should this option be automatically loaded.", ("on", "off", "yes", "no"))
LIST_FORMATS = Param(
    "The serialization format for the value. total_bytes displays the total size of matching options in bytes.",
    ("table", "json", "csv", "count", "yaml", "total_bytes"),
    "table",
)
PLUCK_FORMATS = Param("The output format of the value.", ("plaintext", "json", "yaml"), "plaintext")


def _option_value(ctx: Context, key: str) -> Any:
    row = ctx.blog.option_row(key)
    return None if row is None else row["option_value"]


@command(
    "option get",
    "<key> [--format=<format>]",
    params={"format": GET_FORMATS},
    description="Gets the value for an option.",
)
def get_option(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    value = _option_value(ctx, args[0])
    if value is None:
        ctx.error(f"Could not get '{args[0]}' option. Does it exist?")
    output_format = text(assoc, "format", "var_export")
    print_value(ctx.out, value, None if output_format == "var_export" else output_format)


@command(
    "option add",
    "<key> [<value>] [--format=<format>] [--autoload=<autoload>]",
    mutates=True,
    params={"format": VALUE_FORMATS, "autoload": AUTOLOAD},
    description="Adds a new option value.",
)
def add_option(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    key = args[0]
    value = read_value(ctx, value_from_arg_or_stdin(ctx, args, 1), assoc)
    autoload = "no" if text(assoc, "autoload") in ("no", "off") else "yes"
    if ctx.blog.option_row(key) is not None or not key.strip():
        ctx.error(f"Could not add option '{key}'. Does it already exist?")
    ctx.blog.set_option(key, value, autoload)
    ctx.out.success(f"Added '{key}' option.")


@command(
    "option update",
    "<key> [<value>] [--autoload=<autoload>] [--format=<format>]",
    mutates=True,
    params={"format": VALUE_FORMATS, "autoload": AUTOLOAD},
    description="Updates an option value.",
    aliases=("set",),
)
def update_option(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    key = args[0]
    value = read_value(ctx, value_from_arg_or_stdin(ctx, args, 1), assoc)
    if key in ("siteurl", "home", "category_base", "tag_base") and isinstance(value, str):
        value = value.rstrip("/")
    autoload = text(assoc, "autoload") or None
    row = ctx.blog.option_row(key)
    if row is not None and row["option_value"] == value and autoload is None:
        ctx.out.success(f"Value passed for '{key}' option is unchanged.")
        return
    ctx.blog.set_option(key, value)
    updated = ctx.blog.option_row(key)
    if updated is not None and autoload is not None:
        updated["autoload"] = "no" if autoload in ("no", "off") else "yes"
    ctx.out.success(f"Updated '{key}' option.")


@command("option delete", "<key>...", mutates=True, description="Deletes an option.")
def delete_options(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    for key in args:
        if ctx.blog.delete_option(key):
            ctx.out.success(f"Deleted '{key}' option.")
        else:
            ctx.out.warning(f"Could not delete '{key}' option. Does it exist?")


@command(
    "option list",
    "[--search=<pattern>] [--exclude=<pattern>] [--autoload=<value>] [--transients] [--unserialize] "
    "[--field=<field>] [--fields=<fields>] [--format=<format>] [--orderby=<fields>] [--order=<order>]",
    params={
        "format": LIST_FORMATS,
        "orderby": Param(
            "Set orderby which field.", ("option_id", "option_name", "option_value"), "option_id"
        ),
        "order": Param("Set ascending or descending order.", ("asc", "desc"), "asc"),
    },
    description="Lists options and their values.",
)
def list_options(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    search = text(assoc, "search", "*")
    exclude = text(assoc, "exclude")
    autoload = text(assoc, "autoload")
    if autoload and autoload not in ("on", "off", "yes", "no"):
        ctx.error("Value of '--autoload' should be 'on', 'off', 'yes', or 'no'.")
    transients = flag(assoc, "transients")
    rows: list[dict[str, Any]] = []
    for row in ctx.blog.options:
        name = row["option_name"]
        is_transient = name.startswith(("_transient_", "_site_transient_"))
        if transients != is_transient:
            continue
        if not fnmatch.fnmatchcase(name, search) or (exclude and fnmatch.fnmatchcase(name, exclude)):
            continue
        if autoload and (row["autoload"] == "yes") != (autoload in ("on", "yes")):
            continue
        raw = raw_db_value(row["option_value"])
        rows.append(
            {
                "option_id": row["option_id"],
                "option_name": name,
                "option_value": row["option_value"] if flag(assoc, "unserialize") else raw,
                "autoload": row["autoload"],
                "size_bytes": str(len(raw.encode("utf-8"))),
            }
        )
    orderby = text(assoc, "orderby", "option_id")
    descending = text(assoc, "order", "asc") == "desc"
    rows.sort(
        key=lambda item: item[orderby] if orderby == "option_id" else str(item[orderby]), reverse=descending
    )
    if text(assoc, "format") == "total_bytes":
        ctx.out.line(str(sum(int(item["size_bytes"]) for item in rows)))
        return
    Formatter(ctx.out, assoc, ("option_name", "option_value")).display_items(rows)


def _traverse(value: Any, path: list[str]) -> tuple[bool, Any]:
    current = value
    for key in path:
        if isinstance(current, Mapping) and key in current:
            current = current[key]
        elif isinstance(current, list) and key.isdigit() and int(key) < len(current):
            current = current[int(key)]
        else:
            return False, None
    return True, current


@command(
    "option pluck",
    "<key> <key-path>... [--format=<format>]",
    params={"format": PLUCK_FORMATS},
    description="Gets a nested value from an option.",
)
def pluck_option(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    value = _option_value(ctx, args[0])
    if value is None:
        ctx.out.halt(1)
    found, nested = _traverse(value, args[1:])
    if not found:
        ctx.out.halt(1)
    output_format = text(assoc, "format", "plaintext")
    print_value(ctx.out, nested, None if output_format == "plaintext" else output_format)
