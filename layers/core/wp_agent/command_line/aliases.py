"""WP-CLI's own spellings of a command resolved to the one canonical command it runs.

Every rule (built-in, hard block, FR-5.2 custom) is written for canonical command paths, so the
policy resolves the model's words first: `option set` runs `option update`, `sql query` runs
`db query`. The tables mirror WP-CLI 2.10: Runner::back_compat_conversions() and the `@alias`
tags of the bundled commands; tests/unit/test_wp_cli_aliases.py checks them against the real phar.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from wp_agent.command_line.parsed_command import ParsedCommand

_HEAD_WORDS = 3
# Runner::back_compat_conversions: `$top_level_aliases`.
TOP_LEVEL_ALIASES: dict[str, str] = {"sql": "db", "blog": "site"}
# Runner: `preg_match( '/(post|comment|user|network)-meta/', $args[0] )` — unanchored, so
# `xpost-metay` becomes `post meta` too.
META_COMMAND_WORD = re.compile(r"(post|comment|user|network)-meta")
# Runner: the first two words rewritten (`core language` -> `language core`, …).
PATH_REWRITES: dict[tuple[str, str], tuple[str, ...]] = {
    ("cli", "aliases"): ("cli", "alias", "list"),
    ("core", "config"): ("config", "create"),
    ("core", "language"): ("language", "core"),
    ("checksum", "core"): ("core", "verify-checksums"),
    ("checksum", "plugin"): ("plugin", "verify-checksums"),
    ("plugin", "scaffold"): ("scaffold", "plugin"),
}
# Runner: a subcommand that stands for another one plus a flag.
FLAG_REWRITES: dict[tuple[str, str], tuple[tuple[str, str], str]] = {
    ("plugin", "update-all"): (("plugin", "update"), "--all"),
    ("theme", "update-all"): (("theme", "update"), "--all"),
    ("transient", "delete-expired"): (("transient", "delete"), "--expired"),
    ("transient", "delete-all"): (("transient", "delete"), "--all"),
}
# `@alias` tags: {composite command: {alias: subcommand}}. WP-CLI looks an alias up only when no
# subcommand has that name, at every level of the command path.
SUBCOMMAND_ALIASES: dict[tuple[str, ...], dict[str, str]] = {
    ("comment", "meta"): {"set": "update"},
    ("core",): {"install-network": "multisite-convert", "upgrade": "update"},
    ("db",): {"connect": "cli", "dump": "export"},
    ("network", "meta"): {"set": "update"},
    ("option",): {"set": "update"},
    ("plugin",): {"upgrade": "update"},
    ("post", "meta"): {"set": "update"},
    ("scaffold",): {"_s": "underscores", "cpt": "post-type", "tax": "taxonomy"},
    ("site", "meta"): {"set": "update"},
    ("site", "option"): {"set": "update"},
    ("term", "meta"): {"set": "update"},
    ("theme",): {"uninstall": "delete", "upgrade": "update"},
    ("user", "meta"): {"set": "update"},
}


def canonical_words(words: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(canonical positional words, flags WP-CLI adds) for the model's positional words."""
    out = list(words)
    flags: list[str] = []
    if out and out[0] in TOP_LEVEL_ALIASES:
        out[0] = TOP_LEVEL_ALIASES[out[0]]
    if out and (match := META_COMMAND_WORD.search(out[0])):
        out[0:1] = [match.group(1), "meta"]
    head = (out[0], out[1]) if len(out) > 1 else None
    if head in PATH_REWRITES:
        out[0:2] = PATH_REWRITES[head]
    elif head in FLAG_REWRITES:
        path, flag = FLAG_REWRITES[head]
        out[0:2] = path
        flags.append(flag)
    for depth in range(len(out)):
        aliases = SUBCOMMAND_ALIASES.get(tuple(out[:depth]))
        if aliases and out[depth] in aliases:
            out[depth] = aliases[out[depth]]
    return tuple(out), tuple(flags)


def canonical_path(path: Sequence[str]) -> tuple[str, ...]:
    """A command path (e.g. of an FR-5.2 rule) in canonical words."""
    return canonical_words(path)[0]


def canonical_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """argv with its command words in canonical form; options and arguments keep their order.

    WP-CLI reads `--name[=value]` anywhere, so the canonical words take the place of the first
    positional word and any flag a conversion implies is appended.
    """
    positions = [i for i, token in enumerate(argv) if not ParsedCommand.is_option(token)]
    words = [argv[i] for i in positions]
    canonical, flags = canonical_words(words)
    if tuple(words) == canonical and not flags:
        return tuple(argv)
    # Conversions only ever touch the first three words (aliased composites are at most two deep).
    head = min(len(words), _HEAD_WORDS)
    tail = len(words) - head
    new_head = canonical[: len(canonical) - tail]
    out: list[str] = []
    for i, token in enumerate(argv):
        if i == positions[0]:
            out.extend(new_head)
        if i not in positions[:head]:
            out.append(token)
    return (*out, *flags)
