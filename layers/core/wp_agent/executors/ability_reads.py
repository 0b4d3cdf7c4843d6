"""The Abilities API's registry is readable on every WP-CLI: `wp ability list|get|exists` and `wp ability
category list|get|exists` run as WP-CLI's own command where the site has it (wp-cli/ability-command, in
no stable release up to 2.12), else as `wp eval-file` of our reader (ability_reader.php), staged for the
one command like a media file and removed after it.

Only those six reads are answered here; the reader prints the registry and never runs an ability or
any of its callbacks. Which commands reach an executor at all is the policy's decision (executing an
ability is refused there); this module only decides how an allowed read is answered.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from wp_agent.command_line.aliases import canonical_argv
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.executors.media_staging import FileStager
from wp_agent.executors.port import CommandResult

READER = Path(__file__).with_name("ability_reader.php")
ABILITY_READS = frozenset(
    {
        ("ability", "list"),
        ("ability", "get"),
        ("ability", "exists"),
        ("ability", "category", "list"),
        ("ability", "category", "get"),
        ("ability", "category", "exists"),
    }
)
# WP-CLI's global parameters: given to WP-CLI itself (the site, the user), not to the reader.
GLOBAL_PARAMETERS = frozenset(
    {"path", "url", "ssh", "http", "user", "skip-plugins", "skip-themes", "skip-packages", "require",
     "exec", "context", "color", "no-color", "debug", "prompt", "quiet"}
)  # fmt: skip
# What WP-CLI answers for a command it does not have (2.10: "'ability' is not a registered wp command.").
_NOT_REGISTERED = re.compile(r"'ability' is not a registered (?:wp )?(?:sub)?command", re.IGNORECASE)


def ability_read_path(argv: Sequence[str]) -> tuple[str, ...] | None:
    """The ability read `argv` is (one of ABILITY_READS), or None."""
    words = ParsedCommand.from_argv(canonical_argv(argv)).positionals
    path = words[:3] if words[1:2] == ("category",) else words[:2]
    return path if path in ABILITY_READS else None


def reader_argv(argv: Sequence[str], staged_reader: str) -> list[str]:
    """`wp eval-file <reader> <request>` for an ability read, with WP-CLI's global parameters kept."""
    parsed = ParsedCommand.from_argv(canonical_argv(argv))
    words = list(parsed.positionals[1:])  # after `ability`
    options: dict[str, str | bool] = {}
    globals_: list[str] = []
    for option in parsed.options:
        if option.name in GLOBAL_PARAMETERS:
            globals_.append(f"--{option.name}" if option.value is None else f"--{option.name}={option.value}")
        else:
            options[option.name] = True if option.value is None else option.value
    request = json.dumps({"words": words, "options": options}, ensure_ascii=False)
    return ["eval-file", staged_reader, request, *globals_]


class AbilityReads:
    """Answers the ability reads on a WP-CLI without the command (found out once per executor)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._native: bool | None = None  # None: not known yet

    def run(
        self, argv: Sequence[str], run: Callable[[Sequence[str]], CommandResult], stager: FileStager
    ) -> CommandResult:
        if ability_read_path(argv) is None:
            return run(argv)
        if self._native is not False:
            result = run(argv)
            missing = result.exit_code != 0 and bool(_NOT_REGISTERED.search(result.stderr))
            with self._lock:
                self._native = not missing
            if not missing:
                return result
        with stager.staged_files([("wp-agent-ability-reader.php", READER.read_bytes())]) as (path,):
            return run(reader_argv(argv, path))
