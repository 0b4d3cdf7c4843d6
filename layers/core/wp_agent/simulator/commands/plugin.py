"""`wp plugin ...` (wp-cli/extension-command src/Plugin_Command.php)."""

from __future__ import annotations

import posixpath

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
from wp_agent.simulator.model import CatalogEntry, PluginRow
from wp_agent.simulator.registry import command, describe
from wp_agent.simulator.synopsis import Param

describe("plugin", "Manages plugins, including installs, activations, and updates.")

FORMAT_DESCRIPTION = "Render output in a particular format."
_MAIN_FILES = {"contact-form-7": "wp-contact-form-7.php", "hello-dolly": "hello.php"}


def plugin_name(file: str) -> str:
    """`Utils\\get_plugin_name`: the folder, or the file name for single-file plugins."""
    folder = posixpath.dirname(file)
    return folder if folder else file.removesuffix(".php")


def _active_plugins(ctx: Context) -> list[str]:
    value = ctx.blog.get_option("active_plugins", [])
    return [str(item) for item in value] if isinstance(value, list) else []


def _status(ctx: Context, plugin: PluginRow) -> str:
    if plugin["file"] in ctx.network.network_active_plugins:
        return "active-network"
    if plugin["file"] in _active_plugins(ctx):
        return "active"
    return "inactive"


def _find(ctx: Context, name: str) -> PluginRow | None:
    """`WP_CLI\\Fetchers\\Plugin::get`."""
    for plugin in ctx.network.plugins:
        file = plugin["file"]
        if (
            f"{name}.php" == file
            or (name and file == name)
            or (posixpath.dirname(file) == name and name != ".")
        ):
            return plugin
    return None


def _find_many(ctx: Context, names: list[str]) -> list[PluginRow]:
    found = []
    for name in names:
        plugin = _find(ctx, name)
        if plugin is None:
            ctx.out.warning(f"The '{name}' plugin could not be found.")
        else:
            found.append(plugin)
    return found


def _extension(ctx: Context, plugin: PluginRow) -> Extension:
    return Extension(
        key=plugin["file"],
        name=plugin_name(plugin["file"]),
        title=plugin["title"],
        status=_status(ctx, plugin),
        version=plugin["version"],
        update_version=plugin["update_version"],
        description=plugin["description"],
        author=plugin["author"],
        extra={
            "file": plugin["file"],
            "author": plugin["author"],
            "tested_up_to": "",
            "wporg_status": "",
            "wporg_last_updated": "",
            "recently_active": plugin["file"] in (ctx.blog.get_option("recently_activated") or {}),
        },
    )


def _all(ctx: Context) -> list[Extension]:
    plugins = sorted(ctx.network.plugins, key=lambda plugin: plugin["title"].casefold())
    return [_extension(ctx, plugin) for plugin in plugins]


def _names_or_all(ctx: Context, args: list[str], assoc: dict[str, ArgValue], verb: str) -> list[str]:
    """ParsePluginNameInput::check_optional_args_and_all."""
    everything = flag(assoc, "all")
    if everything:
        excluded = set(str(assoc.get("exclude", "")).split(","))
        args = [item.name for item in _all(ctx) if item.name not in excluded]
    if not args:
        if not everything:
            ctx.error("Please specify one or more plugins, or use --all.")
        ctx.out.success(f"No plugins {past_tense_verb(verb)}.")
        ctx.out.halt(0)
    return args


def _set_active(ctx: Context, file: str, *, active: bool, network: bool) -> None:
    if network:
        files = ctx.network.network_active_plugins
        if active and file not in files:
            files.append(file)
        if not active and file in files:
            files.remove(file)
        return
    current = [item for item in _active_plugins(ctx) if item != file]
    if active:
        current.append(file)
    ctx.blog.set_option("active_plugins", sorted(current))
    if not active:
        recent = ctx.blog.get_option("recently_activated") or {}
        recent = {file: ctx.clock.timestamp(), **(recent if isinstance(recent, dict) else {})}
        ctx.blog.set_option("recently_activated", recent)


def activate_plugins(
    ctx: Context, names: list[str], *, network: bool, chained: bool, everything: bool = False
) -> None:
    network = network and ctx.multisite
    successes = 0
    plugins = _find_many(ctx, names)
    errors = len(names) - len(plugins)
    for plugin in plugins:
        name = plugin_name(plugin["file"])
        status = _status(ctx, plugin)
        if everything and status in ("active", "active-network"):
            continue
        if status == "active-network":
            ctx.out.warning(f"Plugin '{name}' is already network active.")
            continue
        if not network and status == "active":
            ctx.out.warning(f"Plugin '{name}' is already active.")
            continue
        if network and status == "active":
            _set_active(ctx, plugin["file"], active=False, network=False)
        _set_active(ctx, plugin["file"], active=True, network=network)
        ctx.out.log(f"Plugin '{name}' network activated." if network else f"Plugin '{name}' activated.")
        successes += 1
    if not chained:
        verb = "network activate" if network else "activate"
        report_batch_operation_results(ctx.out, "plugin", verb, len(names), successes, errors)


def deactivate_plugins(
    ctx: Context, names: list[str], *, network: bool, chained: bool, everything: bool = False
) -> None:
    network = network and ctx.multisite
    successes = 0
    plugins = _find_many(ctx, names)
    errors = len(names) - len(plugins)
    for plugin in plugins:
        name = plugin_name(plugin["file"])
        status = _status(ctx, plugin)
        if everything and status not in ("active", "active-network"):
            continue
        if not network and status == "active-network":
            ctx.out.warning(f"Plugin '{name}' is network active and must be deactivated with --network flag.")
            errors += 1
            continue
        if status not in ("active", "active-network"):
            ctx.out.warning(f"Plugin '{name}' isn't active.")
            continue
        _set_active(ctx, plugin["file"], active=False, network=network)
        ctx.out.log(f"Plugin '{name}' network deactivated." if network else f"Plugin '{name}' deactivated.")
        successes += 1
    if not chained:
        verb = "network deactivate" if network else "deactivate"
        report_batch_operation_results(ctx.out, "plugin", verb, len(names), successes, errors)


@command(
    "plugin list",
    "[--<field>=<value>] [--field=<field>] [--fields=<fields>] [--format=<format>] [--status=<status>] "
    "[--skip-update-check] [--recently-active]",
    params={
        "format": Param(FORMAT_DESCRIPTION, ("table", "csv", "count", "json", "yaml"), "table"),
        "status": Param(
            "Filter the output by plugin status.",
            ("active", "active-network", "dropin", "inactive", "must-use"),
        ),
    },
    description="Gets a list of plugins.",
)
def list_plugins(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    items = _all(ctx)
    if flag(assoc, "recently-active"):
        items = [item for item in items if item.extra["recently_active"]]
        assoc.pop("status", None)
    assoc.pop("recently-active", None)
    list_extensions(ctx, items, assoc, "plugin")


@command(
    "plugin get",
    "<plugin> [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": Param(FORMAT_DESCRIPTION, ("table", "csv", "json", "yaml"), "table")},
    description="Gets details about an installed plugin.",
)
def get_plugin(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    plugin = _find(ctx, args[0])
    if plugin is None:
        ctx.error(f"The '{args[0]}' plugin could not be found.")
    data = {
        "name": plugin_name(plugin["file"]),
        "title": plugin["title"],
        "author": plugin["author"],
        "version": plugin["version"],
        "description": plugin["description"],
        "status": _status(ctx, plugin),
        "requires_wp": "",
        "requires_php": "",
        "requires_plugins": "",
    }
    if not assoc.get("fields"):
        assoc["fields"] = "name,title,author,version,description,status"
    Formatter(ctx.out, assoc, None, "plugin").display_item(data)


@command("plugin status", "[<plugin>]", description="Reveals the status of one or all plugins.")
def plugin_status(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    if not args:
        show_status_list(ctx.out, _all(ctx), "plugin")
        return
    plugin = _find(ctx, args[0])
    if plugin is None:
        ctx.error(f"The '{args[0]}' plugin could not be found.")
    show_status_single(ctx.out, _extension(ctx, plugin), "plugin")


@command("plugin is-installed", "<plugin>", description="Checks if a given plugin is installed.")
def is_installed(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    ctx.out.halt(0 if _find(ctx, args[0]) else 1)


@command("plugin is-active", "<plugin> [--network]", description="Checks if a given plugin is active.")
def is_active(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    plugin = _find(ctx, args[0])
    if plugin is None:
        ctx.out.halt(1)
    required = "active-network" if flag(assoc, "network") else "active"
    ctx.out.halt(0 if _status(ctx, plugin) == required else 1)


@command(
    "plugin activate",
    "[<plugin>...] [--all] [--exclude=<name>] [--network]",
    mutates=True,
    description="Activates one or more plugins.",
)
def activate(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    names = _names_or_all(ctx, args, assoc, "activate")
    activate_plugins(ctx, names, network=flag(assoc, "network"), chained=False, everything=flag(assoc, "all"))


@command(
    "plugin deactivate",
    "[<plugin>...] [--uninstall] [--all] [--exclude=<name>] [--network]",
    mutates=True,
    description="Deactivates one or more plugins.",
)
def deactivate(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    names = _names_or_all(ctx, args, assoc, "deactivate")
    deactivate_plugins(
        ctx, names, network=flag(assoc, "network"), chained=False, everything=flag(assoc, "all")
    )
    if flag(assoc, "uninstall"):
        for name in names:
            ctx.out.log(f"Uninstalling '{name}'...")
            _uninstall(ctx, [name], {}, chained=True)


def _add_from_catalog(ctx: Context, entry: CatalogEntry) -> None:
    slug = entry["slug"]
    file = f"{slug}/{_MAIN_FILES.get(slug, slug + '.php')}"
    ctx.network.raw["plugins"] = [p for p in ctx.network.plugins if p["file"] != file]
    ctx.network.plugins.append(
        PluginRow(
            file=file,
            title=entry["name"],
            version=entry["version"],
            author=entry["author"],
            description=entry["description"],
            update_version=None,
            network_only=False,
        )
    )


@command(
    "plugin install",
    "<plugin|zip|url>... [--version=<version>] [--force] [--activate] [--activate-network] [--insecure]",
    mutates=True,
    description="Installs one or more plugins.",
)
def install(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    network = flag(assoc, "activate-network")
    if network:
        assoc["activate"] = True

    def activate_after_install(slug: str) -> None:
        activate_plugins(ctx, [slug], network=network, chained=True)

    installer = Installer(
        kind="plugin",
        is_installed=lambda slug: _find(ctx, slug) is not None,
        add=lambda entry: _add_from_catalog(ctx, entry),
        activate=activate_after_install,
    )
    install_extensions(ctx, args, assoc, installer)


def _delete_files(ctx: Context, plugin: PluginRow) -> None:
    ctx.network.raw["plugins"] = [p for p in ctx.network.plugins if p["file"] != plugin["file"]]
    for blog in ctx.network.blogs():
        active = blog.get_option("active_plugins", [])
        if isinstance(active, list) and plugin["file"] in active:
            blog.set_option("active_plugins", [item for item in active if item != plugin["file"]])
    if plugin["file"] in ctx.network.network_active_plugins:
        ctx.network.network_active_plugins.remove(plugin["file"])


@command(
    "plugin delete",
    "[<plugin>...] [--all] [--exclude=<name>]",
    mutates=True,
    description="Deletes plugin files without deactivating or uninstalling.",
)
def delete(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    names = _names_or_all(ctx, args, assoc, "delete")
    successes = 0
    for plugin in _find_many(ctx, names):
        _delete_files(ctx, plugin)
        ctx.out.log(f"Deleted '{plugin_name(plugin['file'])}' plugin.")
        successes += 1
    report_batch_operation_results(ctx.out, "plugin", "delete", len(names), successes, 0)


def _uninstall(ctx: Context, names: list[str], assoc: dict[str, ArgValue], *, chained: bool) -> None:
    successes = 0
    plugins = _find_many(ctx, names)
    errors = len(names) - len(plugins)
    for plugin in plugins:
        name = plugin_name(plugin["file"])
        if _status(ctx, plugin) != "inactive" and not flag(assoc, "deactivate"):
            ctx.out.warning(f"The '{name}' plugin is active.")
            errors += 1
            continue
        if flag(assoc, "deactivate"):
            ctx.out.log(f"Deactivating '{name}'...")
            deactivate_plugins(ctx, [name], network=False, chained=True)
        if flag(assoc, "skip-delete"):
            ctx.out.log(f"Ran uninstall procedure for '{name}' plugin without deleting.")
        else:
            _delete_files(ctx, plugin)
            ctx.out.log(f"Uninstalled and deleted '{name}' plugin.")
        successes += 1
    if not chained:
        report_batch_operation_results(ctx.out, "plugin", "uninstall", len(names), successes, errors)


@command(
    "plugin uninstall",
    "[<plugin>...] [--deactivate] [--skip-delete] [--all] [--exclude=<name>]",
    mutates=True,
    description="Uninstalls one or more plugins.",
)
def uninstall(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    _uninstall(ctx, _names_or_all(ctx, args, assoc, "uninstall"), assoc, chained=False)


@command(
    "plugin update",
    "[<plugin>...] [--all] [--exclude=<name>] [--minor] [--patch] [--format=<format>] [--version=<version>] "
    "[--dry-run] [--insecure]",
    mutates=True,
    params={"format": Param(FORMAT_DESCRIPTION, ("table", "csv", "json", "summary"), "table")},
    description="Updates one or more plugins.",
    aliases=("upgrade",),
)
def update(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    if not flag(assoc, "all") and not args:
        ctx.error("Please specify one or more plugins, or use --all.")
    _find_many(ctx, args)

    def apply_update(item: Extension) -> None:
        for plugin in ctx.network.plugins:
            if plugin["file"] == item.key and plugin["update_version"]:
                plugin["version"] = plugin["update_version"]
                plugin["update_version"] = None

    update_extensions(ctx, args, assoc, "plugin", _all(ctx), apply_update)


@command(
    "plugin search",
    "<search> [--page=<page>] [--per-page=<per-page>] [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": Param(FORMAT_DESCRIPTION, ("table", "csv", "count", "json", "yaml"), "table")},
    description="Searches the WordPress.org plugin directory.",
)
def search(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    search_catalog(ctx, args, assoc, "plugin")
