"""Find what a POSIX shell would treat as syntax in a command string.

The executors never use a shell (local: argv; SSH: every argument quoted), so nothing found here
could run anyway. We still refuse such commands: they show the model trying to chain, redirect or
substitute, and refusing them keeps the command text honest in the audit log. Characters inside
single quotes are data; inside double quotes only substitutions stay active, as in a real shell.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from enum import StrEnum


class HazardKind(StrEnum):
    OPERATOR = "operator"
    SUBSTITUTION = "substitution"
    NEWLINE = "newline"
    CONTROL_CHARACTER = "control_character"
    ESCAPED_OPERATOR = "escaped_operator"
    UNBALANCED_QUOTE = "unbalanced_quote"


@dataclass(frozen=True)
class ShellHazard:
    kind: HazardKind
    text: str
    position: int


_OPERATOR_CHARS = frozenset(";&|<>()")
# Two-character operators are reported as one hazard so the reason names what the model wrote.
_TWO_CHAR_OPERATORS = frozenset(
    {"&&", "||", ">>", "<<", ";;", "|&", ">&", "<&", "&>", ">|", "<>", "<(", ">("}
)
_SUBSTITUTION_STARTS = ("$(", "${", "$[")


# Bidirectional overrides/isolates can make an approval summary or audit line read differently
# from what runs; C1 controls are terminal escapes. Neither has a place in a command.
_INVISIBLE_CONTROLS = (
    frozenset(range(0x80, 0xA0)) | frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))
)


def _is_control(char: str) -> bool:
    code = ord(char)
    return (code < 0x20 and char not in "\t\n\r") or code == 0x7F or code in _INVISIBLE_CONTROLS


def _substitution_at(command: str, index: int) -> str | None:
    if command[index] == "`":
        return "`"
    pair = command[index : index + 2]
    return pair if pair in _SUBSTITUTION_STARTS else None


def find_shell_hazards(command: str) -> list[ShellHazard]:
    """Every operator, substitution, newline or control character outside quotes (see module doc)."""
    hazards: list[ShellHazard] = []
    state = "plain"  # plain | single | double
    quote_start = 0
    i = 0
    while i < len(command):
        char = command[i]
        if _is_control(char):
            hazards.append(ShellHazard(HazardKind.CONTROL_CHARACTER, repr(char), i))
            i += 1
        elif state == "single":
            state = "plain" if char == "'" else "single"
            i += 1
        elif state == "double":
            state, i = _double_quoted(command, i, hazards)
        else:
            if char in "'\"":
                quote_start = i
            state, i = _unquoted(command, i, hazards)
    if state != "plain":
        hazards.append(ShellHazard(HazardKind.UNBALANCED_QUOTE, command[quote_start], quote_start))
    return hazards


def _double_quoted(command: str, i: int, hazards: list[ShellHazard]) -> tuple[str, int]:
    """One step inside double quotes: only substitutions stay active. (state, next index)"""
    char = command[i]
    substitution = _substitution_at(command, i)
    if substitution:
        hazards.append(ShellHazard(HazardKind.SUBSTITUTION, substitution, i))
        return "double", i + len(substitution)
    if char == "\\" and i + 1 < len(command):
        # `\$(` is literal to a shell; we still flag it because nothing legitimate needs it.
        if _substitution_at(command, i + 1):
            hazards.append(ShellHazard(HazardKind.SUBSTITUTION, command[i : i + 3], i))
        return "double", i + 2
    return ("plain" if char == '"' else "double"), i + 1


def _unquoted(command: str, i: int, hazards: list[ShellHazard]) -> tuple[str, int]:
    """One step of unquoted text. (state, next index)"""
    char = command[i]
    if char == "'":
        return "single", i + 1
    if char == '"':
        return "double", i + 1
    if char == "\\":
        if i + 1 >= len(command):
            hazards.append(ShellHazard(HazardKind.UNBALANCED_QUOTE, "\\", i))
            return "plain", i + 1
        if command[i + 1] in _OPERATOR_CHARS or command[i + 1] in "\n\r`$":
            hazards.append(ShellHazard(HazardKind.ESCAPED_OPERATOR, command[i : i + 2], i))
        return "plain", i + 2
    if char in "\n\r":
        hazards.append(ShellHazard(HazardKind.NEWLINE, repr(char), i))
        return "plain", i + 1
    if (substitution := _substitution_at(command, i)) is not None:
        hazards.append(ShellHazard(HazardKind.SUBSTITUTION, substitution, i))
        return "plain", i + len(substitution)
    if char in _OPERATOR_CHARS:
        pair = command[i : i + 2]
        text = pair if pair in _TWO_CHAR_OPERATORS else char
        hazards.append(ShellHazard(HazardKind.OPERATOR, text, i))
        return "plain", i + len(text)
    return "plain", i + 1


def split_words(command: str) -> list[str]:
    """The argv a POSIX shell would build from a hazard-free command (shlex, POSIX rules)."""
    return shlex.split(command, comments=False, posix=True)
