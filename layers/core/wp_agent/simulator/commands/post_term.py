"""`wp post term list|add|set|remove` (wp-cli/entity-command src/WP_CLI/CommandWithTerms.php)."""

from __future__ import annotations

from typing import Any

from wp_agent.simulator.args import php_int
from wp_agent.simulator.commands.input import flag, text
from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue, Formatter
from wp_agent.simulator.registry import command, describe
from wp_agent.simulator.synopsis import Param
from wp_agent.simulator.wordpress.errors import WPError
from wp_agent.simulator.wordpress.taxonomy import (
    object_terms,
    remove_object_terms,
    set_object_terms,
    term_by,
    with_count,
)

describe("post term", "Adds, updates, removes, and lists post terms.")

POST_TAXONOMIES = ("category", "post_tag", "post_format")
LIST_FORMATS = Param(
    "Render output in a particular format.", ("table", "csv", "json", "yaml", "count", "ids"), "table"
)
BY = Param("Explicitly handle the term value as a slug or id.", ("slug", "id"), "slug")


def _check_taxonomy(ctx: Context, taxonomy: str) -> None:
    if taxonomy not in POST_TAXONOMIES:
        ctx.error(f"Invalid taxonomy {taxonomy}.")


def _terms_by(ctx: Context, assoc: dict[str, ArgValue], terms: list[str], taxonomy: str) -> list[str | int]:
    if text(assoc, "by") != "id":
        return list(terms)
    slugs: list[str | int] = []
    for term_id in terms:
        term = term_by(ctx.blog, "term_id", term_id, taxonomy)
        if term is not None:
            slugs.append(term["slug"])
    return slugs


@command(
    "post term list",
    "<id> <taxonomy>... [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": LIST_FORMATS},
    description="Lists all terms associated with an object.",
)
def list_terms(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    object_id, taxonomies = php_int(args[0]), args[1:]
    for taxonomy in taxonomies:
        _check_taxonomy(ctx, taxonomy)
    formatter = Formatter(ctx.out, assoc, ("term_id", "name", "slug", "taxonomy"), "post")
    terms = object_terms(ctx.blog, object_id, taxonomies)
    if formatter.format == "ids":
        formatter.display_items([term["term_id"] for term in terms])
        return
    items: list[dict[str, Any]] = [with_count(ctx.blog, term) for term in terms]
    formatter.display_items(items)


def _change(ctx: Context, args: list[str], assoc: dict[str, ArgValue], *, append: bool, verb: str) -> None:
    object_id, taxonomy, terms = php_int(args[0]), args[1], args[2:]
    _check_taxonomy(ctx, taxonomy)
    references = _terms_by(ctx, assoc, terms, taxonomy)
    label = "terms" if len(references) > 1 else "term"
    result = set_object_terms(ctx.blog, object_id, references, taxonomy, append=append)
    if isinstance(result, WPError):
        ctx.error(f"Failed to {verb.lower()} {label}.")
    ctx.out.success(f"{'Added' if verb == 'Add' else 'Set'} {label}.")


@command(
    "post term add",
    "<id> <taxonomy> <term>... [--by=<field>]",
    mutates=True,
    params={"by": BY},
    description="Adds a term to an object.",
)
def add_terms(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    _change(ctx, args, assoc, append=True, verb="Add")


@command(
    "post term set",
    "<id> <taxonomy> <term>... [--by=<field>]",
    mutates=True,
    params={"by": BY},
    description="Sets object terms.",
)
def set_terms(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    _change(ctx, args, assoc, append=False, verb="Set")


@command(
    "post term remove",
    "<id> <taxonomy> [<term>...] [--by=<field>] [--all]",
    mutates=True,
    params={"by": BY},
    description="Removes a term from an object.",
)
def remove_terms(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    object_id, taxonomy, terms = php_int(args[0]), args[1], args[2:]
    _check_taxonomy(ctx, taxonomy)
    if flag(assoc, "all"):
        if terms:
            ctx.error("No need to specify terms while removing all terms.")
        ids = {term["term_taxonomy_id"] for term in ctx.blog.terms_in(taxonomy)}
        ctx.blog.raw["term_relationships"] = [
            pair for pair in ctx.blog.relationships if not (pair[0] == object_id and pair[1] in ids)
        ]
        message = "Removed all terms."
        if taxonomy == "category":
            default = int(ctx.blog.option_str("default_category") or 1)
            set_object_terms(ctx.blog, object_id, [default], "category", append=True)
            message = "Removed all terms and set default term."
        ctx.out.success(message)
        return
    references = _terms_by(ctx, assoc, terms, taxonomy)
    if not references:
        ctx.error("Please specify one or more terms, or use --all.")
    label = "terms" if len(references) > 1 else "term"
    result = remove_object_terms(ctx.blog, object_id, references, taxonomy)
    if isinstance(result, WPError):
        ctx.error(f"Failed to remove {label}.")
    ctx.out.success(f"Removed {label}.")
