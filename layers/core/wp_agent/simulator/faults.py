"""Faults stored in the site file (environment variables don't cross SSH).

A fault matches a command path by words: "post" matches `post create` and `post meta add`,
"post create" only `post create`, "*" everything. It may delay the answer (`delay_ms`), flood
STDOUT (`stdout_bytes`, the command is then not run) and/or fail with `Error: <error>` and
`exit_code`. `times` counts remaining firings (None = until cleared).
"""

from __future__ import annotations

from collections.abc import Sequence

from wp_agent.simulator.model import FaultRow

_FLOOD_LINE = "Simulated output line for the output-size limit test.\n"


def matching_fault(faults: Sequence[FaultRow], command_path: str) -> FaultRow | None:
    for fault in faults:
        pattern = str(fault.get("command", "*")).strip()
        if pattern in ("*", "") or command_path == pattern or command_path.startswith(pattern + " "):
            return fault
    return None


def consume(faults: list[FaultRow], fault_id: int) -> FaultRow | None:
    """Use one firing of a limited fault; None when another invocation already used it up."""
    for index, fault in enumerate(faults):
        if fault.get("id") != fault_id:
            continue
        remaining = fault.get("times")
        if remaining is None:
            return fault
        if remaining <= 1:
            del faults[index]
        else:
            fault["times"] = remaining - 1
        return fault
    return None


def flood_text(size: int) -> str:
    repeats, rest = divmod(size, len(_FLOOD_LINE))
    return _FLOOD_LINE * repeats + _FLOOD_LINE[:rest]
