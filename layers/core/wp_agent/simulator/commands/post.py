"""`wp post list|get|create|update|delete|exists|url-to-id` (wp-cli/entity-command src/Post_Command.php)."""

from __future__ import annotations

import json
import os
from typing import Any

from wp_agent.simulator.args import is_php_numeric_id, php_int
from wp_agent.simulator.commands.batch import Outcome, run_each
from wp_agent.simulator.commands.input import flag, text
from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue, Formatter, print_value
from wp_agent.simulator.model import PostRow
from wp_agent.simulator.registry import command, describe
from wp_agent.simulator.synopsis import Param
from wp_agent.simulator.wordpress.errors import WPError
from wp_agent.simulator.wordpress.posts import (
    POST_FIELDS,
    delete_post,
    find_by_url,
    insert_post,
    permalink,
    query_posts,
    update_post,
)
from wp_agent.simulator.wordpress.taxonomy import term_exists

describe("post", "Manages posts, content, and meta.")

FORMAT_DESCRIPTION = "Render output in a particular format."
ITEM_FORMATS = Param(FORMAT_DESCRIPTION, ("table", "csv", "json", "yaml"), "table")
LIST_FORMATS = Param(FORMAT_DESCRIPTION, ("table", "csv", "ids", "json", "count", "yaml"), "table")
DEFAULT_FIELDS = ("ID", "post_title", "post_name", "post_date", "post_status")
NOT_FOUND = "Could not find the post with ID {}."

_POST_ARGS = (
    "[--post_author=<post_author>] [--post_date=<post_date>] [--post_date_gmt=<post_date_gmt>] "
    "[--post_content=<post_content>] [--post_content_filtered=<post_content_filtered>] "
    "[--post_title=<post_title>] [--post_excerpt=<post_excerpt>] [--post_status=<post_status>] "
    "[--post_type=<post_type>] [--comment_status=<comment_status>] [--ping_status=<ping_status>] "
    "[--post_password=<post_password>] [--post_name=<post_name>] {from_post}[--to_ping=<to_ping>] "
    "[--pinged=<pinged>] [--post_modified=<post_modified>] [--post_modified_gmt=<post_modified_gmt>] "
    "[--post_parent=<post_parent>] [--menu_order=<menu_order>] [--post_mime_type=<post_mime_type>] "
    "[--guid=<guid>] [--post_category=<post_category>] [--tags_input=<tags_input>] "
    "[--tax_input=<tax_input>] [--meta_input=<meta_input>] [<file>]"
)


def post_or_error(ctx: Context, reference: str) -> PostRow:
    """`WP_CLI\\Fetchers\\Post::get_check` (the message formats the ID with %d)."""
    post = ctx.blog.post(php_int(reference))
    if post is None:
        ctx.error(NOT_FOUND.format(php_int(reference)))
    return post


def post_output(ctx: Context, post: PostRow) -> dict[str, Any]:
    data: dict[str, Any] = {key: post[key] for key in POST_FIELDS}  # type: ignore[literal-required]
    data["url"] = permalink(ctx.blog, post)
    return data


def _read_content(ctx: Context, source: str) -> str:
    if source == "-":
        return ctx.read_stdin()
    if not os.path.isfile(source):
        ctx.error(f"Unable to read content from '{source}'.")
    with open(source, encoding="utf-8") as handle:
        return handle.read()


def _category_ids(ctx: Context, raw: str) -> list[Any]:
    """Post_Command::get_category_ids: names, slugs or IDs; unknown ones are an error."""
    categories = raw.split(",")
    ids: list[Any] = []
    for category in categories:
        if not category.strip():
            continue
        numeric = category.strip().isdigit() and int(category) > 0
        term = term_exists(ctx.blog, int(category) if numeric else category, "category")
        if term is None:
            ctx.error(f"No such post category '{category}'.")
        ids.append(term["term_id"])
    return ids or categories


def _prepare_fields(ctx: Context, assoc: dict[str, ArgValue]) -> dict[str, Any]:
    fields: dict[str, Any] = {key: value for key, value in assoc.items() if key not in ("porcelain", "edit")}
    if isinstance(assoc.get("post_category"), str):
        fields["post_category"] = _category_ids(ctx, str(assoc["post_category"]))
    meta_input = assoc.get("meta_input")
    if isinstance(meta_input, str):
        try:
            decoded = json.loads(meta_input)
        except ValueError:
            decoded = None
        if decoded is not None:
            fields["meta_input"] = decoded
    return fields


@command(
    "post list",
    "[--<field>=<value>] [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": LIST_FORMATS},
    description="Gets a list of posts.",
)
def list_posts(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    formatter = Formatter(ctx.out, assoc, DEFAULT_FIELDS, "post")
    query: dict[str, Any] = {"posts_per_page": -1, "post_status": "any"}
    query.update(assoc)
    for key, value in list(query.items()):
        if "__" in key and isinstance(value, str):
            query[key] = value.split(",")
    posts = query_posts(ctx.blog, query)
    if formatter.format == "ids":
        ctx.out.write(" ".join(str(post["ID"]) for post in posts))
    elif formatter.format == "count":
        formatter.display_items([post["ID"] for post in posts])
    else:
        formatter.display_items([post_output(ctx, post) for post in posts])


@command(
    "post get",
    "<id> [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": ITEM_FORMATS},
    description="Gets details about a post.",
)
def get_post(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    post = post_or_error(ctx, args[0])
    data = post_output(ctx, post)
    del data["filter"]
    if not assoc.get("fields"):
        assoc["fields"] = ",".join(data)
    Formatter(ctx.out, assoc, None, "post").display_item(data)


@command(
    "post create",
    _POST_ARGS.format(from_post="[--from-post=<post_id>] ") + " [--<field>=<value>] [--edit] [--porcelain]",
    mutates=True,
    description="Creates a new post.",
)
def create_post(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    if args:
        assoc["post_content"] = _read_content(ctx, args[0])
    fields = _prepare_fields(ctx, assoc)
    source = assoc.get("from-post")
    if isinstance(source, str):
        original = post_or_error(ctx, source)
        copied: dict[str, Any] = {
            k: v for k, v in original.items() if k not in ("ID", "post_date", "post_date_gmt", "guid")
        }
        copied.update(fields)
        fields = copied
    result = insert_post(ctx.blog, ctx.clock, fields, ctx.current_user_id)
    if isinstance(result, WPError):
        ctx.error(result.message)
    if flag(assoc, "porcelain"):
        ctx.out.line(str(result["ID"]))
    else:
        ctx.out.success(f"Created post {result['ID']}.")


@command(
    "post update",
    "<id>... " + _POST_ARGS.format(from_post="") + " --<field>=<value> [--defer-term-counting]",
    mutates=True,
    description="Updates one or more existing posts.",
)
def update_posts(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    ids = list(args)
    for index, arg in enumerate(ids):
        if not is_php_numeric_id(arg):
            assoc["post_content"] = _read_content(ctx, arg)
            del ids[index]
            break
    if not assoc:
        ctx.error("Need some fields to update.")
    fields = _prepare_fields(ctx, assoc)

    def update_one(post_id: str) -> Outcome:
        result = update_post(ctx.blog, ctx.clock, {**fields, "ID": post_id}, ctx.current_user_id)
        if isinstance(result, WPError):
            return ("error", result.message)
        return ("success", f"Updated post {post_id}.")

    run_each(ctx.out, ids, update_one)


@command(
    "post delete",
    "<id>... [--force] [--defer-term-counting]",
    mutates=True,
    description="Deletes an existing post.",
)
def delete_posts(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    force = flag(assoc, "force")

    def delete_one(reference: str) -> Outcome:
        post = ctx.blog.post(php_int(reference))
        status = post["post_status"] if post is not None else ""
        post_type = post["post_type"] if post is not None else ""
        if not force and post_type not in ("post", "page"):
            return (
                "error",
                f"Posts of type '{post_type}' do not support being sent to trash.\n"
                "Please use the --force flag to skip trash and delete them permanently.",
            )
        if delete_post(ctx.blog, ctx.clock, php_int(reference), force=force) is None:
            return ("error", f"Failed deleting post {reference}.")
        action = "Deleted" if force or status == "trash" or post_type == "revision" else "Trashed"
        return ("success", f"{action} post {reference}.")

    run_each(ctx.out, args, delete_one)


@command("post exists", "<id>", description="Verifies whether a post exists.")
def post_exists(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    if ctx.blog.post(php_int(args[0])) is None:
        ctx.out.halt(1)
    ctx.out.success(f"Post with ID {args[0]} exists.")


@command("post url-to-id", "<url>", description="Gets the post ID for a given URL.")
def url_to_id(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    post = find_by_url(ctx.blog, args[0])
    if post is None:
        ctx.error(f"Could not get post with url {args[0]}.")
    print_value(ctx.out, post["ID"], text(assoc, "format") or None)
