"""Command-line parsing the way WP-CLI's Configurator does it.

`--key=value` is an associative argument, `--flag` is true, `--no-flag` is false, anything else
is positional. Global parameters (`--path`, `--url`, `--user`, `--quiet`, ...) are recognised
wherever they appear and taken out of the command's own arguments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from wp_agent.simulator.formatting import ArgValue

# Runtime configuration keys WP-CLI accepts on any command (Utils\get_config_spec()).
GLOBAL_KEYS = frozenset(
    {
        "path",
        "url",
        "user",
        "skip-plugins",
        "skip-themes",
        "skip-packages",
        "require",
        "exec",
        "context",
        "debug",
        "prompt",
        "quiet",
        "color",
        "ssh",
        "http",
        "allow-root",
    }
)

_NEGATED = re.compile(r"^--no-([^=]+)$")
_FLAG = re.compile(r"^--([^=]+)$")
_ASSOC = re.compile(r"^--([^=]+)=(.*)$", re.DOTALL)


@dataclass
class ParsedArgs:
    positional: list[str] = field(default_factory=list)
    assoc: dict[str, ArgValue] = field(default_factory=dict)
    globals: dict[str, ArgValue] = field(default_factory=dict)

    def global_str(self, key: str) -> str | None:
        value = self.globals.get(key)
        return value if isinstance(value, str) else None

    def global_flag(self, key: str) -> bool:
        return self.globals.get(key) is True


def parse_argv(argv: list[str]) -> ParsedArgs:
    parsed = ParsedArgs()
    for arg in argv:
        key: str | None = None
        value: ArgValue = True
        if match := _NEGATED.match(arg):
            key, value = match.group(1), False
        elif match := _FLAG.match(arg):
            key, value = match.group(1), True
        elif match := _ASSOC.match(arg):
            key, value = match.group(1), match.group(2)
        if key is None:
            parsed.positional.append(arg)
        elif key in GLOBAL_KEYS:
            parsed.globals[key] = value
        else:
            parsed.assoc[key] = value
    return parsed


def php_int(value: object) -> int:
    """PHP's `(int)` / `%d` conversion of a CLI string: leading digits, else 0."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    match = re.match(r"\s*([+-]?\d+)", str(value))
    return int(match.group(1)) if match else 0


def is_php_numeric_id(value: str) -> bool:
    return bool(re.fullmatch(r"\s*\d+\s*", value))
