"""One reading of a command (policy/command_grammar.py): what WP-CLI could read two ways is refused.

Properties rather than spellings: for every allowed path, every option given twice is refused; for
every reference argument, every word PHP reads as a number other than the one written is refused
(PHP itself is asked); every repeated object is refused; every command whose synopsis has both a
positional and `--slug` or `--all` refuses both at once; every held command WP-CLI would stop to ask
about carries `--yes`.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.command_grammar import (
    ALL_OF_THE_NAMED,
    Ambiguity,
    CommandReading,
    php_integer,
    read_command,
    synopses,
)
from wp_agent.policy.command_table import ALLOWED_COMMANDS

POLICY = CommandPolicy()


def _reading(command: str) -> CommandReading | Ambiguity | None:
    resolved = POLICY.resolve(command)
    assert resolved is not None, command
    return read_command(*resolved)


def test_every_allowed_path_has_a_synopsis_with_its_source() -> None:
    assert set(synopses()) == set(ALLOWED_COMMANDS)
    assert all(s.source for s in synopses().values())


def test_every_positional_word_is_read() -> None:
    reading = _reading("user update 1 3 --role=administrator")
    assert isinstance(reading, CommandReading)
    assert reading.words("user") == ("1", "3")
    assert reading.objects() == ("1", "3")
    reading = _reading("option delete posts_per_page blogdescription")
    assert isinstance(reading, CommandReading)
    assert reading.objects() == ("posts_per_page", "blogdescription")
    reading = _reading("post meta delete 5 color blue")
    assert isinstance(reading, CommandReading)
    assert (reading.word("id"), reading.word("key"), reading.word("value")) == ("5", "color", "blue")


@pytest.mark.parametrize("path", sorted(synopses()))
def test_an_option_given_twice_is_refused_on_every_path(path: tuple[str, ...]) -> None:
    for name in [*synopses()[path].options, "url", "format"]:
        for second in (f"--{name}=b", f"--no-{name}"):
            parsed = ParsedCommand.from_argv((*path, f"--{name}=a", second))
            found = read_command(parsed, path)
            assert isinstance(found, Ambiguity), (path, name, second)
            assert found.rule == "blocked.ambiguous.repeated_option"


MANY_OBJECTS = sorted(path for path, s in synopses().items() if s.arguments and s.arguments[-1].repeating)


@pytest.mark.parametrize("path", MANY_OBJECTS)
def test_the_same_object_twice_is_refused(path: tuple[str, ...]) -> None:
    slots = synopses()[path].arguments
    before = ["x"] * (len(slots) - 1)
    for first, second in (("10", "10"), ("shop", "SHOP")):
        found = read_command(ParsedCommand.from_argv((*path, *before, first, second)), path)
        assert isinstance(found, Ambiguity), path
        assert found.rule == "blocked.ambiguous.same_object", path


# Words built from what PHP's integer cast treats specially: zeros, signs, whitespace, exponents,
# points, fullwidth and other scripts' digits, trailing letters.
NUMBERISH = st.text(alphabet=list("0123456789+-. \t\u3000eE５٣x"), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(words=st.lists(NUMBERISH, min_size=40, max_size=40))
def test_a_reference_is_accepted_only_when_php_reads_it_as_written(words: list[str]) -> None:
    """Asked of PHP itself: every word the grammar lets name an object either is not read as a
    number at all (a login, a slug) or is read as exactly the number written."""
    script = 'foreach (json_decode($argv[1]) as $w) { echo json_encode([(int)$w, is_numeric($w)]), "\\n"; }'
    done = subprocess.run(
        ["php", "-r", script, json.dumps(words)], capture_output=True, text=True, check=True
    )
    for word, line in zip(words, done.stdout.splitlines(), strict=True):
        as_int, numeric = json.loads(line)
        assert php_integer(word) == as_int, word
        found = read_command(ParsedCommand.from_argv(("post", "delete", word)), ("post", "delete"))
        accepted = isinstance(found, CommandReading)
        if accepted and (numeric or as_int != 0):
            assert word == str(as_int), word  # read as a number: exactly as written
        if word.isascii() and word.isdigit() and word == str(int(word)):
            assert accepted, word


@pytest.mark.parametrize("path", sorted(synopses()))
def test_two_ways_of_naming_the_objects_are_refused(path: tuple[str, ...]) -> None:
    synopsis = synopses()[path]
    optional = [a for a in synopsis.arguments if a.optional]
    for selector in ("slug", "all"):
        if (
            not optional
            or selector not in synopsis.options
            or (selector == "all" and path in ALL_OF_THE_NAMED)
        ):
            continue
        required = ["x"] * sum(1 for a in synopsis.arguments if not a.optional)
        flag = "--slug=shop" if selector == "slug" else "--all"
        named = ["7", *required] if synopsis.arguments[0].optional else [*required, "7"]
        found = read_command(ParsedCommand.from_argv((*path, *named, flag)), path)
        assert isinstance(found, Ambiguity), path
        assert found.rule == "blocked.ambiguous.two_selectors", path
        alone = read_command(ParsedCommand.from_argv((*path, *required, flag)), path)
        assert isinstance(alone, CommandReading), path


@pytest.mark.parametrize(
    "command",
    ["site delete --slug=shop", "site delete 2", "user delete 3 --reassign=1", "user delete 3 --network"],
)
def test_an_approved_command_never_stops_at_wp_clis_own_question(command: str) -> None:
    decision = POLICY.classify(command)
    assert decision.category is PolicyCategory.DESTRUCTIVE
    assert decision.argv.count("--yes") == 1
    assert POLICY.classify(f"{command} --yes").argv.count("--yes") == 1


def test_every_held_path_whose_synopsis_asks_gets_yes() -> None:
    for path, synopsis in synopses().items():
        if not synopsis.prompts:
            continue
        decision = POLICY.classify(
            " ".join((*path, *["1"] * sum(not a.optional for a in synopsis.arguments)))
        )
        if decision.category is PolicyCategory.DESTRUCTIVE:
            assert "--yes" in decision.argv, path
        elif decision.category is not PolicyCategory.BLOCKED:
            assert "--yes" not in decision.argv, path  # a write keeps exactly what it was given


def test_refusals_say_how_to_write_it_plainly() -> None:
    for command, needle in {
        "post delete 022": "22 と読みます",
        "post delete 1e1": "10 と読みます",
        "post delete ５": "IDとして読めません",
        "user update 3 --role=subscriber --role=administrator": "1回だけ",
        "site delete 2 --slug=shop": "どちらか一方",
        "post delete 10 10": "1回ずつ",
    }.items():
        decision = POLICY.classify(command)
        assert decision.blocked, command
        assert needle in decision.reason_ja, (command, decision.reason_ja)
