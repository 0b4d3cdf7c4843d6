"""`wp cache flush` (wp-cli/cache-command src/Cache_Command.php)."""

from __future__ import annotations

from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue
from wp_agent.simulator.registry import command, describe

describe("cache", "Adds, removes, fetches, and flushes the WP Object Cache object.")


@command("cache flush", "", description="Flushes the object cache.")
def flush(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    ctx.out.success("The cache was flushed.")


@command("cache type", "", description="Attempts to determine which object cache is being used.")
def cache_type(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    ctx.out.line("Default")
