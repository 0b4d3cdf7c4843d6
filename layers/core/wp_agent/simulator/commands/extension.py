"""What `wp plugin` and `wp theme` share (wp-cli/extension-command src/WP_CLI/CommandWithUpgrade.php):
listing with filters, `status`, installing from the wordpress.org directory (here a catalogue in the
site file, never the network), updating and searching.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from wp_agent.simulator.commands.batch import report_batch_operation_results
from wp_agent.simulator.commands.input import flag, text
from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue, Formatter
from wp_agent.simulator.model import CatalogEntry
from wp_agent.simulator.output import Output

LIST_FIELDS = ("name", "status", "update", "version", "update_version", "auto_update")
SHORT_STATUS = {
    "inactive": "I",
    "active": "A",
    "active-network": "N",
    "must-use": "M",
    "parent": "P",
    "dropin": "D",
}
LONG_STATUS = {
    "inactive": "Inactive",
    "active": "Active",
    "active-network": "Network Active",
    "must-use": "Must Use",
    "parent": "Parent",
    "dropin": "Drop-In",
}


@dataclass(frozen=True)
class Extension:
    """One installed plugin or theme as the list/status/update code sees it."""

    key: str
    name: str
    title: str
    status: str
    version: str
    update_version: str | None
    description: str
    author: str
    extra: dict[str, Any]

    def list_item(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            "name": self.name,
            "status": self.status,
            "update": "available" if self.update_version else "none",
            "version": self.version,
            "update_version": self.update_version or "",
            "auto_update": "off",
            "update_package": "",
            "update_id": self.key,
            "title": self.title,
            "description": self.description,
        }
        item.update(self.extra)
        return item


def list_extensions(ctx: Context, items: Sequence[Extension], assoc: dict[str, ArgValue], kind: str) -> None:
    """CommandWithUpgrade::_list: every obj_field may filter (a value or a comma list)."""
    rows = [item.list_item() for item in items]
    for field in LIST_FIELDS:
        wanted = assoc.get(field)
        if not isinstance(wanted, str):
            continue
        options = [value.strip() for value in wanted.split(",")]
        rows = [row for row in rows if row[field] == wanted or row[field] in options]
        del assoc[field]
    assoc.pop("skip-update-check", None)
    Formatter(ctx.out, assoc, LIST_FIELDS, kind).display_items(rows)


def show_status_list(out: Output, items: Sequence[Extension], kind: str) -> None:
    noun = kind if len(items) == 1 else f"{kind}s"
    out.log(f"{len(items)} installed {noun}:")
    padding = max((len(item.name) for item in items), default=0)
    for item in items:
        line = " U" if item.update_version else "  "
        line += SHORT_STATUS[item.status] + " " + item.name.ljust(padding)
        if item.version:
            line += " " + item.version
        out.line(line)
    out.line()
    legend = [
        f"{SHORT_STATUS[status]} = {LONG_STATUS[status]}" for status in dict.fromkeys(i.status for i in items)
    ]
    if any(item.update_version for item in items):
        legend.append("U = Update Available")
    out.line("Legend: " + ", ".join(legend))


def show_status_single(out: Output, item: Extension, kind: str) -> None:
    version = item.version + (" (Update available)" if item.update_version else "")
    out.write(
        f"{kind.capitalize()} {item.name} details:\n"
        f"    Name: {item.title}\n"
        f"    Status: {LONG_STATUS[item.status]}\n"
        f"    Version: {version}\n"
        f"    Author: {item.author}\n"
        + (f"    Description: {item.description}\n" if kind == "plugin" else "")
    )


def catalog_entry(ctx: Context, kind: str, slug: str) -> CatalogEntry | None:
    for entry in ctx.network.catalog(f"{kind}s"):
        if entry["slug"] == slug:
            return entry
    return None


def download_link(kind: str, entry: CatalogEntry) -> str:
    return f"https://downloads.wordpress.org/{kind}/{entry['slug']}.{entry['version']}.zip"


@dataclass(frozen=True)
class Installer:
    """Kind-specific steps of CommandWithUpgrade::install."""

    kind: str
    is_installed: Callable[[str], bool]
    add: Callable[[CatalogEntry], None]
    activate: Callable[[str], None]


def install_extensions(
    ctx: Context, args: list[str], assoc: dict[str, ArgValue], installer: Installer
) -> None:
    kind = installer.kind
    successes = errors = 0
    for slug in args:
        if not slug:
            ctx.out.warning("Ignoring ambiguous empty slug value.")
            continue
        allow_activation = False
        if "://" in slug or slug.endswith(".zip"):
            if "://" in slug:
                ctx.out.log(f"Downloading install package from {slug}...")
                ctx.out.warning(
                    "Download failed. Could not resolve host: " + slug.split("://", 1)[1].split("/")[0]
                )
            else:
                ctx.out.warning(f"The package could not be installed. No valid {kind}s were found.")
            errors += 1
            continue
        entry = catalog_entry(ctx, kind, slug)
        if entry is None:
            message = "Plugin not found." if kind == "plugin" else "Theme not found"
            ctx.out.warning(f"{slug}: {message}")
            errors += 1
            continue
        already = installer.is_installed(slug)
        if already and not flag(assoc, "force"):
            ctx.out.warning(f"{slug}: {kind.capitalize()} already installed.")
            allow_activation = True
        else:
            ctx.out.log(f"Installing {entry['name']} ({entry['version']})")
            ctx.out.log(f"Downloading install package from {download_link(kind, entry)}...")
            ctx.out.log("Unpacking the package...")
            ctx.out.log(f"Installing the {kind}...")
            if already:
                ctx.out.log(f"Removing the old version of the {kind}...")
                ctx.out.log(f"{kind.capitalize()} updated successfully.")
            else:
                ctx.out.log(f"{kind.capitalize()} installed successfully.")
            installer.add(entry)
            successes += 1
            allow_activation = True
        if allow_activation and flag(assoc, "activate"):
            ctx.out.log(f"Activating '{slug}'...")
            installer.activate(slug)
    report_batch_operation_results(ctx.out, kind, "install", len(args), successes, errors)


def search_catalog(ctx: Context, args: list[str], assoc: dict[str, ArgValue], kind: str) -> None:
    needle = args[0].casefold()
    plural = f"{kind}s"
    entries = [
        entry
        for entry in ctx.network.catalog(plural)
        if needle in entry["slug"].casefold()
        or needle in entry["name"].casefold()
        or needle in entry["description"].casefold()
    ]
    per_page = int(text(assoc, "per-page", "10")) if text(assoc, "per-page", "10").isdigit() else 10
    page = int(text(assoc, "page", "1")) if text(assoc, "page", "1").isdigit() else 1
    shown = entries[(page - 1) * per_page : page * per_page]
    items = [dict(entry, url=f"https://wordpress.org/{plural}/{entry['slug']}/") for entry in shown]
    fields = text(assoc, "fields", "name,slug,rating")
    assoc["fields"] = fields
    for key in ("per-page", "page"):
        assoc.pop(key, None)
    if text(assoc, "format", "table") == "table":
        ctx.out.success(f"Showing {len(items)} of {len(entries)} {plural}.")
    Formatter(ctx.out, assoc, None, kind).display_items(items)


def _upgrade_messages(out: Output, kind: str, name: str, version: str) -> None:
    out.log(f"Downloading update from https://downloads.wordpress.org/{kind}/{name}.{version}.zip...")
    out.log("Unpacking the update...")
    out.log("Installing the latest version...")
    out.log(f"Removing the old version of the {kind}...")
    out.log(f"{kind.capitalize()} updated successfully.")


def update_extensions(
    ctx: Context,
    args: list[str],
    assoc: dict[str, ArgValue],
    kind: str,
    items: Sequence[Extension],
    apply_update: Callable[[Extension], None],
) -> None:
    """CommandWithUpgrade::update_many."""
    out = ctx.out
    output_format = text(assoc, "format", "table")
    if output_format in ("json", "csv"):
        out.quiet = True
    everything = flag(assoc, "all")
    if not everything and not args:
        out.error(f"Please specify one or more {kind}s, or use --all.")
    if flag(assoc, "minor") and flag(assoc, "patch"):
        out.error("--minor and --patch cannot be used together.")
    errors = 0
    selected = list(items)
    if not everything:
        selected = [item for item in items if item.name in args]
        errors = len(args) - len(selected)
    to_update = [item for item in selected if item.update_version]
    excluded = text(assoc, "exclude")
    if excluded:
        skip = set(excluded.strip(",").split(","))
        to_update = [item for item in to_update if item.name not in skip]
    if flag(assoc, "dry-run"):
        if not to_update:
            out.log(f"No {kind} updates available.")
        else:
            rows = [
                {"name": i.name, "status": i.status, "version": i.version, "update_version": i.update_version}
                for i in to_update
            ]
            if output_format in ("json", "csv"):
                Formatter(
                    out, {"format": output_format}, ("name", "status", "version", "update_version")
                ).display_items(rows)
            else:
                out.log(f"Available {kind} updates:")
                Formatter(
                    out, {"format": "table"}, ("name", "status", "version", "update_version")
                ).display_items(rows)
        if excluded:
            out.log(f"Skipped updates for: {excluded}")
        return
    results = []
    if to_update:
        out.log("Enabling Maintenance mode...")
        for item in to_update:
            _upgrade_messages(out, kind, item.name, str(item.update_version))
            apply_update(item)
            results.append(
                {
                    "name": item.name,
                    "old_version": item.version,
                    "new_version": item.update_version,
                    "status": "Updated",
                }
            )
        out.log("Disabling Maintenance mode...")
        table_format = output_format if output_format in ("json", "csv") else "table"
        Formatter(
            out, {"format": table_format}, ("name", "old_version", "new_version", "status")
        ).display_items(results)
    total = len(to_update) if everything else len(args)
    report_batch_operation_results(out, kind, "update", total, len(results), errors, 0)
    if excluded:
        out.log(f"Skipped updates for: {excluded}")
