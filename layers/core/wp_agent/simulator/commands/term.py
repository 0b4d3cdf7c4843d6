"""`wp term list|get|create|update|delete` (wp-cli/entity-command src/Term_Command.php)."""

from __future__ import annotations

from typing import Any

from wp_agent.simulator.args import php_int
from wp_agent.simulator.commands.batch import report_batch_operation_results
from wp_agent.simulator.commands.input import flag, text
from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue, Formatter
from wp_agent.simulator.model import TermRow
from wp_agent.simulator.registry import command, describe
from wp_agent.simulator.synopsis import Param
from wp_agent.simulator.wordpress.errors import WPError
from wp_agent.simulator.wordpress.taxonomy import (
    TAXONOMIES,
    delete_term,
    get_terms,
    insert_term,
    term_by,
    term_link,
    update_term,
    with_count,
)

describe("term", "Manages taxonomy terms and term meta, with create, delete, and list commands.")

FORMAT_DESCRIPTION = "Render output in a particular format."
LIST_FORMATS = Param(FORMAT_DESCRIPTION, ("table", "csv", "ids", "json", "count", "yaml"), "table")
ITEM_FORMATS = Param(FORMAT_DESCRIPTION, ("table", "csv", "json", "yaml"), "table")
BY = Param("Explicitly handle the term value as a slug or id.", ("slug", "id"), "id")
DEFAULT_FIELDS = ("term_id", "term_taxonomy_id", "name", "slug", "description", "parent", "count")


def term_output(ctx: Context, term: TermRow) -> dict[str, Any]:
    data = with_count(ctx.blog, term)
    data["url"] = term_link(ctx.blog, term)
    return data


def _fetch(ctx: Context, taxonomy: str, reference: str, assoc: dict[str, ArgValue]) -> TermRow:
    by = text(assoc, "by", "id")
    term = term_by(ctx.blog, "slug" if by == "slug" else "id", reference, taxonomy)
    if term is None:
        ctx.error("Term doesn't exist.")
    return term


@command(
    "term list",
    "<taxonomy>... [--<field>=<value>] [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": LIST_FORMATS},
    description="Lists terms in a taxonomy.",
)
def list_terms(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    for taxonomy in args:
        if taxonomy not in TAXONOMIES:
            ctx.error(f"Taxonomy {taxonomy} doesn't exist.")
    formatter = Formatter(ctx.out, assoc, DEFAULT_FIELDS, "term")
    query: dict[str, Any] = {"hide_empty": False}
    query.update(assoc)
    if query.get("term_id"):
        found = term_by(ctx.blog, "id", query["term_id"], args[0])
        terms = [found] if found is not None else []
    else:
        terms = get_terms(ctx.blog, args, query)
    if formatter.format == "ids":
        ctx.out.write(" ".join(str(term["term_id"]) for term in terms))
        return
    formatter.display_items([term_output(ctx, term) for term in terms])


@command(
    "term get",
    "<taxonomy> <term> [--by=<field>] [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": ITEM_FORMATS, "by": BY},
    description="Gets details about a term.",
)
def get_term(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    term = _fetch(ctx, args[0], args[1], assoc)
    data = term_output(ctx, term)
    if not assoc.get("fields"):
        assoc["fields"] = ",".join(data)
    Formatter(ctx.out, assoc, None, "term").display_item(data)


@command(
    "term create",
    "<taxonomy> <term> [--slug=<slug>] [--description=<description>] [--parent=<term-id>] [--porcelain]",
    mutates=True,
    description="Creates a new term.",
)
def create_term(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    taxonomy, name = args
    parent = php_int(text(assoc, "parent", "0"))
    if parent > 0 and not any(term["term_id"] == parent for term in ctx.blog.terms):
        ctx.error("Parent term does not exist.")
    result = insert_term(
        ctx.blog,
        name,
        taxonomy,
        slug=text(assoc, "slug"),
        description=text(assoc, "description"),
        parent=parent,
    )
    if isinstance(result, WPError):
        ctx.error(result.message)
    if flag(assoc, "porcelain"):
        ctx.out.line(str(result["term_id"]))
    else:
        ctx.out.success(f"Created {taxonomy} {result['term_id']}.")


@command(
    "term update",
    "<taxonomy> <term> [--by=<field>] [--name=<name>] [--slug=<slug>] [--description=<description>] "
    "[--parent=<term-id>]",
    mutates=True,
    params={"by": BY},
    description="Updates an existing term.",
)
def edit_term(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    taxonomy = args[0]
    term = _fetch(ctx, taxonomy, args[1], assoc)
    changes = {key: value for key, value in assoc.items() if key in ("name", "slug", "description", "parent")}
    result = update_term(ctx.blog, term, changes)
    if isinstance(result, WPError):
        ctx.error(result.message)
    ctx.out.success("Term updated.")


@command(
    "term delete",
    "<taxonomy> <term>... [--by=<field>]",
    mutates=True,
    params={"by": BY},
    description="Deletes an existing term.",
)
def remove_terms(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    taxonomy, references = args[0], args[1:]
    successes = errors = 0
    for reference in references:
        label, term_id = reference, php_int(reference)
        if text(assoc, "by") == "slug":
            term = term_by(ctx.blog, "slug", reference, taxonomy)
            if term is None:
                ctx.out.warning(f"{taxonomy} {reference} doesn't exist.")
                continue
            term_id = term["term_id"]
            label = str(term_id)
        result = delete_term(ctx.blog, term_id, taxonomy)
        if isinstance(result, WPError):
            ctx.out.warning(result.message)
            errors += 1
        elif result:
            ctx.out.log(f"Deleted {taxonomy} {label}.")
            successes += 1
        else:
            ctx.out.warning(f"{taxonomy} {label} doesn't exist.")
    report_batch_operation_results(ctx.out, "term", "delete", len(references), successes, errors)
