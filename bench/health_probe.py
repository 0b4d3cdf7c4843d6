"""What the site health probe costs: the whole probe on a real WordPress (diagnostics/health.py).

Run from the repository root:  python bench/health_probe.py

On a sandbox WordPress of its own (real WP-CLI, a temp directory) served over loopback HTTP (PHP's
built-in server, as on a small VPS), the probe runs as it runs on a server — staged, `wp eval-file`,
the server fetching its own front page, newest post, dashboard (logged in) and REST index — ROUNDS
times after one warm-up. Prints, on stdout, exactly:
  BENCH health_probe_ms <ms> ms goal=<=1500
(the median of the whole probe, staging and the WP-CLI start included). Details go to stderr.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.sandbox import own_sandbox
from bench.support.timing import check, log, timed
from wp_agent.diagnostics.health import probe
from wp_agent.executors.sandbox import SandboxWpCli
from wp_agent.sandbox.http_front import HttpFront

ROUNDS = 7


def main() -> None:
    with own_sandbox() as site:
        wp = SandboxWpCli(site)
        with HttpFront(site, workers=2) as front:
            connect = f"127.0.0.1:{front.port}"

            def once() -> None:
                report = probe(wp, wp, connect=connect)
                check(report.healthy, "probe", "\n".join(report.lines_ja()))

            once()  # PHP's caches, the front's workers
            times = [1000 * timed(once) for _ in range(ROUNDS)]
    log(f"probe: median {statistics.median(times):.0f} ms, min {min(times):.0f} ms, max {max(times):.0f} ms")
    print(f"BENCH health_probe_ms {statistics.median(times):.0f} ms goal=<=1500")


if __name__ == "__main__":
    main()
