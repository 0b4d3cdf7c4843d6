"""Reads a deciding step asks the site for, as data.

Some decisions depend on the site's state: is the post an update names an internal type (post_targets)?
is the post to delete already in the trash (approval_summary)? The deciding code never reads the site
itself: it asks a `SiteReads` for the stdout of a read-only argv. An answer not read yet is None and the
argv is noted in `requested` — the plan of reads. A decision made without an answer it asked for is not a
decision: `decide` (decide.py) answers `NeedsReads` then, and so does everything that decides with it.
The one loop around them is the caller's (agent/site_commands.decided_after_reads): it runs the reads
(policy-checked as reads, scoped to the session's site, audited) and decides again with the answers,
until nothing new is asked — deciding code itself never reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

# Runs a read-only WP-CLI argv on the site: its stdout, or None when it failed, was refused or is not
# read yet. What deciding code is given; a SiteReads is one.
StateReader = Callable[[list[str]], str | None]
Argv = tuple[str, ...]
Path = tuple[str, ...]


@dataclass(frozen=True)
class ReadsFirst:
    """What a deciding step reads of the site before it decides a command it is about: declared, so a
    command's row lists it (command_spec.py) and `decide` asks the step only about the commands it
    names (decide.py) — a read no row lists is never made."""

    step: str  # the step of `decide` that reads (decide.STEPS_JA)
    reads_ja: str  # what it reads and why, for people
    about: Callable[[Path], bool]  # the command paths it reads for


@dataclass(frozen=True)
class NeedsReads:
    """Not decided: the site must answer `reads` (read-only argvs) first; decide again with the answers."""

    reads: tuple[Argv, ...]


class SiteReads:
    """The site's answers known so far, by argv; asking for another notes it as requested. `final`: no
    more reads will be made — an unread answer is None as from a read that failed (never "not yet")."""

    def __init__(self, answers: Mapping[Argv, str | None] | None = None, *, final: bool = False) -> None:
        self._answers = dict(answers or {})
        self._final = final
        self.unanswered: list[Argv] = []  # every ask without an answer, in order (repeats too)

    @property
    def requested(self) -> list[Argv]:
        """The reads asked for without an answer: the plan of reads, each once."""
        return list(dict.fromkeys(self.unanswered))

    def __call__(self, argv: list[str]) -> str | None:
        key = tuple(argv)
        if key in self._answers or self._final:
            return self._answers.get(key)
        self.unanswered.append(key)
        return None


def not_read_yet(read: StateReader, argv: list[str]) -> bool:
    """Whether `read` has no answer to `argv` yet (its None means unknown, not "the read failed"). A
    plain function reader answers every read it is asked."""
    return isinstance(read, SiteReads) and tuple(argv) in read.unanswered
