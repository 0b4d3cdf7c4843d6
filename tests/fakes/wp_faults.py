"""Fault injection in front of the real WP-CLI on the sshd rig (stdlib only; runs as the rig user).

    wp_faults.py <faults.json> <real command as JSON> <wp arguments…>

The rig's `wp` runs this only while the faults file is not empty. The first fault whose `command`
words begin the positional arguments (e.g. "post term" matches `post term set 57 …`) is consumed
(`times` counts down; none means every time) and applied: wait `delay_ms`, then either fail with
`Error: <error>` on stderr and exit 1, or write `stdout_bytes` bytes and exit 0. Without a matching
fault the real command runs unchanged.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from typing import Any


def take_fault(path: str, words: list[str]) -> dict[str, Any] | None:
    with open(path, "r+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # concurrent commands must not both consume a `times: 1`
        faults: list[dict[str, Any]] = json.loads(handle.read() or "[]")
        for index, fault in enumerate(faults):
            expected = fault["command"].split()
            if words[: len(expected)] != expected:
                continue
            if fault.get("times") is not None:
                fault["times"] -= 1
                if fault["times"] <= 0:
                    faults.pop(index)
                handle.seek(0)
                handle.truncate()
                handle.write(json.dumps(faults))
            return fault
    return None


def main(argv: list[str]) -> int:
    faults_path, real_json, arguments = argv[0], argv[1], argv[2:]
    words = [a for a in arguments if not a.startswith("-")]
    fault = take_fault(faults_path, words)
    if fault is None:
        real = json.loads(real_json)
        os.execvp(real[0], [*real, *arguments])  # noqa: S606 - the rig's own WP-CLI command line
    time.sleep(fault.get("delay_ms", 0) / 1000)
    if fault.get("error"):
        sys.stderr.write(f"Error: {fault['error']}\n")
        return 1
    remaining = int(fault.get("stdout_bytes", 0))
    chunk = b"0123456789abcdef" * 4096
    while remaining > 0:
        piece = chunk[: min(len(chunk), remaining)]
        sys.stdout.buffer.write(piece)
        remaining -= len(piece)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
