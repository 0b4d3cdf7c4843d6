"""Patterns that say what a whole value looks like: a slug, an ID, a date, a site name.

Python's `re.match(r"^…$")` accepts a value with one more newline at its end (`$` matches before a
final newline), and `\\d` takes every script's digits (`١٢٣`, `１２３`). A validator built with
`whole()` matches the entire value (fullmatch) with ASCII classes only, and carries sample values it
accepts: tests/unit/test_whole_values.py feeds every registered validator its samples with line
ends and other scripts' digits added and expects each refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["REGISTERED", "WholeValue", "whole"]


@dataclass(frozen=True)
class WholeValue:
    """A pattern that must match a whole value (see the module docstring)."""

    pattern: re.Pattern[str]
    samples: tuple[str, ...]

    def fits(self, value: str) -> bool:
        return self.pattern.fullmatch(value) is not None

    def parts(self, value: str) -> re.Match[str] | None:
        """The match of the whole value, for its groups; None when it does not fit."""
        return self.pattern.fullmatch(value)


REGISTERED: list[WholeValue] = []


def whole(regex: str, *samples: str, flags: int = 0) -> WholeValue:
    """A validator of whole values; `regex` is written without anchors, `samples` are values it takes."""
    if regex.startswith("^") or regex.endswith("$"):
        raise ValueError(f"write the pattern without ^ and $ (it always matches the whole value): {regex}")
    if not samples:
        raise ValueError(f"a validator needs sample values it accepts: {regex}")
    validator = WholeValue(re.compile(regex, flags | re.ASCII), samples)
    refused = [s for s in samples if not validator.fits(s)]
    if refused:
        raise ValueError(f"the samples {refused} do not fit {regex}")
    REGISTERED.append(validator)
    return validator
