"""Command synopses (`<id>... [--force]`) and WP-CLI's validation of arguments against them.

Reproduces wp-cli/wp-cli `php/WP_CLI/Dispatcher/Subcommand.php::validate_args` and
`SynopsisValidator`: too few positionals print the usage line and exit 1; too many give
"Too many positional arguments: ..."; bad option values, missing required `--x=<v>` and
unknown `--x` (when the command takes no `[--<field>=<value>]`) give
"Parameter errors:\\n <problem> (<description>)".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from wp_agent.simulator.formatting import ArgValue
from wp_agent.simulator.output import Output


@dataclass(frozen=True)
class Param:
    """Docblock facts about one argument: allowed values, default and description."""

    description: str = ""
    options: tuple[str, ...] = ()
    default: str | None = None


@dataclass(frozen=True)
class Positional:
    name: str
    optional: bool
    repeating: bool


@dataclass(frozen=True)
class Assoc:
    name: str
    optional: bool
    value_optional: bool
    is_flag: bool


@dataclass(frozen=True)
class Synopsis:
    text: str
    positionals: tuple[Positional, ...] = ()
    assoc: Mapping[str, Assoc] = field(default_factory=dict)
    generic: bool = False


_TOKEN = re.compile(
    r"^(?P<open>\[)?"
    r"(?:<(?P<pos>[\w|-]+)>(?P<rep>\.\.\.)?"
    r"|--(?P<generic><field>=<value>)"
    r"|--(?P<name>[\w-]+)(?P<valopt>\[)?(?:=<[\w|-]+>)?\]?)"
    r"(?P<close>\])?$"
)


def parse_synopsis(text: str) -> Synopsis:
    positionals: list[Positional] = []
    assoc: dict[str, Assoc] = {}
    generic = False
    for token in text.split():
        match = _TOKEN.match(token)
        if not match:
            continue
        optional = match.group("open") is not None
        if match.group("pos"):
            positionals.append(Positional(match.group("pos"), optional, match.group("rep") is not None))
        elif match.group("generic"):
            generic = True
        elif match.group("name"):
            is_flag = "=" not in token
            assoc[match.group("name")] = Assoc(
                name=match.group("name"),
                optional=optional,
                value_optional=match.group("valopt") is not None,
                is_flag=is_flag,
            )
    return Synopsis(text=text, positionals=tuple(positionals), assoc=assoc, generic=generic)


# Accepted on every command here, although WP-CLI only declares it where it prompts.
_ALWAYS_ACCEPTED = frozenset({"yes"})


def validate(
    out: Output,
    command_path: str,
    synopsis: Synopsis,
    params: Mapping[str, Param],
    args: list[str],
    assoc: dict[str, ArgValue],
) -> None:
    """Validate and default `assoc` in place; print usage or errors like WP-CLI."""
    required = [spec for spec in synopsis.positionals if not spec.optional]
    if len(args) < len(required):
        out.line(usage_line(command_path, synopsis))
        out.halt(1)
    if not any(spec.repeating for spec in synopsis.positionals) and len(args) > len(synopsis.positionals):
        extra = args[len(synopsis.positionals) :]
        out.error("Too many positional arguments: " + " ".join(extra))

    fatal: dict[str, str] = {}
    warnings: list[str] = []
    for name, spec in synopsis.assoc.items():
        info = params.get(name, Param())
        if name not in assoc and info.default is not None:
            assoc[name] = info.default
        value = assoc.get(name)
        if value is None:
            if not spec.optional:
                fatal[name] = f"missing --{name} parameter"
            continue
        if value is True and not spec.is_flag and not spec.value_optional:
            problem = f"--{name} parameter needs a value"
            if spec.optional:
                warnings.append(problem)
            else:
                fatal[name] = problem
            del assoc[name]
            continue
        if info.options and isinstance(value, str) and value not in info.options:
            fatal[name] = f"Invalid value specified for '{name}'"
    if not synopsis.generic:
        for name in assoc:
            if name not in synopsis.assoc and name not in _ALWAYS_ACCEPTED:
                fatal[name] = f"unknown --{name} parameter"
    if fatal:
        message = "Parameter errors:"
        for name, problem in fatal.items():
            message += f"\n {problem}"
            description = params.get(name, Param()).description
            if description:
                message += f" ({description})"
        out.error(message)
    for problem in warnings:
        out.warning(problem)


def usage_line(command_path: str, synopsis: Synopsis, prefix: str = "usage: ") -> str:
    return f"{prefix}wp {command_path} {synopsis.text}".rstrip()
