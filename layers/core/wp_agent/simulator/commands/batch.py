"""WP-CLI's reporting for commands that act on several objects.

`CommandWithDBObject::_update/_delete` (wp-cli/entity-command src/WP_CLI/CommandWithDBObject.php):
each object gets "Success: <msg>" or "Warning: <msg>", and the exit status is the status of the
*last* object, so `wp post update 47 45 ...` (47 missing) exits 0 while `wp post update 45 47`
exits 1. `Utils\\report_batch_operation_results` (wp-cli/wp-cli php/utils.php) ends plugin,
theme, term, menu and media batches with "Success: Verbed N of M nouns." or an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Literal

from wp_agent.simulator.output import Output

Outcome = tuple[Literal["success", "error"], str]


def run_each(out: Output, targets: Iterable[str], action: Callable[[str], Outcome]) -> None:
    """Report every target; exit with the last target's status (0 when there were none)."""
    status = 0
    for target in targets:
        kind, message = action(target)
        if kind == "success":
            out.success(message)
            status = 0
        else:
            out.warning(message)
            status = 1
    out.halt(status)


def past_tense_verb(verb: str) -> str:
    """`WP_CLI\\Utils\\past_tense_verb`."""
    if verb == "reset":
        return "reset"
    last = verb[-1:]
    if last == "e":
        stem = verb[:-1]
    elif last == "y" and not re.search(r"[aeiou]y$", verb):
        stem = verb[:-1] + "i"
    elif re.match(r"^[^aeiou]*[aeiou][^aeiouhwxy]$", verb):
        stem = verb + last
    else:
        stem = verb
    return stem + "ed"


def report_batch_operation_results(
    out: Output, noun: str, verb: str, total: int, successes: int, failures: int, skips: int | None = None
) -> None:
    plural = noun + "s"
    past = past_tense_verb(verb)
    upper = past[:1].upper() + past[1:]
    if failures:
        detail = (
            "" if skips is None else f" ({failures} failed" + (f", {skips} skipped" if skips else "") + ")"
        )
        if successes:
            out.error(f"Only {past} {successes} of {total} {plural}{detail}.")
        out.error(f"No {plural} {past}{detail}.")
    skipped = f" ({skips} skipped)" if skips else ""
    if successes or skips:
        out.success(f"{upper} {successes} of {total} {plural}{skipped}.")
    else:
        label = plural if total > 1 else noun
        out.success(f"{label[:1].upper() + label[1:]} already {past}.")
