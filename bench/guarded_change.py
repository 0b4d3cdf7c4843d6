"""What the guard adds to a change of code (executors/code_guard.py), measured on a real WordPress.

Run from the repository root:  python bench/guarded_change.py

On a sandbox WordPress of its own (real WP-CLI, a temp directory) served over loopback HTTP, a plugin is
activated and deactivated ROUNDS times, interleaved: as WP-CLI runs it, and guarded (a probe before, the
backup on the server, the change, a probe after, the backup discarded). Until the local update server
exists (#41's rig) the change measured is an activation, not an update: the guard's own work is the same
(an update's download and unpacking are WP-CLI's, not the guard's). Prints, on stdout, exactly:
  BENCH guarded_update_overhead_ms <ms> ms goal=<=3000
(median guarded minus median unguarded). Details go to stderr.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.sandbox import own_sandbox
from bench.support.timing import check, log, timed
from wp_agent.executors.code_guard import GuardedWpCli
from wp_agent.executors.port import WpCli
from wp_agent.executors.sandbox import SandboxWpCli
from wp_agent.sandbox.http_front import HttpFront

ROUNDS = 5
PLUGIN = "akismet"


def toggle(wp: WpCli) -> None:
    for verb in ("activate", "deactivate"):
        done = wp.run(["plugin", verb, PLUGIN])
        check(done.ok, verb, done.stderr + done.stdout)


def main() -> None:
    with own_sandbox() as site:
        wp = SandboxWpCli(site)
        wp.run(["plugin", "deactivate", PLUGIN])
        with HttpFront(site, workers=2) as front:

            @contextmanager
            def connect() -> Iterator[str | None]:
                yield f"127.0.0.1:{front.port}"

            guarded = GuardedWpCli(wp, wp, connect=connect)
            toggle(guarded)  # PHP's caches, the front's workers
            plain: list[float] = []
            with_guard: list[float] = []
            for _ in range(ROUNDS):
                plain.append(1000 * timed(lambda: toggle(wp)) / 2)
                with_guard.append(1000 * timed(lambda: toggle(guarded)) / 2)
    med = statistics.median
    log(f"one change: as WP-CLI runs it {med(plain):.0f} ms, guarded {med(with_guard):.0f} ms")
    print(f"BENCH guarded_update_overhead_ms {med(with_guard) - med(plain):.0f} ms goal=<=3000")


if __name__ == "__main__":
    main()
