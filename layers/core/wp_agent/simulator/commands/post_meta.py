"""`wp post meta list|get|add|update|delete` (wp-cli/entity-command src/WP_CLI/CommandWithMeta.php).

Shared with `wp user meta` through `MetaStore`, which hides where the rows live.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wp_agent.simulator.commands.input import flag, read_value, text, value_from_arg_or_stdin
from wp_agent.simulator.commands.post import post_or_error
from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue, Formatter, print_value, raw_db_value
from wp_agent.simulator.model import MetaRow
from wp_agent.simulator.registry import command, describe
from wp_agent.simulator.synopsis import Param

describe("post meta", "Adds, updates, deletes, and lists post custom fields.")

LIST_FORMATS = Param(
    "Render output in a particular format.", ("table", "csv", "json", "yaml", "count"), "table"
)
GET_FORMATS = Param("Get value in a particular format.", ("var_export", "json", "yaml"), "var_export")
VALUE_FORMATS = Param("The serialization format for the value.", ("plaintext", "json"), "plaintext")
ORDERBY = Param("Set orderby which field.", ("id", "meta_key", "meta_value"), "id")
ORDER = Param("Set ascending or descending order.", ("asc", "desc"), "asc")


@dataclass(frozen=True)
class MetaStore:
    """Where one object type keeps its meta rows, and how an object reference is checked."""

    meta_type: str
    rows: Callable[[Context], list[MetaRow]]
    next_id: Callable[[Context], int]
    replace_rows: Callable[[Context, list[MetaRow]], None]
    check_object: Callable[[Context, str], int]


def _post_rows(ctx: Context) -> list[MetaRow]:
    return ctx.blog.postmeta


def _post_next_id(ctx: Context) -> int:
    value = int(ctx.blog.raw["next_meta_id"])
    ctx.blog.raw["next_meta_id"] = value + 1
    return value


def _post_replace(ctx: Context, rows: list[MetaRow]) -> None:
    ctx.blog.raw["postmeta"] = rows


POST_META = MetaStore(
    meta_type="post",
    rows=_post_rows,
    next_id=_post_next_id,
    replace_rows=_post_replace,
    check_object=lambda ctx, reference: post_or_error(ctx, reference)["ID"],
)


def _object_rows(store: MetaStore, ctx: Context, object_id: int, key: str | None = None) -> list[MetaRow]:
    return [
        row
        for row in store.rows(ctx)
        if row["object_id"] == object_id and (key is None or row["meta_key"] == key)
    ]


def meta_list(store: MetaStore, ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    object_id = store.check_object(ctx, args[0])
    keys = [key for key in text(assoc, "keys").split(",") if key]
    items: list[dict[str, Any]] = []
    for row in _object_rows(store, ctx, object_id):
        if keys and row["meta_key"] not in keys:
            continue
        value = row["meta_value"] if flag(assoc, "unserialize") else raw_db_value(row["meta_value"])
        items.append({f"{store.meta_type}_id": object_id, "meta_key": row["meta_key"], "meta_value": value})
    orderby = text(assoc, "orderby", "id")
    descending = text(assoc, "order", "asc") == "desc"
    if orderby != "id":
        items.sort(key=lambda item: str(item[orderby]), reverse=descending)
    elif descending:
        items.reverse()
    for key in ("orderby", "order", "keys", "unserialize"):
        assoc.pop(key, None)
    fields = text(assoc, "fields") or f"{store.meta_type}_id,meta_key,meta_value"
    assoc.pop("fields", None)
    Formatter(ctx.out, assoc, fields.split(","), store.meta_type).display_items(items)


def meta_get(store: MetaStore, ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    object_id = store.check_object(ctx, args[0])
    rows = _object_rows(store, ctx, object_id, args[1])
    value = rows[0]["meta_value"] if rows else ""
    if value == "":
        ctx.out.halt(1)
    output_format = text(assoc, "format", "var_export")
    print_value(ctx.out, value, None if output_format == "var_export" else output_format)


def meta_add(store: MetaStore, ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    value = read_value(ctx, value_from_arg_or_stdin(ctx, args, 2), assoc)
    object_id = store.check_object(ctx, args[0])
    store.rows(ctx).append(
        MetaRow(meta_id=store.next_id(ctx), object_id=object_id, meta_key=args[1], meta_value=value)
    )
    ctx.out.success("Added custom field.")


def meta_update(store: MetaStore, ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    key = args[1]
    value = read_value(ctx, value_from_arg_or_stdin(ctx, args, 2), assoc)
    object_id = store.check_object(ctx, args[0])
    rows = _object_rows(store, ctx, object_id, key)
    old = rows[0]["meta_value"] if rows else ""
    if value == old:
        ctx.out.success(f"Value passed for custom field '{key}' is unchanged.")
        return
    if rows:
        for row in rows:
            row["meta_value"] = value
    else:
        store.rows(ctx).append(
            MetaRow(meta_id=store.next_id(ctx), object_id=object_id, meta_key=key, meta_value=value)
        )
    ctx.out.success(f"Updated custom field '{key}'.")


def meta_delete(store: MetaStore, ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    key = args[1] if len(args) > 1 else ""
    value = args[2] if len(args) > 2 else ""
    if not key and not flag(assoc, "all"):
        ctx.error("Please specify a meta key, or use the --all flag.")
    object_id = store.check_object(ctx, args[0])
    if flag(assoc, "all"):
        for meta_key in dict.fromkeys(row["meta_key"] for row in _object_rows(store, ctx, object_id)):
            _delete_rows(store, ctx, object_id, meta_key, "")
            ctx.out.log(f"Deleted '{meta_key}' custom field.")
        ctx.out.success("Deleted all custom fields.")
        return
    if not _delete_rows(store, ctx, object_id, key, value):
        ctx.error("Failed to delete custom field.")
    ctx.out.success("Deleted custom field.")


def _delete_rows(store: MetaStore, ctx: Context, object_id: int, key: str, value: str) -> bool:
    doomed = {
        row["meta_id"]
        for row in _object_rows(store, ctx, object_id, key)
        if not value or raw_db_value(row["meta_value"]) == value
    }
    if not doomed:
        return False
    store.replace_rows(ctx, [row for row in store.rows(ctx) if row["meta_id"] not in doomed])
    return True


def register_meta_commands(prefix: str, store: MetaStore) -> None:
    list_params = {"format": LIST_FORMATS, "orderby": ORDERBY, "order": ORDER}

    @command(
        f"{prefix} list",
        "<id> [--keys=<keys>] [--fields=<fields>] [--format=<format>] [--orderby=<fields>] [--order=<order>] "
        "[--unserialize]",
        params=list_params,
        description="Lists all metadata associated with an object.",
    )
    def list_meta(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
        meta_list(store, ctx, args, assoc)

    @command(
        f"{prefix} get",
        "<id> <key> [--format=<format>]",
        params={"format": GET_FORMATS},
        description="Gets meta field value.",
    )
    def get_meta(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
        meta_get(store, ctx, args, assoc)

    @command(
        f"{prefix} add",
        "<id> <key> [<value>] [--format=<format>]",
        mutates=True,
        params={"format": VALUE_FORMATS},
        description="Adds a meta field.",
    )
    def add_meta(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
        meta_add(store, ctx, args, assoc)

    @command(
        f"{prefix} update",
        "<id> <key> [<value>] [--format=<format>]",
        mutates=True,
        params={"format": VALUE_FORMATS},
        description="Updates a meta field.",
        aliases=("set",),
    )
    def update_meta(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
        meta_update(store, ctx, args, assoc)

    @command(
        f"{prefix} delete",
        "<id> [<key>] [<value>] [--all]",
        mutates=True,
        description="Deletes a meta field.",
    )
    def delete_meta(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
        meta_delete(store, ctx, args, assoc)


register_meta_commands("post meta", POST_META)
