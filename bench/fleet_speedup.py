"""A fleet run side by side against one site after another (fleet/engine.py), on real WordPress sites.

Run from the repository root:  python bench/fleet_speedup.py

Ten sandbox WordPress sites of the benchmark's own (each its own MariaDB and files, real WP-CLI). Every
WP-CLI command a site's run makes is given what it costs over SSH to a real VPS (~150 ms per round trip):
a pooled connection opens a channel and waits for its confirmation, sends the exec request and waits for
its reply (executors/ssh_running.py), then the answer travels back — 2.5 round trips, 2 before the command
and half of one after. On a real fleet each site's PHP runs on its own server; here all ten share these two
cores, which the concurrent runs contend for. The approved plan — trash the post titled
「フリート計測」, whose ID differs on every site (a lookup) — runs through the real engine and agent turn
(the lookup read, the approval text read on each site and compared with the approved one, the undo
capture, the command): the canary first, then the other nine with concurrency 5, against the same with
concurrency 1. Each measurement is taken twice, interleaved; the post is put back between runs (not
timed). Prints, on stdout, exactly:
  BENCH fleet_speedup <ratio> x goal=>=3.5
(the median one-after-another time over the median concurrent time). Details go to stderr.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.sandbox import own_sandbox
from bench.support.timing import check, log
from wp_agent.agent.ports import MemoryAuditLog, NoApprovals
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.session_state import SessionState
from wp_agent.cli.wiring import build_local_deps
from wp_agent.config import CliSettings
from wp_agent.executors.port import CommandResult
from wp_agent.executors.sandbox import SandboxWpCli
from wp_agent.fleet.engine import FleetEngine, FleetRequest
from wp_agent.fleet.runs import SiteAccess
from wp_agent.models.fleet import FleetStatus, FleetStep, SiteResult, SiteStatus
from wp_agent.models.target import Role
from wp_agent.sandbox import SandboxSite

SITES = 10
ROUND_TRIP_SECONDS = 0.150
BEFORE, AFTER = 2.0, 0.5  # round trips a command over SSH waits before it runs, and for its answer
TITLE = "フリート計測"
LOOKUP = f"post list --title={TITLE} --post_type=post --post_status=publish --field=ID"
STEP = FleetStep(
    tool_use_id="toolu_bench",
    command="post delete {post}",
    lookups={"post": LOOKUP},
    reason="計測",
    category="destructive",
    summary_ja="投稿（ID: {post}）をゴミ箱へ移動します",
    impact_ja="ゴミ箱から復元できますが、サイトからは見えなくなります。",
)


class FarAway:
    """WP-CLI on a site over SSH: each command waits its round trips (module docstring)."""

    def __init__(self, inner: SandboxWpCli) -> None:
        self._inner = inner

    @property
    def max_concurrency(self) -> int:
        return self._inner.max_concurrency

    @property
    def simulated(self) -> bool:
        return False

    def run(self, argv: Sequence[str]) -> CommandResult:
        time.sleep(BEFORE * ROUND_TRIP_SECONDS)
        result = self._inner.run(argv)
        time.sleep(AFTER * ROUND_TRIP_SECONDS)
        return result

    def close(self) -> None:
        self._inner.close()


class BenchSites:
    def __init__(self, sites: dict[str, SandboxSite]) -> None:
        self._sites = sites
        self._settings = CliSettings(anthropic_api_key="bench")
        self.audit = MemoryAuditLog()
        self.recorded: list[tuple[str, SiteStatus]] = []

    def access(self, site: str) -> SiteAccess:
        return SiteAccess(role=Role.ADMIN, network_admin=True)

    def record(self, state: SessionState, result: SiteResult) -> None:
        self.recorded.append((state.session_id, result.status))

    def target_id(self, site: str) -> str:
        return f"bench:{site}"

    def run(self, site: str, state: SessionState) -> SessionState:
        wp = FarAway(SandboxWpCli(self._sites[site]))
        deps = build_local_deps(self._settings, model=_NoModel(), wp_cli=wp, audit=self.audit)  # type: ignore[arg-type]
        AgentRunner(deps, NoApprovals()).resume(state)
        return state


class _NoModel:
    def create(self, **_: object) -> object:
        raise RuntimeError("a site's run of an approved plan asks no model")


def _fleet(engine: FleetEngine, names: list[str], concurrency: int) -> float:
    request = FleetRequest(message="計測", sites=names, user_id="bench", concurrency=concurrency)
    started = time.perf_counter()
    report = engine.apply(request, [STEP], "bench")
    seconds = time.perf_counter() - started
    statuses = {r.site: r.status for r in report.results}
    check(report.status is FleetStatus.COMPLETED, "fleet", str(statuses))
    check(all(s is SiteStatus.COMPLETED for s in statuses.values()), "sites", str(statuses))
    return seconds


def _put_back(sites: dict[str, SandboxSite]) -> None:
    for site in sites.values():
        trashed = site.wp(
            "post", "list", f"--title={TITLE}", "--post_status=trash", "--field=ID"
        ).stdout.split()
        if trashed:
            site.wp("post", "update", *trashed, "--post_status=publish")


def main() -> None:
    with ExitStack() as stack:
        sites = {f"s{n:02d}": stack.enter_context(own_sandbox()) for n in range(SITES)}
        for number, site in enumerate(sites.values()):
            for _ in range(number):  # a different post ID on every site
                site.wp("post", "create", "--post_title=filler", "--post_status=draft")
            site.wp("post", "create", f"--post_title={TITLE}", "--post_status=publish")
        names = list(sites)
        engine = FleetEngine(BenchSites(sites))
        _fleet(engine, names, 5)  # PHP's caches, MariaDB's buffers
        one_by_one: list[float] = []
        side_by_side: list[float] = []
        for _ in range(2):
            _put_back(sites)
            one_by_one.append(_fleet(engine, names, 1))
            _put_back(sites)
            side_by_side.append(_fleet(engine, names, 5))
    med = statistics.median
    # The canary runs alone first, then nine sites five at a time (two rounds): at best 10 / 3 of the time.
    ceiling = SITES / (1 + -(-(SITES - 1) // 5))
    log(f"{SITES} sites, {ROUND_TRIP_SECONDS * 1000:.0f} ms per round trip: one after another {med(one_by_one):.1f} s, "
        f"concurrency 5 {med(side_by_side):.1f} s (runs {one_by_one} / {side_by_side}); the canary-first "
        f"ceiling is {ceiling:.2f}x")  # fmt: skip
    print(f"BENCH fleet_speedup {med(one_by_one) / med(side_by_side):.2f} x goal=>=3.5")


if __name__ == "__main__":
    main()
