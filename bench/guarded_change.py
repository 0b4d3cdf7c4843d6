"""What the guard adds to a change of code (executors/code_guard.py), measured on a real WordPress.

Run from the repository root:  python bench/guarded_change.py

On a sandbox WordPress of its own (real WP-CLI, a temp directory) served over loopback HTTP, with its
updates from the sandbox's update server (sandbox/update_server.py), an active plugin is updated ROUNDS
times, interleaved: as WP-CLI runs it, and guarded (a probe before, the backup on the server, the update,
the web server's cache told, a probe after, the backup discarded). Before each update the older version
is put back. Prints, on stdout, exactly:
  BENCH guarded_update_overhead_ms <ms> ms goal=<=3000
(median guarded minus median unguarded). Details go to stderr.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.sandbox import own_sandbox
from bench.support.timing import check, log, timed
from wp_agent.executors.code_guard import GuardedWpCli, fixed
from wp_agent.executors.port import WpCli
from wp_agent.executors.sandbox import SandboxWpCli
from wp_agent.sandbox import sample_updates
from wp_agent.sandbox.http_front import HttpFront
from wp_agent.sandbox.update_server import UpdateServer

ROUNDS = 5
PLUGIN = "wpa-sample-good"


def main() -> None:
    installed = next(e for e in sample_updates.installed() if e.slug == PLUGIN)
    with own_sandbox() as site, UpdateServer(site, sample_updates.offered()) as updates:
        wp = SandboxWpCli(site)
        updates.install(installed)
        check(wp.run(["plugin", "activate", PLUGIN]).ok, "activate", "")

        def update(runner: WpCli) -> float:
            updates.install(installed)  # the older version again (not timed)
            return 1000 * timed(lambda: _updated(runner))

        with HttpFront(site, workers=2) as front:
            guarded = GuardedWpCli(wp, wp, connect=fixed(f"127.0.0.1:{front.port}"))
            update(guarded)  # PHP's caches, the front's workers
            plain: list[float] = []
            with_guard: list[float] = []
            for _ in range(ROUNDS):
                plain.append(update(wp))
                with_guard.append(update(guarded))
    med = statistics.median
    log(f"one change: as WP-CLI runs it {med(plain):.0f} ms, guarded {med(with_guard):.0f} ms")
    print(f"BENCH guarded_update_overhead_ms {med(with_guard) - med(plain):.0f} ms goal=<=3000")


def _updated(runner: WpCli) -> None:
    done = runner.run(["plugin", "update", PLUGIN])
    check(done.ok and "Updated 1 of 1" in done.stdout, "update", done.stderr + done.stdout)


if __name__ == "__main__":
    main()
