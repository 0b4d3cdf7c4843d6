"""`wp core version` (wp-cli/core-command)."""

from __future__ import annotations

from wp_agent.simulator.commands.input import flag
from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue
from wp_agent.simulator.registry import command, describe

describe("core", "Downloads, installs, updates, and manages a WordPress installation.")


@command("core version", "[--extra]", description="Displays the WordPress version.")
def version(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    number = ctx.network.core_version
    if not flag(assoc, "extra"):
        ctx.out.line(number)
        return
    ctx.out.line(f"WordPress version: {number}")
    ctx.out.line(f"Database revision: {ctx.blog.option_str('db_version')}")
    ctx.out.line("TinyMCE version:   4.9110 (49110-20201110)")
    ctx.out.line(f"Package language:  {ctx.blog.option_str('WPLANG') or 'en_US'}")
