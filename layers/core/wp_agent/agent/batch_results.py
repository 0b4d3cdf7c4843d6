"""Per-operation outcomes of one WP-CLI call, including multi-ID calls that WP-CLI reports per ID.

WP-CLI's multi-ID update/delete prints `Success: … <id>.` per ID on stdout and a `Warning:` per
failed ID on stderr; its exit code is that of the *last* ID, so exit 0 can hide a failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.whole_values import whole

# Commands whose positional arguments after the path (and after a leading taxonomy) are object IDs.
_MULTI_ID_COMMANDS: dict[tuple[str, ...], int] = {
    ("post", "update"): 0,
    ("post", "delete"): 0,
    ("comment", "delete"): 0,
    ("comment", "trash"): 0,
    ("comment", "approve"): 0,
    ("comment", "unapprove"): 0,
    ("comment", "spam"): 0,
    ("comment", "unspam"): 0,
    ("user", "delete"): 0,
    ("term", "delete"): 1,  # term delete <taxonomy> <id>...
    ("menu", "item", "delete"): 0,
}
_DIGITS = whole(r"\d+", "1", "45")


@dataclass(frozen=True)
class Operation:
    operation: str
    success: bool
    error: str | None = None


def _message_lines(text: str, prefix: str) -> list[str]:
    return [line[len(prefix) :].strip() for line in text.splitlines() if line.startswith(prefix)]


def first_error(stdout: str, stderr: str) -> str | None:
    for prefix in ("Error:", "Warning:"):
        lines = _message_lines(stderr, prefix) or _message_lines(stdout, prefix)
        if lines:
            return lines[0]
    tail = (stderr or stdout).strip().splitlines()
    return tail[-1][:500] if tail else None


def split_operations(
    argv: list[str], command_path: tuple[str, ...], exit_code: int | None, stdout: str, stderr: str
) -> list[Operation]:
    """One Operation per object for multi-ID commands, else one for the whole command."""
    whole = " ".join(argv)
    skip = _MULTI_ID_COMMANDS.get(command_path)
    parsed = ParsedCommand.from_argv(tuple(argv))
    objects = (
        [a for a in parsed.args_after(command_path)[skip or 0 :] if _DIGITS.fits(a)]
        if skip is not None
        else []
    )
    if len(objects) < 2:
        ok = exit_code == 0
        return [
            Operation(whole, ok, None if ok else (first_error(stdout, stderr) or f"exit code {exit_code}"))
        ]
    success_lines = _message_lines(stdout, "Success:")
    failures = _message_lines(stderr, "Warning:") + _message_lines(stderr, "Error:")
    operations: list[Operation] = []
    failure_index = 0
    for object_id in objects:
        mentioned = re.compile(rf"\b{object_id}\b")
        succeeded = any(mentioned.search(line) for line in success_lines)
        single = [a for a in argv if a not in objects or a == object_id]
        if succeeded:
            operations.append(Operation(" ".join(single), True))
            continue
        own = next((f for f in failures if mentioned.search(f)), None)
        if own is None and failure_index < len(failures):
            own = failures[failure_index]
            failure_index += 1
        operations.append(Operation(" ".join(single), False, own or "失敗しました"))
    return operations
