"""Lambda's execution environments (containers) for the in-process serverless stack.

Lambda runs an invocation in a container that serves one invocation at a time and stays warm for
later ones; an invocation that finds every container of its function busy gets a new one (a cold
start), and each container is a process of its own. Here a container is a fresh import of the
function's handler module — its lazily built runtime (and with it the api's Idempotency-Key helper)
is its own — with an SSH connection pool of its own (the executor's process-wide pool is per
container in Lambda). A request runs with its own container's runtime: the API's routes take it
per thread (wp_agent/http_api/routing.py).

Shared between containers here, unlike in Lambda: Python's logging configuration (process-wide;
Powertools reuses its configured logger), the boto3 client cache (clients hold no per-invocation
state, and moto is one backend anyway), the cached secrets, the API's routes and resolver
(wp_agent.http_api, imported once; they keep no request state of their own) and Powertools' current
event and Lambda context, which the resolver keeps at class level: two API requests resolved at the
same moment in two threads would see one of the two events. `SameRequestGate` lets API requests run
at the same moment only when they are the same request (the concurrent API tests send the same request
twice, a double click); different requests wait for each other.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from wp_agent.executors.ssh_pool import SshConnectionPool
from wp_agent.service.runtime import LazyRuntime


class SameRequestGate:
    """Lets threads in together only while they carry the same request; another request waits."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._inside: tuple[str, int] | None = None  # the request inside, and how many carry it

    @contextmanager
    def entered(self, request: dict[str, Any]) -> Iterator[None]:
        context = {k: v for k, v in request.get("requestContext", {}).items() if k != "requestId"}
        key = json.dumps({**request, "requestContext": context}, sort_keys=True, default=str)
        with self._changed:
            self._changed.wait_for(lambda: self._inside is None or self._inside[0] == key)
            self._inside = (key, (self._inside[1] if self._inside else 0) + 1)
        try:
            yield
        finally:
            with self._changed:
                assert self._inside is not None
                left = self._inside[1] - 1
                self._inside = (key, left) if left else None
                self._changed.notify_all()


@dataclass
class Container:
    module: ModuleType
    ssh_pool: SshConnectionPool
    invocations: int = 0


def _cold_start(module_name: str) -> Container:
    """The handler module executed anew (not the one in sys.modules), with a runtime of its own."""
    spec = importlib.util.find_spec(module_name)
    assert spec is not None, module_name
    assert spec.loader is not None, module_name
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pool = SshConnectionPool()
    shared = getattr(module, "runtime", None)
    if isinstance(shared, LazyRuntime):  # the function's settings class, with this container's pool
        setattr(module, "runtime", LazyRuntime(shared.settings_class, ssh_pool=pool))  # noqa: B010
    return Container(module=module, ssh_pool=pool)


@dataclass
class FunctionContainers:
    """One function's containers: a warm idle one serves the next invocation, else a new one starts."""

    module_name: str
    started: list[Container] = field(default_factory=list)  # every container, in cold-start order
    _idle: list[Container] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def lambda_handler(self, event: dict[str, Any], context: Any) -> Any:
        container = self._acquire()
        try:
            container.invocations += 1
            return container.module.lambda_handler(event, context)
        finally:
            with self._lock:
                self._idle.append(container)

    def _acquire(self) -> Container:
        with self._lock:
            if self._idle:
                return self._idle.pop()  # the most recently used one, as Lambda tends to
        container = _cold_start(self.module_name)
        with self._lock:
            self.started.append(container)
        return container

    def close(self) -> None:
        """The containers are gone: their SSH connections close (the rig counts open ones)."""
        with self._lock:
            containers, self._idle = list(self.started), []
        for container in containers:
            container.ssh_pool.close_all()
