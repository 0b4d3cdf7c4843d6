"""One reading of a command: its words matched to the command's own synopsis.

WP-CLI reads an argv by the command's synopsis (`<id>...`, `[<site-id>]`, `[--slug=<slug>]`): each
positional word fills the next argument, a repeated `--flag` keeps its last value, an ID is read by
PHP's integer cast. The policy, the approval summary and the checks before a write all read the
command through `read_command`, so none of them can read it differently from WP-CLI — and what
WP-CLI itself could read two ways is refused here, never interpreted: a repeated option, the same
object twice, a number written otherwise than WordPress reads it (`022`, `1e1`, `+5`, ` 5`, `５`), an
ID together with `--slug`, names together with `--all`.

The synopses are the pinned WP-CLI's own (`wp cli cmd-dump`, checked in as synopses.json by
scripts/refresh_synopses.py; tests/integration/test_wp_cli_aliases.py checks them against the phar);
each records its source.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from wp_agent.command_line.parsed_command import ParsedCommand

SYNOPSES_FILE = Path(__file__).with_name("synopses.json")
PINNED_SOURCE = "WP-CLI 2.10.0 wp cli cmd-dump"
# Commands the pinned dump does not list: WP-CLI's own `help`, and the current release's commands read
# from the official command reference (scripts/wpcli_reference.py), each with where it came from.
REFERENCE_FILE = Path(__file__).with_name("reference_synopses.json")
_HELP_SYNOPSIS = {"synopsis": "[<command>...]", "source": "WP-CLI handbook: wp help"}

# Arguments that name one stored object by its ID (a user also by login or email, a menu or term
# also by name or slug): PHP reads their number with an integer cast, so `022` is 22 and `1e1` is 10.
REFERENCE_ARGUMENTS = frozenset(
    {
        "id",
        "db-id",
        "attachment-id",
        "post-id",
        "site-id",
        "term-id",
        "user",
        "term",
        "menu",
        "from",
        "to",
        "revision_id",
        "request-id",
        "family-id",
    }
)
REFERENCE_OPTIONS = frozenset(
    {"reassign", "post_author", "post_parent", "parent", "parent-id", "post_id", "site_id", "from-post",
     "network_id", "user_id", "comment_post_id", "comment_parent"}
)  # fmt: skip
_PLAIN_NUMBER = re.compile(r"(?:0|[1-9][0-9]*)")
# What PHP's (int) cast reads as a number: optional whitespace, a sign, then a digit (or `.5`).
_READ_AS_NUMBER = re.compile(r"\s*[+-]?\.?\d")
_PHP_NUMERIC_PREFIX = re.compile(r"[ \t\n\r\v\f]*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SLOT = re.compile(r"^(\[)?<([^>]+)>(\.\.\.)?(\])?$")
# `[--image_size=<image_size>...]` (newer releases) may repeat in WP-CLI; the policy still refuses a
# repeated option (one value each, as written), so the `...` is read and set aside.
_OPTION = re.compile(r"^(\[)?--([a-z0-9_\-]+|<field>)(\[)?(=<[^>]+>)?\]?(?:\.\.\.)?\]?$")


@dataclass(frozen=True)
class Argument:
    name: str
    optional: bool
    repeating: bool

    @property
    def is_reference(self) -> bool:
        return self.name in REFERENCE_ARGUMENTS


@dataclass(frozen=True)
class Option:
    name: str
    takes_value: bool
    optional: bool
    placeholder: str = ""  # what its value is, as the synopsis calls it: `file` of `--file=<file>`


@dataclass(frozen=True)
class Synopsis:
    path: tuple[str, ...]
    text: str
    source: str
    arguments: tuple[Argument, ...]
    options: Mapping[str, Option]
    open_fields: bool  # `--<field>=<value>`: any field name is accepted

    @classmethod
    def parse(cls, path: tuple[str, ...], text: str, source: str) -> Synopsis:
        arguments: list[Argument] = []
        options: dict[str, Option] = {}
        open_fields = False
        for token in text.split():
            slot = _SLOT.match(token)
            if slot is not None:
                arguments.append(Argument(slot.group(2), bool(slot.group(1)), bool(slot.group(3))))
                continue
            option = _OPTION.match(token)
            if option is None:
                raise ValueError(f"{' '.join(path)}: synopsis token {token!r} not understood")
            if option.group(2) == "<field>":
                open_fields = True
                continue
            value = option.group(4) or ""
            options[option.group(2)] = Option(
                option.group(2), bool(value), bool(option.group(1)), value[2:-1]
            )
        return cls(path, text, source, tuple(arguments), options, open_fields)

    @property
    def max_arguments(self) -> int | None:
        """How many positional words WP-CLI accepts (None: the last argument repeats)."""
        if any(a.repeating for a in self.arguments):
            return None
        return len(self.arguments)

    @property
    def prompts(self) -> bool:
        """WP-CLI asks "Are you sure?" unless `--yes` is given (and reads end-of-file as no)."""
        return "yes" in self.options


@dataclass(frozen=True)
class CommandReading:
    """A command as WP-CLI reads it: each synopsis argument with its words, each option once."""

    path: tuple[str, ...]
    synopsis: Synopsis
    arguments: Mapping[str, tuple[str, ...]]
    options: Mapping[str, str | None]  # by name; None for a bare flag

    def words(self, name: str) -> tuple[str, ...]:
        return self.arguments.get(name, ())

    def word(self, name: str) -> str | None:
        found = self.arguments.get(name, ())
        return found[0] if found else None

    def objects(self) -> tuple[str, ...]:
        """The words of the argument that names the objects the command acts on (the last one)."""
        return self.arguments.get(self.synopsis.arguments[-1].name, ()) if self.synopsis.arguments else ()

    def has(self, name: str) -> bool:
        return name in self.options

    def option(self, name: str) -> str | None:
        return self.options.get(name)


@dataclass(frozen=True)
class Ambiguity:
    """Why WP-CLI could read the command otherwise than it is written: the policy refuses it."""

    rule: str
    reason_ja: str
    pattern: str


def synopsis_document(dumped: Mapping[tuple[str, ...], str], paths: Any) -> dict[str, Any]:
    """The synopses.json document for `paths`: the pinned phar's own dump where it has the command, else
    the command reference's synopsis with its source."""
    reference = json.loads(REFERENCE_FILE.read_text(encoding="utf-8"))["commands"]
    commands: dict[str, dict[str, str]] = {}
    for path in paths:
        name = " ".join(path)
        if path in dumped:
            commands[name] = {"synopsis": dumped[path], "source": PINNED_SOURCE}
        elif name == "help":
            commands[name] = dict(_HELP_SYNOPSIS)
        else:
            commands[name] = dict(reference[name])
    return {"commands": commands}


@cache
def synopses() -> dict[tuple[str, ...], Synopsis]:
    document = json.loads(SYNOPSES_FILE.read_text(encoding="utf-8"))
    return {
        tuple(name.split()): Synopsis.parse(tuple(name.split()), row["synopsis"], row["source"])
        for name, row in document["commands"].items()
    }


def synopsis_of(path: tuple[str, ...]) -> Synopsis | None:
    return synopses().get(path)


def read_command(parsed: ParsedCommand, path: tuple[str, ...]) -> CommandReading | Ambiguity | None:
    """The reading of `parsed` (a canonical command under allow-list path `path`), the ambiguity
    that refuses it, or None when the path has no synopsis (an FR-5.2 custom path)."""
    synopsis = synopsis_of(path)
    if synopsis is None:
        return None
    words = parsed.args_after(path)
    limit = synopsis.max_arguments
    name = " ".join(path)
    if limit is not None and len(words) > limit:
        return Ambiguity(
            "blocked.too_many_positionals",
            f"「{name}」に渡せる引数は{limit}個までです（WP-CLIも実行を拒否します）。値に空白がある場合は引用符で囲んでください",
            name,
        )
    options: dict[str, str | None] = {}
    seen: set[str] = set()
    for option in parsed.options:
        key = option.name.removeprefix("no-")  # `--no-force` sets the same flag as `--force`
        if key in seen:
            return Ambiguity(
                "blocked.ambiguous.repeated_option",
                f"オプション --{key} が2回指定されています。WP-CLIは最後の値だけを使うため、"
                "どちらの意味で実行されるかが書かれた通りになりません。各オプションは1回だけ指定してください",
                f"--{key}",
            )
        seen.add(key)
        options[option.name] = option.value
    arguments: dict[str, tuple[str, ...]] = {}
    rest = list(words)
    for at, argument in enumerate(synopsis.arguments):
        if not rest:
            break
        required_after = sum(1 for a in synopsis.arguments[at + 1 :] if not a.optional)
        if argument.optional and len(rest) <= required_after:
            continue  # `[<plugin>] <language>...` given one word: it is the language
        taken = tuple(rest) if argument.repeating else (rest[0],)
        rest = rest[len(taken) :]
        arguments[argument.name] = taken
    reading = CommandReading(path, synopsis, arguments, options)
    return _ambiguity(reading) or reading


def _ambiguity(reading: CommandReading) -> Ambiguity | None:
    for argument in reading.synopsis.arguments:
        given = reading.words(argument.name)
        if argument.is_reference:
            for word in given:
                odd = _number_problem(word)
                if odd is not None:
                    return odd
        seen: set[str] = set()
        for word in given:
            # Stored names compare without case in WordPress's tables (option_name, user_login, slugs).
            key = word.casefold()
            if key in seen:
                return Ambiguity(
                    "blocked.ambiguous.same_object",
                    f"同じ対象「{word}」が2回指定されています。2回目は1回目の結果に対して実行され"
                    "（ゴミ箱に移した投稿の完全削除など）、書かれた意味と変わるため実行しません。対象は1回ずつ指定してください",
                    word,
                )
            seen.add(key)
    for name, value in reading.options.items():
        declared = reading.synopsis.options.get(name.removeprefix("no-"))
        if declared is not None and not declared.takes_value and value is not None:
            # PHP reads the flag's value for truth: `--dry-run=0` and `--dry-run=` are off, `=false` on.
            return Ambiguity(
                "blocked.ambiguous.flag_value",
                f"--{name} は値を取らないオプションです。「--{name}={value}」はWP-CLIが値の真偽で読み、"
                f"書かれた通りの意味になるとは限らないため、--{name} とだけ指定するか外してください",
                f"--{name}={value}",
            )
        if name in REFERENCE_OPTIONS and value is not None:
            odd = _number_problem(value)
            if odd is not None:
                return odd
    return _two_selectors(reading)


def _number_problem(word: str) -> Ambiguity | None:
    non_ascii_digit = any(unicodedata.category(c) == "Nd" and not c.isascii() for c in word)
    if _PLAIN_NUMBER.fullmatch(word) or not (non_ascii_digit or _READ_AS_NUMBER.match(word)):
        return None
    read_as = php_integer(word)
    how = f"WordPressは {read_as} と読みます" if read_as else "WordPressはIDとして読めません"
    return Ambiguity(
        "blocked.ambiguous.number",
        f"「{word}」は書かれた通りには読まれない数の書き方です（{how}）。"
        "IDは先頭の0・符号・空白・指数・全角数字を使わず、半角数字だけで指定してください",
        word,
    )


def php_integer(word: str) -> int:
    """PHP's `(int)` of a string (PHP 8): its leading numeric part, an exponent included; else 0."""
    match = _PHP_NUMERIC_PREFIX.match(word)
    if match is None:
        return 0
    number = float(match.group(0)) if re.search(r"[.eE]", match.group(0)) else int(match.group(0))
    if number in (float("inf"), float("-inf")):
        return 0
    return int(max(-(2**63), min(2**63 - 1, number)))  # PHP saturates a finite float out of range


# Where `--all` means every block of the named type, not every object instead of the named one.
ALL_OF_THE_NAMED = frozenset({("post", "block", "remove")})


def _two_selectors(reading: CommandReading) -> Ambiguity | None:
    """Two ways of naming the objects given at once: WP-CLI prefers one of them silently."""
    named = [a for a in reading.synopsis.arguments if a.optional and reading.words(a.name)]
    if not named:
        return None
    given = ", ".join(reading.words(named[0].name))
    if reading.has("slug") and "slug" in reading.synopsis.options:
        return Ambiguity(
            "blocked.ambiguous.two_selectors",
            f"対象が「{given}」と --slug の両方で指定されています。WP-CLIは --slug を優先するため、どちらか一方だけを指定してください",
            "--slug",
        )
    if reading.has("all") and "all" in reading.synopsis.options and reading.path not in ALL_OF_THE_NAMED:
        return Ambiguity(
            "blocked.ambiguous.two_selectors",
            f"対象「{given}」と --all（全て）が両方指定されています。どちらか一方だけを指定してください",
            "--all",
        )
    return None
