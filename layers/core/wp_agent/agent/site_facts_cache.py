"""The answers of the site-fact reads (agent/site_facts.py), kept a few minutes per target and site, so
runs that follow each other do not read them again. One cache per process: a CLI run, the MCP server,
the eval harness, a warm Lambda container (AwsRuntime keeps it). Only a complete set is kept — a read
that did not run is tried again by the next run — and the local time is never cached: the text is
made for each run from the clock."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from wp_agent.agent.site_facts import Argv, FactsPlan, ReadAnswer

MAX_ENTRIES = 256  # a Lambda container serves many targets; the oldest entries go first
_Key = tuple[str, FactsPlan]


class SiteFactsCache:
    def __init__(self, ttl_seconds: float = 300.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl_seconds  # WP_AGENT_SITE_FACTS_TTL_SECONDS; 0 keeps nothing
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[_Key, tuple[float, dict[Argv, ReadAnswer]]] = {}

    def get(self, target_id: str, plan: FactsPlan) -> dict[Argv, ReadAnswer] | None:
        """The answers read for this target and plan less than the time to live ago, if any."""
        with self._lock:
            entry = self._entries.get((target_id, plan))
        if entry is None or self._clock() - entry[0] >= self._ttl:
            return None
        return dict(entry[1])

    def put(self, target_id: str, plan: FactsPlan, answers: Mapping[Argv, ReadAnswer]) -> None:
        """Keep the answers when every planned read ran (whatever it answered)."""
        if self._ttl <= 0 or any(argv not in answers for argv in plan.reads):
            return
        with self._lock:
            self._entries.pop((target_id, plan), None)
            self._entries[(target_id, plan)] = (self._clock(), dict(answers))
            while len(self._entries) > MAX_ENTRIES:
                del self._entries[next(iter(self._entries))]
