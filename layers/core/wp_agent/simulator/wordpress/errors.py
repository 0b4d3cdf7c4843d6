"""`WP_Error`: the failures WordPress functions return instead of raising."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WPError:
    code: str
    message: str
