"""`wp theme ...` (wp-cli/extension-command src/Theme_Command.php, src/WP_CLI/Fetchers/Theme.php)."""

from __future__ import annotations

from typing import Any

from wp_agent.simulator.commands.batch import past_tense_verb, report_batch_operation_results
from wp_agent.simulator.commands.extension import (
    Extension,
    Installer,
    install_extensions,
    list_extensions,
    search_catalog,
    show_status_list,
    show_status_single,
    update_extensions,
)
from wp_agent.simulator.commands.input import flag
from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue, Formatter
from wp_agent.simulator.model import CatalogEntry, ThemeRow
from wp_agent.simulator.registry import command, describe, suggestion
from wp_agent.simulator.synopsis import Param

describe("theme", "Manages themes, including installs, activations, and updates.")

FORMAT_DESCRIPTION = "Render output in a particular format."
GET_FIELDS = (
    "name",
    "title",
    "version",
    "status",
    "parent_theme",
    "template_dir",
    "stylesheet_dir",
    "template",
    "stylesheet",
    "screenshot",
    "description",
    "author",
    "tags",
    "theme_root",
    "theme_root_uri",
)


def status_of(ctx: Context, theme: ThemeRow) -> str:
    if theme["stylesheet"] == ctx.blog.option_str("stylesheet"):
        return "active"
    if theme["stylesheet"] == ctx.blog.option_str("template"):
        return "parent"
    return "inactive"


def _not_found_message(ctx: Context, name: str) -> str:
    """Fetchers\\Theme: case-insensitive or Levenshtein suggestion appended to the message."""
    message = f"The '{name}' theme could not be found."
    lowered = [theme["stylesheet"].lower() for theme in ctx.network.themes]
    hint = name.lower() if name.lower() in lowered else suggestion(name.lower(), lowered)
    if hint:
        message += f" Did you mean '{hint}'?"
    return message


def theme_or_error(ctx: Context, name: str) -> ThemeRow:
    theme = ctx.network.theme(name)
    if theme is None:
        ctx.error(_not_found_message(ctx, name))
    return theme


def _extension(ctx: Context, theme: ThemeRow) -> Extension:
    return Extension(
        key=theme["stylesheet"],
        name=theme["stylesheet"],
        title=theme["name"],
        status=status_of(ctx, theme),
        version=theme["version"],
        update_version=theme["update_version"],
        description=theme["description"],
        author=theme["author"],
        extra={"author": theme["author"]},
    )


def _all(ctx: Context) -> list[Extension]:
    return [_extension(ctx, theme) for theme in sorted(ctx.network.themes, key=lambda t: t["stylesheet"])]


def _names_or_all(ctx: Context, args: list[str], assoc: dict[str, ArgValue], verb: str) -> list[str]:
    if flag(assoc, "all"):
        args = [theme["stylesheet"] for theme in ctx.network.themes]
    if not args:
        if not flag(assoc, "all"):
            ctx.error("Please specify one or more themes, or use --all.")
        ctx.out.success(f"No themes {past_tense_verb(verb)}.")
        ctx.out.halt(0)
    return args


def switch_theme(ctx: Context, name: str) -> None:
    theme = theme_or_error(ctx, name)
    title = theme["name"]
    if status_of(ctx, theme) == "active":
        ctx.out.warning(f"The '{title}' theme is already active.")
        return
    if theme["template"] != theme["stylesheet"] and ctx.network.theme(theme["template"]) is None:
        ctx.error(
            f"The '{theme['stylesheet']}' theme cannot be activated without its parent, '{theme['template']}'."
        )
    ctx.blog.set_option("template", theme["template"])
    ctx.blog.set_option("stylesheet", theme["stylesheet"])
    ctx.out.success(f"Switched to '{title}' theme.")


@command(
    "theme list",
    "[--<field>=<value>] [--field=<field>] [--fields=<fields>] [--format=<format>] [--status=<status>] "
    "[--skip-update-check]",
    params={
        "format": Param(FORMAT_DESCRIPTION, ("table", "csv", "json", "count", "yaml"), "table"),
        "status": Param("Filter the output by theme status.", ("active", "parent", "inactive")),
    },
    description="Gets a list of themes.",
)
def list_themes(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    list_extensions(ctx, _all(ctx), assoc, "theme")


@command(
    "theme get",
    "<theme> [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": Param(FORMAT_DESCRIPTION, ("table", "csv", "json", "yaml"), "table")},
    description="Gets details about a theme.",
)
def get_theme(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    theme = theme_or_error(ctx, args[0])
    root = f"{ctx.wp_path.rstrip('/')}/wp-content/themes"
    parent = ctx.network.theme(theme["template"]) if theme["template"] != theme["stylesheet"] else None
    data: dict[str, Any] = {
        "name": theme["name"],
        "title": theme["name"],
        "version": theme["version"],
        "status": status_of(ctx, theme),
        "parent_theme": parent["name"] if parent else "",
        "template_dir": f"{root}/{theme['template']}",
        "stylesheet_dir": f"{root}/{theme['stylesheet']}",
        "template": theme["template"],
        "stylesheet": theme["stylesheet"],
        "screenshot": "screenshot.png",
        "description": theme["description"],
        "author": theme["author"],
        "tags": theme["tags"],
        "theme_root": root,
        "theme_root_uri": f"{ctx.blog.site_url}/wp-content/themes",
    }
    if not assoc.get("fields"):
        assoc["fields"] = ",".join(GET_FIELDS)
    Formatter(ctx.out, assoc, None, "theme").display_item(data)


@command("theme status", "[<theme>]", description="Reveals the status of one or all themes.")
def theme_status(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    if not args:
        show_status_list(ctx.out, _all(ctx), "theme")
        return
    show_status_single(ctx.out, _extension(ctx, theme_or_error(ctx, args[0])), "theme")


@command("theme is-installed", "<theme>", description="Checks if a given theme is installed.")
def is_installed(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    ctx.out.halt(0 if ctx.network.theme(args[0]) else 1)


@command("theme is-active", "<theme>", description="Checks if a given theme is active.")
def is_active(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    theme = ctx.network.theme(args[0])
    ctx.out.halt(0 if theme is not None and status_of(ctx, theme) in ("active", "parent") else 1)


@command("theme activate", "<theme>", mutates=True, description="Activates a theme.")
def activate(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    switch_theme(ctx, args[0])


def _add_from_catalog(ctx: Context, entry: CatalogEntry) -> None:
    ctx.network.raw["themes"] = [t for t in ctx.network.themes if t["stylesheet"] != entry["slug"]]
    ctx.network.themes.append(
        ThemeRow(
            stylesheet=entry["slug"],
            template=entry["slug"],
            name=entry["name"],
            version=entry["version"],
            author=entry["author"],
            description=entry["description"],
            tags=["blog"],
            update_version=None,
            menu_locations={"primary": "Primary Menu"},
        )
    )


@command(
    "theme install",
    "<theme|zip|url>... [--version=<version>] [--force] [--activate] [--insecure]",
    mutates=True,
    description="Installs one or more themes.",
)
def install(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    if len(args) > 1 and flag(assoc, "activate"):
        ctx.out.warning(f"Only this single theme will be activated: {args[-1]}")
    installer = Installer(
        kind="theme",
        is_installed=lambda slug: ctx.network.theme(slug) is not None,
        add=lambda entry: _add_from_catalog(ctx, entry),
        activate=lambda slug: switch_theme(ctx, slug),
    )
    install_extensions(ctx, args, assoc, installer)


@command(
    "theme delete",
    "[<theme>...] [--all] [--force]",
    mutates=True,
    description="Deletes one or more themes.",
    aliases=("uninstall",),
)
def delete(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    everything = flag(assoc, "all")
    names = _names_or_all(ctx, args, assoc, "delete")
    force = flag(assoc, "force")
    successes = errors = 0
    for name in names:
        theme = ctx.network.theme(name)
        if theme is None:
            ctx.out.warning(_not_found_message(ctx, name))
            continue
        status = status_of(ctx, theme)
        if status == "active" and not force:
            if not everything:
                ctx.out.warning(f"Can't delete the currently active theme: {name}")
                errors += 1
            continue
        if status == "parent" and not force:
            if not everything:
                ctx.out.warning(f"Can't delete the parent of the currently active theme: {name}")
                errors += 1
            continue
        ctx.network.raw["themes"] = [t for t in ctx.network.themes if t["stylesheet"] != name]
        ctx.out.log(f"Deleted '{name}' theme.")
        successes += 1
    report_batch_operation_results(ctx.out, "theme", "delete", len(names), successes, errors)


@command(
    "theme update",
    "[<theme>...] [--all] [--exclude=<theme-names>] [--minor] [--patch] [--format=<format>] "
    "[--version=<version>] [--dry-run] [--insecure]",
    mutates=True,
    params={"format": Param(FORMAT_DESCRIPTION, ("table", "csv", "json", "summary"), "table")},
    description="Updates one or more themes.",
    aliases=("upgrade",),
)
def update(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    if not flag(assoc, "all") and not args:
        ctx.error("Please specify one or more themes, or use --all.")
    for name in args:
        theme_or_error(ctx, name)

    def apply_update(item: Extension) -> None:
        theme = ctx.network.theme(item.key)
        if theme is not None and theme["update_version"]:
            theme["version"] = theme["update_version"]
            theme["update_version"] = None

    update_extensions(ctx, args, assoc, "theme", _all(ctx), apply_update)


@command(
    "theme search",
    "<search> [--page=<page>] [--per-page=<per-page>] [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": Param(FORMAT_DESCRIPTION, ("table", "csv", "json", "count", "yaml"), "table")},
    description="Searches the WordPress.org theme directory.",
)
def search(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    search_catalog(ctx, args, assoc, "theme")
