"""Policy categories and the decision shown to operators (`wp-agent check`)."""

from __future__ import annotations

from enum import StrEnum


class PolicyCategory(StrEnum):
    READ = "read"
    WRITE = "write"
    DESTRUCTIVE = "destructive"
    BLOCKED = "blocked"

    @property
    def rank(self) -> int:
        return _RANK[self]

    @property
    def decision(self) -> str:
        """allow | confirm | block — what happens to a command of this category."""
        if self is PolicyCategory.BLOCKED:
            return "block"
        if self is PolicyCategory.DESTRUCTIVE:
            return "confirm"
        return "allow"


_RANK = {
    PolicyCategory.READ: 0,
    PolicyCategory.WRITE: 1,
    PolicyCategory.DESTRUCTIVE: 2,
    PolicyCategory.BLOCKED: 3,
}
