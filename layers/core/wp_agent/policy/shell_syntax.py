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
    length = len(command)
    while i < length:
        char = command[i]
        if _is_control(char):
            hazards.append(ShellHazard(HazardKind.CONTROL_CHARACTER, repr(char), i))
            i += 1
            continue
        if state == "single":
            if char == "'":
                state = "plain"
            i += 1
            continue
        if state == "double":
            substitution = _substitution_at(command, i)
            if substitution:
                hazards.append(ShellHazard(HazardKind.SUBSTITUTION, substitution, i))
                i += len(substitution)
            elif char == "\\" and i + 1 < length:
                # `\$(` is literal to a shell; we still flag it (below) because nothing legitimate needs it.
                if _substitution_at(command, i + 1):
                    hazards.append(ShellHazard(HazardKind.SUBSTITUTION, command[i : i + 3], i))
                i += 2
            elif char == '"':
                state = "plain"
                i += 1
            else:
                i += 1
            continue
        # plain (unquoted) text
        if char == "'":
            state, quote_start = "single", i
            i += 1
        elif char == '"':
            state, quote_start = "double", i
            i += 1
        elif char == "\\":
            if i + 1 >= length:
                hazards.append(ShellHazard(HazardKind.UNBALANCED_QUOTE, "\\", i))
                i += 1
                continue
            escaped = command[i + 1]
            if escaped in _OPERATOR_CHARS or escaped in "\n\r`$":
                hazards.append(ShellHazard(HazardKind.ESCAPED_OPERATOR, command[i : i + 2], i))
            i += 2
        elif char in "\n\r":
            hazards.append(ShellHazard(HazardKind.NEWLINE, repr(char), i))
            i += 1
        elif (substitution := _substitution_at(command, i)) is not None:
            hazards.append(ShellHazard(HazardKind.SUBSTITUTION, substitution, i))
            i += len(substitution)
        elif char in _OPERATOR_CHARS:
            pair = command[i : i + 2]
            text = pair if pair in _TWO_CHAR_OPERATORS else char
            hazards.append(ShellHazard(HazardKind.OPERATOR, text, i))
            i += len(text)
        else:
            i += 1
    if state != "plain":
        hazards.append(ShellHazard(HazardKind.UNBALANCED_QUOTE, command[quote_start], quote_start))
    return hazards


def split_words(command: str) -> list[str]:
    """The argv a POSIX shell would build from a hazard-free command (shlex, POSIX rules)."""
    return shlex.split(command, comments=False, posix=True)
