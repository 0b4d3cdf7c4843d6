"""A stand-in `wp` for executor tests: sleeps, floods output, exits as told (flags start with --stub-).

    wp_stub.py --path=/x --stub-sleep=5 --stub-marker=abc123      # sleep (marker: find it with pgrep)
    wp_stub.py --stub-stdout-bytes=20000000                       # 20 MB on stdout
    wp_stub.py --stub-exit=1 --stub-stderr=Error: boom            # exit status and stderr line
    wp_stub.py --stub-ignore-term --stub-sleep=30                 # survives SIGTERM (needs SIGKILL)
    wp_stub.py --stub-log=/tmp/log --stub-sleep=0.3               # appends "start/end <time> <pid>" lines
    wp_stub.py --stub-child-sleep=30 --stub-marker=abc            # also leaves a sleeping child behind
    wp_stub.py --stub-read-stdin                                  # reports how many stdin bytes it read
    wp_stub.py --stub-raw-hex=ff41                                # writes raw bytes (invalid UTF-8)
    wp_stub.py --stub-env                                         # prints its environment as JSON
    wp_stub.py --stub-stat-args media import /tmp/x/a.jpg         # size and modes of file arguments

Without --stub- flags it prints its argv as JSON and exits 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    flags: dict[str, str] = {}
    for arg in argv:
        if arg.startswith("--stub-"):
            name, _, value = arg[len("--stub-") :].partition("=")
            flags[name] = value
    log = flags.get("log")
    if log:
        with open(log, "a") as handle:
            handle.write(f"start {time.monotonic():.6f} {os.getpid()}\n")
    if "child-sleep" in flags:
        marker = flags.get("marker", "")
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                f"--stub-sleep={flags['child-sleep']}",
                f"--stub-marker={marker}-child",
            ],
            stdin=subprocess.DEVNULL,
        )
    answered = _answer(argv, flags)
    if answered is not None:
        return answered
    _behave(flags)
    if not flags:
        sys.stdout.write(json.dumps(argv) + "\n")
    sys.stdout.flush()
    if log:
        with open(log, "a") as handle:
            handle.write(f"end {time.monotonic():.6f} {os.getpid()}\n")
    return int(flags.get("exit", "0") or 0)


def _answer(argv: list[str], flags: dict[str, str]) -> int | None:
    """The stub modes that print a report and end (exit code), or None."""
    if "stat-args" in flags:
        files = [a for a in argv if not a.startswith("--") and os.path.isfile(a)]
        report = [
            {
                "path": path,
                "size": os.path.getsize(path),
                "mode": oct(os.stat(path).st_mode & 0o777),
                "dir_mode": oct(os.stat(os.path.dirname(path)).st_mode & 0o777),
            }
            for path in files
        ]
        sys.stdout.write(json.dumps({"argv": argv, "files": report}))
        return 0
    if "env" in flags:
        sys.stdout.write(json.dumps(dict(os.environ)))
        return 0
    return None


def _behave(flags: dict[str, str]) -> None:
    """The stub modes that act like a command (read, write, ignore signals, sleep) and go on."""
    if "read-stdin" in flags:
        sys.stdout.write(f"stdin-bytes={len(sys.stdin.buffer.read())}\n")
    if "raw-hex" in flags:
        sys.stdout.buffer.write(bytes.fromhex(flags["raw-hex"]))
    if "ignore-term" in flags:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if "stdout-bytes" in flags:
        _flood(sys.stdout.buffer, int(flags["stdout-bytes"]))
    if "stderr-bytes" in flags:
        _flood(sys.stderr.buffer, int(flags["stderr-bytes"]))
    if "sleep" in flags:
        time.sleep(float(flags["sleep"]))
    if "stderr" in flags:
        sys.stderr.write(flags["stderr"] + "\n")


def _flood(stream: object, total: int) -> None:
    chunk = (b"0123456789abcdef" * 4096)[:65536]
    written = 0
    while written < total:
        piece = chunk[: min(len(chunk), total - written)]
        stream.write(piece)  # type: ignore[attr-defined]
        written += len(piece)
    stream.flush()  # type: ignore[attr-defined]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
