"""What the long runs of the conformance properties share (scripts/effect_conformance.py and
scripts/approval_conformance.py): their arguments, a `kill` that still stops the site's MariaDB, and a
printed seed that makes a run repeatable."""

from __future__ import annotations

import argparse
import random
import signal
import sys

from wp_agent.cli.terminal import out


def start(doc: str | None, *, commands: int, verbose_help: str) -> tuple[argparse.Namespace, random.Random]:
    """The script's arguments (`--commands`, `--seed`, `--verbose`) and its random source."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("--commands", type=int, default=commands, help="how many commands to generate")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: a new one, printed)")
    parser.add_argument("--verbose", action="store_true", help=verbose_help)
    args = parser.parse_args()
    # A `kill` ends the run through the script's context manager, so its MariaDB server stops too.
    signal.signal(signal.SIGTERM, lambda _signal, _frame: sys.exit(143))
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    out.line(f"seed: {seed}", flush=True)
    return args, random.Random(seed)
