"""Which site a command works on, decided before the settings are built. In this order:

1. `--site NAME`, else `WP_AGENT_SITE=NAME` — a named site (`wp-agent sites add`);
2. for approve / reject / undo: the place the held or undone run ran on (the environment when it
   points there, else the named site that does), so nothing has to be repeated;
3. the environment's own variables (WP_CLI_MODE, VPS_*, WP_LOCAL_PATH, …), as before named sites;
4. the default site (`wp-agent sites default NAME`);
5. the sandbox.

When a lower choice is also there, one Japanese line on stderr says which won and what was not used.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from wp_agent.cli import failures, site_book
from wp_agent.cli.site_book import NamedSite
from wp_agent.config import CliSettings, LocalAgentSettings

SITE_VARIABLE = "WP_AGENT_SITE"

# What a command remembers of where its run ran (approve: the held run; undo: the run undone).
RememberedTarget = Callable[[argparse.Namespace, LocalAgentSettings], str | None]


@dataclass(frozen=True)
class SiteChoice:
    settings: LocalAgentSettings
    site: NamedSite | None = None
    source: str = "environment"  # --site | WP_AGENT_SITE | remembered | environment | default
    notice: str | None = None


def add_site_option(parser: argparse.ArgumentParser, *, remembered: RememberedTarget | None = None) -> None:
    """`--site NAME` on a command that works on a site."""
    help_text = (
        "登録済みのサイト名（wp-agent sites add）で実行します。既定: 環境変数の設定、なければ既定のサイト"
    )
    if remembered is not None:
        help_text = "登録済みのサイト名。既定: その処理を実行したサイト"
    parser.add_argument("--site", metavar="NAME", help=help_text)
    parser.set_defaults(site_aware=True, remembered_target=remembered)


def choose(
    args: argparse.Namespace,
    settings_class: type[LocalAgentSettings] = CliSettings,
    environ: Mapping[str, str] | None = None,
) -> SiteChoice:
    """The site a command works on and its settings (of the command's own settings class)."""
    environ = os.environ if environ is None else environ
    settings = settings_class()
    if not getattr(args, "site_aware", False):
        return SiteChoice(settings)
    present = {name.upper() for name, value in environ.items() if value}
    from_environment = [name for name in site_book.CONNECTION_VARIABLES if name in present]
    book = site_book.load()
    named = getattr(args, "site", None)
    if named:
        return _named(book, named, "--site", from_environment, settings_class)
    if environ.get(SITE_VARIABLE):
        return _named(book, environ[SITE_VARIABLE], SITE_VARIABLE, from_environment, settings_class)
    remember: RememberedTarget | None = getattr(args, "remembered_target", None)
    target = remember(args, settings) if remember is not None else None
    if target is not None and site_book.target_of(settings) != target:
        site = site_book.site_for_target(book, target)
        if site is not None:
            notice = None
            if from_environment:
                notice = (
                    f"この処理を実行したサイト「{site.name}」で続けます"
                    f"（{_variables(from_environment)}接続設定は使いません）。"
                )
            return _site_choice(site, "remembered", notice, settings_class)
    if from_environment or target is not None:
        notice = None
        if book.default and from_environment:
            notice = (
                f"{_variables(from_environment)}接続設定を使います（既定のサイト「{book.default}」は"
                f"使いません。使うときは --site {book.default}）。"
            )
        return SiteChoice(settings, notice=notice)
    if book.default and book.default in book.sites:
        return _site_choice(book.sites[book.default], "default", None, settings_class)
    return SiteChoice(settings)


def _named(
    book: site_book.SiteBook,
    name: str,
    source: str,
    from_environment: list[str],
    settings_class: type[LocalAgentSettings],
) -> SiteChoice:
    site = book.sites.get(name)
    if site is None:
        message = (
            f"サイト「{name}」は登録されていません。登録済み: {book.names()}"
            "（一覧は wp-agent sites list、登録は wp-agent sites add）。"
        )
        if source == SITE_VARIABLE:
            raise failures.configuration("SITE_NOT_REGISTERED", f"{SITE_VARIABLE} の{message}")
        raise failures.usage("SITE_NOT_REGISTERED", message)
    notice = None
    if from_environment:
        notice = (
            f"{source} で指定したサイト「{name}」を使います（{_variables(from_environment)}"
            "接続設定は使いません）。"
        )
    return _site_choice(site, source, notice, settings_class)


def _site_choice(
    site: NamedSite, source: str, notice: str | None, settings_class: type[LocalAgentSettings]
) -> SiteChoice:
    return SiteChoice(site_book.settings_with(settings_class, site.environment()), site, source, notice)


def _variables(names: list[str]) -> str:
    """`環境変数 A、B、C の` (more than three: `環境変数 A、B、C ほか2つの`)."""
    shown = "、".join(names[:3])
    return f"環境変数 {shown} ほか{len(names) - 3}つの" if len(names) > 3 else f"環境変数 {shown} の"
