"""How many spans of time overlapped at most (runs read from their audit records' timestamps)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime


def most_at_once(spans: Sequence[tuple[datetime, datetime]]) -> int:
    """The most spans open at one moment (one ending as another starts: not together)."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = most = 0
    for _, step in edges:
        running += step
        most = max(most, running)
    return most
