"""Reading command values: `WP_CLI::get_value_from_arg_or_stdin` and `WP_CLI::read_value`."""

from __future__ import annotations

import json
from typing import Any

from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue


def value_from_arg_or_stdin(ctx: Context, args: list[str], index: int) -> str:
    if index < len(args):
        return args[index]
    return ctx.read_stdin()


def read_value(ctx: Context, raw: str, assoc: dict[str, ArgValue]) -> Any:
    if assoc.get("format") == "json":
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if value is None:
            ctx.error(f"Invalid JSON: {raw}")
        return value
    return raw


def flag(assoc: dict[str, ArgValue], key: str) -> bool:
    """`Utils\\get_flag_value` for boolean switches."""
    value = assoc.get(key)
    return value not in (None, False, "", "0", "false")


def text(assoc: dict[str, ArgValue], key: str, default: str = "") -> str:
    value = assoc.get(key)
    if value is None or isinstance(value, bool):
        return default
    return value
