"""`wp help [<command>]`: a short version of WP-CLI's help screens."""

from __future__ import annotations

from wp_agent.simulator.output import Output
from wp_agent.simulator.registry import Command, Node, description_of, resolve, root
from wp_agent.simulator.synopsis import usage_line


def _listing(out: Output, node: Node) -> None:
    width = max((len(name) for name in node.children), default=0)
    for name in sorted(node.children):
        child = node.children[name]
        summary = child.description if isinstance(child, Command) else description_of(child.path)
        out.line(f"  {name.ljust(width)}  {summary}".rstrip())


def show_help(out: Output, words: list[str]) -> None:
    if not words:
        out.line("NAME")
        out.line("")
        out.line("  wp")
        out.line("")
        out.line("DESCRIPTION")
        out.line("")
        out.line("  Manage WordPress through the command-line.")
        out.line("")
        out.line("SYNOPSIS")
        out.line("")
        out.line("  wp <command>")
        out.line("")
        out.line("SUBCOMMANDS")
        out.line("")
        _listing(out, root())
        return
    resolution = resolve(words)
    if isinstance(resolution, str):
        out.error(resolution)
    target = resolution.target
    path = target.path
    out.line("NAME")
    out.line("")
    out.line(f"  wp {path}")
    out.line("")
    out.line("DESCRIPTION")
    out.line("")
    out.line(f"  {target.description if isinstance(target, Command) else description_of(path)}")
    out.line("")
    out.line("SYNOPSIS")
    out.line("")
    if isinstance(target, Command):
        out.line("  " + usage_line(path, target.synopsis, prefix=""))
        return
    out.line(f"  wp {path} <command>")
    out.line("")
    out.line("SUBCOMMANDS")
    out.line("")
    _listing(out, target)
