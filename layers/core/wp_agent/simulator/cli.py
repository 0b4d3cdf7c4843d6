"""`wp-sim` / `python -m wp_agent.simulator`: behaves like the `wp` binary on a simulated site."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence

from wp_agent.simulator.invocation import detect_piped, execute
from wp_agent.simulator.output import Output, Terminal


def _columns(env: dict[str, str]) -> int:
    raw = env.get("COLUMNS", "")
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError):
        return 80


def _read_stdin() -> str:
    if sys.stdin is None or sys.stdin.closed:
        return ""
    try:
        return sys.stdin.read()
    except (OSError, ValueError):
        return ""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ)
    is_tty = sys.stdout.isatty()
    terminal = Terminal(piped=detect_piped(env, default=not is_tty), columns=_columns(env))
    out = Output(terminal=terminal)
    code = execute(args, env, out, _read_stdin, time.sleep)
    sys.stdout.buffer.write(out.stdout.encode("utf-8"))
    sys.stdout.flush()
    sys.stderr.buffer.write(out.stderr.encode("utf-8"))
    sys.stderr.flush()
    return code
