"""What the site's facts cost a run: a run's first model request carries them (agent/site_facts.py).

Run from the repository root:  python bench/site_facts.py

On a sandbox WordPress of its own (real WP-CLI, a temp directory) with a zero-latency scripted model on
loopback and the real SDK, one-call runs are timed side by side, interleaved: without facts, with the
facts read (a cold cache), and with the facts from the cache. Prints, on stdout, exactly:
  BENCH site_facts_added_vs_one_read <x> x goal=<=2.5
  BENCH site_facts_cached_added_ms <ms> ms goal=<=5
  BENCH site_facts_concurrent_vs_sequential <x> x goal=>=1.5
The first: the time the facts add to a run (median with minus median without) over the time of one read
(`option get blogname`, median), so the figure holds on a faster or slower machine: the reads run side
by side, so they cost a few reads' time, not their sum. The third: the same reads one after another over
side by side. Details (milliseconds) go to stderr.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.sandbox import own_sandbox
from bench.support.timing import check, log, timed
from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_text
from wp_agent.agent import site_facts
from wp_agent.agent.model_client import AnthropicModelClient
from wp_agent.agent.ports import AgentDeps, InMemorySessionStore, MemoryAuditLog, NoApprovals, NoRateLimits
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.site_commands import SiteCommands
from wp_agent.agent.site_facts_cache import SiteFactsCache
from wp_agent.config import CliSettings
from wp_agent.executors.sandbox import SandboxWpCli
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.target import Role
from wp_agent.policy import CommandPolicy
from wp_agent.policy.site_scope import SiteScope
from wp_agent.telemetry import NoTelemetry

ROUNDS = 9
PLAN = site_facts.FactsPlan(site_url=None, wp_user=None)


def one_run(wp: SandboxWpCli, server: ScriptedAnthropicServer, facts: SiteFactsCache | None) -> float:
    server.enqueue(reply_text("はい"))
    settings = CliSettings(anthropic_api_key="bench", anthropic_base_url=server.base_url)
    deps = AgentDeps(
        model=AnthropicModelClient(settings),
        wp_cli=wp,
        policy=CommandPolicy(),
        audit=MemoryAuditLog(),
        limiter=NoRateLimits(),
        store=InMemorySessionStore(),
        settings=settings,
        site_facts=facts,
    )
    started = time.perf_counter()
    output = AgentRunner(deps, NoApprovals()).run(AgentInput(message="今日の日付は？"))
    seconds = time.perf_counter() - started
    check(output.success, "run", str(output.error))
    return seconds * 1000


def _one_after_another(wp: SandboxWpCli) -> None:
    for argv in PLAN.reads:
        wp.run(list(argv))


def _read_facts(reads: SiteCommands, scope: SiteScope) -> None:
    answers, _ = reads.facts(scope, "bench", PLAN)
    check(len(answers) == len(PLAN.reads), "facts", str(answers))


def main() -> None:
    with own_sandbox() as site:
        wp = SandboxWpCli(site)
        reads = SiteCommands(wp, NoRateLimits(), CommandPolicy(), NoTelemetry())
        scope = SiteScope(None, network_allowed=True, role=Role.ADMIN)  # the operator's own site
        without: list[float] = []
        cold: list[float] = []
        cached: list[float] = []
        one_read: list[float] = []
        sequential: list[float] = []
        side_by_side: list[float] = []
        warm = SiteFactsCache()
        with ScriptedAnthropicServer() as server:
            one_run(wp, server, warm)  # imports, the SDK client, PHP's caches; fills `warm`
            for _ in range(ROUNDS):
                without.append(one_run(wp, server, None))
                cold.append(one_run(wp, server, SiteFactsCache()))
                cached.append(one_run(wp, server, warm))
                one_read.append(
                    1000 * timed(lambda: check(wp.run(["option", "get", "blogname"]).ok, "read", ""))
                )
                sequential.append(1000 * timed(lambda: _one_after_another(wp)))
                side_by_side.append(1000 * timed(lambda: _read_facts(reads, scope)))
    med = statistics.median
    added, added_cached = med(cold) - med(without), med(cached) - med(without)
    log(
        f"median run: without facts {med(without):.0f} ms, facts read {med(cold):.0f} ms, facts cached "
        f"{med(cached):.0f} ms; one read {med(one_read):.0f} ms; {len(PLAN.reads)} reads one after another "
        f"{med(sequential):.0f} ms, side by side {med(side_by_side):.0f} ms; facts add {added:.0f} ms read, "
        f"{added_cached:.1f} ms cached"
    )
    print(f"BENCH site_facts_added_vs_one_read {added / med(one_read):.2f} x goal=<=2.5")
    print(f"BENCH site_facts_cached_added_ms {added_cached:.1f} ms goal=<=5")
    print(f"BENCH site_facts_concurrent_vs_sequential {med(sequential) / med(side_by_side):.2f} x goal=>=1.5")


if __name__ == "__main__":
    main()
