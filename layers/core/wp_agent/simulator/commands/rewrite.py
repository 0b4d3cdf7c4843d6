"""`wp rewrite flush|list` (wp-cli/rewrite-command src/Rewrite_Command.php)."""

from __future__ import annotations

from wp_agent.simulator.commands.input import text
from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue, Formatter
from wp_agent.simulator.registry import command, describe
from wp_agent.simulator.synopsis import Param

describe("rewrite", "Lists or flushes the site's rewrite rules, updates the permalink structure.")

_POST_RULES = (
    ("[^/]+/attachment/([^/]+)/?$", "index.php?attachment=$matches[1]", "post"),
    ("([^/]+)/trackback/?$", "index.php?name=$matches[1]&tb=1", "post"),
    ("([^/]+)/page/?([0-9]{1,})/?$", "index.php?name=$matches[1]&paged=$matches[2]", "post"),
    ("([^/]+)/comment-page-([0-9]{1,})/?$", "index.php?name=$matches[1]&cpage=$matches[2]", "post"),
    ("([^/]+)(?:/([0-9]+))?/?$", "index.php?name=$matches[1]&page=$matches[2]", "post"),
)
_FIXED_RULES = (
    ("^wp-json/?$", "index.php?rest_route=/", "other"),
    ("^wp-json/(.*)?", "index.php?rest_route=/$matches[1]", "other"),
    ("category/(.+?)/?$", "index.php?category_name=$matches[1]", "category"),
    ("tag/([^/]+)/?$", "index.php?tag=$matches[1]", "post_tag"),
    ("feed/(feed|rdf|rss|rss2|atom)/?$", "index.php?&feed=$matches[1]", "root"),
    ("page/?([0-9]{1,})/?$", "index.php?&paged=$matches[1]", "root"),
    ("search/(.+)/?$", "index.php?s=$matches[1]", "search"),
    ("author/([^/]+)/?$", "index.php?author_name=$matches[1]", "author"),
    (
        "([0-9]{4})/([0-9]{1,2})/([0-9]{1,2})/?$",
        "index.php?year=$matches[1]&monthnum=$matches[2]&day=$matches[3]",
        "date",
    ),
    ("([0-9]{4})/?$", "index.php?year=$matches[1]", "date"),
    ("(.?.+?)(?:/([0-9]+))?/?$", "index.php?pagename=$matches[1]&page=$matches[2]", "page"),
)


@command("rewrite flush", "[--hard]", description="Flushes rewrite rules.")
def flush(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    if not ctx.blog.option_str("permalink_structure"):
        ctx.out.warning(
            "Rewrite rules are empty, possibly because of a missing permalink_structure option. "
            "Use 'wp rewrite list' to verify, or 'wp rewrite structure' to update permalink_structure."
        )
        return
    ctx.out.success("Rewrite rules flushed.")


@command(
    "rewrite list",
    "[--match=<url>] [--source=<source>] [--fields=<fields>] [--format=<format>]",
    params={
        "format": Param(
            "Render output in a particular format.", ("table", "csv", "json", "count", "yaml"), "table"
        )
    },
    description="Gets a list of the current rewrite rules.",
)
def list_rules(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    rules = (
        []
        if not ctx.blog.option_str("permalink_structure")
        else [*_FIXED_RULES[:-1], *_POST_RULES, _FIXED_RULES[-1]]
    )
    rows = [{"match": match, "query": query, "source": source} for match, query, source in rules]
    source = text(assoc, "source")
    if source:
        rows = [row for row in rows if row["source"] == source]
    assoc.pop("source", None)
    assoc.pop("match", None)
    Formatter(ctx.out, assoc, ("match", "query", "source")).display_items(rows)
