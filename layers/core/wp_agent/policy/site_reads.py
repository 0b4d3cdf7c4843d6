"""Reads a deciding step asks the site for, as data.

Some decisions depend on the site's state: is the post an update names an internal type (post_targets)?
is the post to delete already in the trash (approval_summary)? The deciding code never reads the site
itself: it asks a `SiteReads` for the stdout of a read-only argv. An answer not read yet is None and the
argv is noted in `requested` — the plan of reads; the turn runs them (policy-checked as reads, scoped to
the session's site, audited) and decides again with the answers, until nothing new is asked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

# Runs a read-only WP-CLI argv on the site: its stdout, or None when it failed, was refused or is not
# read yet. What deciding code is given; a SiteReads is one.
StateReader = Callable[[list[str]], str | None]
Argv = tuple[str, ...]


class SiteReads:
    """The site's answers known so far, by argv; asking for another notes it as requested."""

    def __init__(self, answers: Mapping[Argv, str | None] | None = None) -> None:
        self._answers = dict(answers or {})
        self.requested: list[Argv] = []

    def __call__(self, argv: list[str]) -> str | None:
        key = tuple(argv)
        if key in self._answers:
            return self._answers[key]
        if key not in self.requested:
            self.requested.append(key)
        return None


def not_read_yet(read: StateReader, argv: list[str]) -> bool:
    """Whether `read` has no answer to `argv` yet (its None means unknown, not "the read failed"). A
    plain function reader answers every read it is asked."""
    return isinstance(read, SiteReads) and tuple(argv) in read.requested
