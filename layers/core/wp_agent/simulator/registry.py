"""The command tree: registration, lookup, WP-CLI's "not registered" errors and suggestions.

Error texts reproduce wp-cli/wp-cli `php/WP_CLI/Runner.php::find_command_to_run` and
`Utils\\get_suggestion` (Levenshtein distance at most 2, plus a map of common synonyms).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue
from wp_agent.simulator.synopsis import Param, Synopsis, parse_synopsis

Handler = Callable[[Context, list[str], dict[str, ArgValue]], None]


@dataclass(frozen=True)
class Command:
    path: str
    synopsis: Synopsis
    handler: Handler
    params: Mapping[str, Param]
    mutates: bool
    description: str


@dataclass
class Node:
    """A composite command (`post`, `post meta`) or the root."""

    name: str
    path: str
    description: str = ""
    children: dict[str, Node | Command] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)


_ROOT = Node(name="wp", path="")
_DESCRIPTIONS: dict[str, str] = {}


def describe(path: str, description: str) -> None:
    """Short description of a composite command, shown by `wp help`."""
    _DESCRIPTIONS[path] = description


def command(
    path: str,
    synopsis: str = "",
    *,
    mutates: bool = False,
    params: Mapping[str, Param] | None = None,
    description: str = "",
    aliases: tuple[str, ...] = (),
) -> Callable[[Handler], Handler]:
    """Register a handler under a space-separated command path."""

    def register(handler: Handler) -> Handler:
        words = path.split()
        node = _ROOT
        for depth, word in enumerate(words[:-1]):
            child = node.children.get(word)
            if not isinstance(child, Node):
                child = Node(name=word, path=" ".join(words[: depth + 1]))
                node.children[word] = child
            node = child
        node.children[words[-1]] = Command(
            path=path,
            synopsis=parse_synopsis(synopsis),
            handler=handler,
            params=params or {},
            mutates=mutates,
            description=description,
        )
        for alias in aliases:
            node.aliases[alias] = words[-1]
        return handler

    return register


def root() -> Node:
    _load_commands()
    return _ROOT


def description_of(path: str) -> str:
    return _DESCRIPTIONS.get(path, "")


_loaded = False


def _load_commands() -> None:
    global _loaded  # noqa: PLW0603 - the command table is built once per process
    if _loaded:
        return
    _loaded = True
    from wp_agent.simulator.commands import load_all

    load_all()


@dataclass(frozen=True)
class Resolution:
    target: Node | Command
    args: list[str]


_SYNONYMS = {
    "add": "create",
    "check": "check-update",
    "capability": "cap",
    "clear": "flush",
    "decrement": "decr",
    "del": "delete",
    "directory": "dir",
    "exec": "eval",
    "exec-file": "eval-file",
    "increment": "incr",
    "language": "locale",
    "lang": "locale",
    "new": "create",
    "number": "count",
    "remove": "delete",
    "regen": "regenerate",
    "rep": "replace",
    "repl": "replace",
    "trash": "delete",
    "v": "version",
}

_TAXONOMY_NAMES = frozenset({"category", "post_tag", "nav_menu", "link_category", "post_format"})
_POST_TYPE_NAMES = frozenset({"page", "attachment", "revision", "nav_menu_item"})


def levenshtein(left: str, right: str) -> int:
    previous = list(range(len(right) + 1))
    for i, a in enumerate(left, start=1):
        current = [i]
        for j, b in enumerate(right, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1]


def _enumerate(node: Node, prefix: str = "") -> list[str]:
    names: list[str] = []
    for name in sorted(node.children):
        full = f"{prefix} {name}".strip()
        names.append(full)
        child = node.children[name]
        if isinstance(child, Node):
            names.extend(_enumerate(child, full))
    return names


def suggestion(target: str, options: list[str]) -> str:
    mapped = _SYNONYMS.get(target)
    if mapped is not None and mapped in options:
        return mapped
    best = ""
    best_distance = 3
    for option in options:
        distance = levenshtein(option, target)
        if distance < best_distance:
            best, best_distance = option, distance
    return best if best and best != target else ""


def resolve(words: list[str]) -> Resolution | str:
    """Walk the tree; a string result is WP-CLI's error message for an unknown command."""
    node = root()
    args = list(words)
    path: list[str] = []
    while args:
        name = args[0]
        child = node.children.get(name) or node.children.get(node.aliases.get(name, ""))
        if child is None:
            return _unknown(node, path, name)
        args.pop(0)
        path.append(name)
        if isinstance(child, Command):
            return Resolution(child, args)
        node = child
    return Resolution(node, args)


def _unknown(node: Node, path: list[str], name: str) -> str:
    if path:
        parent = " ".join(path)
        hint = suggestion(name, _enumerate(node))
        message = (
            f"'{name}' is not a registered subcommand of '{parent}'. "
            f"See 'wp help {parent}' for available subcommands."
        )
    else:
        if name in _TAXONOMY_NAMES:
            hint = "wp term <command>"
        elif name in _POST_TYPE_NAMES:
            hint = f"wp post --post_type={name} <command>"
        else:
            hint = suggestion(name, _enumerate(node))
        message = f"'{name}' is not a registered wp command. See 'wp help' for available commands."
    if hint:
        message += f"\nDid you mean '{hint}'?"
    return message


def usage_lines(node: Node) -> list[str]:
    """CompositeCommand::show_usage: one line per subcommand, then a pointer to `wp help`."""
    from wp_agent.simulator.synopsis import usage_line

    lines = []
    for index, name in enumerate(sorted(node.children)):
        prefix = "usage: " if index == 0 else "   or: "
        child = node.children[name]
        if isinstance(child, Command):
            lines.append(usage_line(child.path, child.synopsis, prefix))
        else:
            lines.append(f"{prefix}wp {child.path} <command>")
    lines.append("")
    lines.append(f"See 'wp help {node.path} <command>' for more information on a specific command.")
    return lines
