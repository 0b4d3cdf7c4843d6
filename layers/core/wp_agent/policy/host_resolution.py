"""Whether a host name the server would fetch from resolves to public addresses, asked when the policy
decides (a name that resolves inward — to the cloud metadata address, a private network, loopback — or
does not resolve at all makes the write wait for approval).

The answer is only as good as the moment: a name can be pointed elsewhere later (DNS rebinding).
WordPress's own fetches (wp_safe_remote_*) refuse loopback and private addresses again when they
connect; the agent's own downloads (media import) pin the address they checked.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from concurrent.futures import TimeoutError as FutureTimeout

from wp_agent.media.safe_download import is_public_address

# A host's addresses, or None when it does not resolve (or not in time).
HostResolver = Callable[[str], Sequence[str] | None]

MAX_HOSTS = 20  # per command: more names than this wait for approval without being looked up
_TIMEOUT_SECONDS = 3.0
_CACHE_SECONDS = 60.0


class _Lookups:
    """The threads that ask the system, and a minute's answers."""

    def __init__(self) -> None:
        self.cache: dict[str, tuple[float, tuple[str, ...] | None]] = {}
        self.start()

    def start(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="wp-agent-dns")
        self.lock = threading.Lock()


_lookups = _Lookups()
# A forked process has none of the pool's threads (their idle count would queue lookups no thread ever
# runs) and may hold a lock one of them had: it starts both afresh (its cached answers stay true).
os.register_at_fork(after_in_child=_lookups.start)


def system_resolver(host: str) -> tuple[str, ...] | None:
    """The system's answer for `host` (cached for a minute), or None."""
    now = time.monotonic()
    with _lookups.lock:
        cached = _lookups.cache.get(host)
    if cached is not None and now - cached[0] < _CACHE_SECONDS:
        return cached[1]
    future = _lookups.pool.submit(
        socket.getaddrinfo, host, 443, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    try:
        addresses: tuple[str, ...] | None = tuple(
            sorted({str(info[4][0]) for info in future.result(_TIMEOUT_SECONDS)})
        )
    except (OSError, FutureTimeout, UnicodeError):
        addresses = None
    with _lookups.lock:
        if len(_lookups.cache) > 1_024:
            _lookups.cache.clear()
        _lookups.cache[host] = (now, addresses or None)
    return addresses or None


def static_resolver(answers: Mapping[str, Sequence[str]]) -> HostResolver:
    """A resolver that knows only `answers` (tests, and `wp-agent check` against a recorded zone)."""
    table = {name.lower().rstrip("."): tuple(addresses) for name, addresses in answers.items()}
    return lambda host: table.get(host.lower().rstrip("."))


def not_public(hosts: Iterable[str], resolver: HostResolver) -> list[str]:
    """The names among `hosts` that do not resolve, or resolve to any address that is not public. The
    names are asked side by side, all within one deadline: a name not answered by then counts as not
    resolving (a decision never waits on DNS for longer than that)."""
    names = sorted(set(hosts))
    if not names:
        return []
    if len(names) > MAX_HOSTS:
        return names
    if len(names) == 1:
        return [] if _resolves_publicly(resolver(names[0])) else names
    asking = ThreadPoolExecutor(max_workers=min(len(names), 8), thread_name_prefix="wp-agent-hosts")
    try:
        answers = {name: asking.submit(resolver, name) for name in names}
        done, _ = wait(answers.values(), timeout=_TIMEOUT_SECONDS + 1)
        return [
            name
            for name, answer in answers.items()
            if answer not in done or answer.exception() is not None or not _resolves_publicly(answer.result())
        ]
    finally:
        asking.shutdown(wait=False, cancel_futures=True)  # a late answer is not waited for


def _resolves_publicly(addresses: Sequence[str] | None) -> bool:
    return bool(addresses) and all(_public(address) for address in addresses or ())


def _public(address: str) -> bool:
    try:
        return is_public_address(ipaddress.ip_address(address.split("%", 1)[0]))
    except ValueError:
        return False
