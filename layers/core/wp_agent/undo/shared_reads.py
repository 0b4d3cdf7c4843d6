"""Reads of one moment, each asked of the site once.

The before-images of all the writes of one reply are read together (and so are their after-images):
a read several images need runs once, and the reads of some meta keys of one object become one read
of all of them — or are served by a read of all its meta — and each image gets the rows of its own
keys back. Every read still goes through the caller's `read` (policy-checked, site-scoped)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from wp_agent.executors.port import CommandResult
from wp_agent.undo.kind import CaptureError, Read

# What a read gave: its result, or the CaptureError `read` raised (refused, or the site unreachable).
Answer = CommandResult | CaptureError

_KEYS = "--keys="


def _meta_read(argv: Sequence[str]) -> tuple[tuple[str, ...], list[str] | None] | None:
    """`<object> meta list <id> [--keys=a,b] … --format=json …`: (the read without --keys, the keys or
    None for all); None for any other read."""
    keys = [word for word in argv if word.startswith(_KEYS)]
    if len(argv) < 4 or list(argv[1:3]) != ["meta", "list"] or "--format=json" not in argv or len(keys) > 1:
        return None
    rest = tuple(word for word in argv if not word.startswith(_KEYS))
    return rest, keys[0].removeprefix(_KEYS).split(",") if keys else None


def read_all(reads: Sequence[list[str]], read: Read, *, workers: int = 1) -> list[Answer]:
    """The answer to each of `reads`, in order; reads that one read can serve run as that one read,
    all of them concurrently (up to `workers`). A failed read fails only the reads it serves."""
    unique: dict[tuple[str, ...], list[str] | None] = {}  # the reads to run: the meta keys merged
    for argv in reads:
        meta = _meta_read(argv)
        if meta is None:
            unique.setdefault(tuple(argv), None)
            continue
        rest, keys = meta
        if rest in unique:
            known = unique[rest]
            unique[rest] = None if known is None or keys is None else sorted({*known, *keys})
        else:
            unique[rest] = None if keys is None else sorted(keys)
    runs = [_with_keys(rest, keys) for rest, keys in unique.items()]
    if not runs:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(runs)))) as pool:
        answers = dict(zip(unique, pool.map(_answer(read), runs), strict=True))
    results = []
    for argv in reads:
        meta = _meta_read(argv)
        if meta is None:
            results.append(answers[tuple(argv)])
        else:
            rest, keys = meta
            results.append(_rows_of(answers[rest], keys))
    return results


def _answer(read: Read) -> Callable[[list[str]], Answer]:
    def run(argv: list[str]) -> Answer:
        try:
            return read(argv)
        except CaptureError as exc:
            return exc

    return run


def _with_keys(rest: tuple[str, ...], keys: list[str] | None) -> list[str]:
    if keys is None or _meta_read(rest) is None:
        return list(rest)
    at = rest.index("--format=json")  # where it stood in the reads asked for
    return [*rest[:at], f"{_KEYS}{','.join(keys)}", *rest[at:]]


def _rows_of(result: Answer, keys: list[str] | None) -> Answer:
    """The rows of `keys` from a merged meta read (all of it for None)."""
    if keys is None or isinstance(result, CaptureError) or not result.ok:
        return result
    try:
        rows = json.loads(result.stdout or "[]")
    except ValueError:
        return result
    if not isinstance(rows, list):
        return result
    mine = [row for row in rows if isinstance(row, dict) and row.get("meta_key") in keys]
    return CommandResult(
        json.dumps(mine, ensure_ascii=False),
        result.stderr,
        result.exit_code,
        result.duration_ms,
        result.truncated,
    )
