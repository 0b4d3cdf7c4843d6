"""Every read the undo capture makes before or after a change is a read by the policy's own judgement: the
capture's reads go through the policy (undo/recorder.py refuses anything else), so one it judges a write
is a change that silently cannot be undone. Checked for every write the table allows or holds, by name
and with --all (a `--update=available` listing runs WordPress's update check, which stores what it found)."""

from __future__ import annotations

import json

import pytest

from wp_agent.executors.port import CommandResult
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.command_table import ALLOWED_COMMANDS
from wp_agent.undo.capture import capture_before, record_after

POLICY = CommandPolicy()
WRITES = sorted(path for path, entry in ALLOWED_COMMANDS.items() if entry.category is not PolicyCategory.READ)


def _answer(argv: list[str]) -> CommandResult:
    """A plausible answer to any read: JSON where JSON is asked (a list for listings), a word otherwise."""
    row = {"name": "alpha", "ID": 1, "db_id": 1, "term_id": 1, "version": "1.0", "status": "active"}
    if "--format=json" not in argv:
        return CommandResult("alpha\n", "", 0, 1)
    listing = "list" in argv[:3]
    return CommandResult(json.dumps([row] if listing else row), "", 0, 1)


@pytest.mark.parametrize("path", WRITES, ids=[" ".join(p) for p in WRITES])
def test_the_capture_of_a_write_reads_only_what_the_policy_calls_reads(path: tuple[str, ...]) -> None:
    asked: list[list[str]] = []

    def read(argv: list[str]) -> CommandResult:
        asked.append(list(argv))
        return _answer(argv)

    for argv in ([*path, "1", "alpha"], [*path, "--all"]):
        try:  # (what the capture makes of these made-up answers is not the question here)
            capture = capture_before(path, argv, read)
            if capture.revertible:
                record_after(path, argv, capture, "Success: 5", read)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass
    refused = [argv for argv in asked if POLICY.classify_argv(argv).category is not PolicyCategory.READ]
    assert not refused, f"the capture of `{' '.join(path)}` asks the site for non-reads: {refused}"
