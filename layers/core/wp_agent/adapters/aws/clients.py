"""boto3 clients created on first use and reused across warm invocations."""

from __future__ import annotations

import threading
from functools import cache
from typing import Any

_lock = threading.Lock()


@cache
def _cached(service: str, kind: str) -> Any:
    import boto3

    with _lock:  # boto3's default session is not thread-safe while creating clients
        if kind == "resource":
            return boto3.resource(service)  # type: ignore[call-overload]
        return boto3.client(service)  # type: ignore[call-overload]


def client(service: str) -> Any:
    return _cached(service, "client")


def resource(service: str) -> Any:
    return _cached(service, "resource")


def reset_clients() -> None:
    """Forget cached clients (tests switching moto contexts; SnapStart restore)."""
    _cached.cache_clear()
