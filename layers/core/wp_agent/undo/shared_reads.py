"""Reads of one moment, each asked of the site once.

The before-images of all the writes of one reply are read together (and so are their after-images):
a read several images need runs once, and the reads of some meta keys of one object become one read
of all of them — or are served by a read of all its meta — and each image gets the rows of its own
keys back. The fields of several posts (`post get <id> --format=json` each) are one `post list` of
those IDs beside one list of which of them have a password, and those of several terms of one
taxonomy one `term list --include`; an object the lists leave out (a type or status `post list`
leaves out, or no such object) is read with its own get. Every read still goes
through the caller's `read` (policy-checked, site-scoped)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeGuard

from wp_agent.executors.port import CommandResult
from wp_agent.masking.secret_names import is_secret_key
from wp_agent.policy.effects.content import ALL_POST_STATUSES
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
    if keys and any(is_secret_key(key) for key in keys[0].removeprefix(_KEYS).split(",")):
        return None  # the policy refuses a read naming it: that refusal must stay its image's alone
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
    folds = _folds(unique)
    folded = {get for fold in folds for get in fold.gets.values()}
    plain = [key for key in unique if key not in folded]
    fold_reads = [fold.reads() for fold in folds]
    runs = [_with_keys(rest, unique[rest]) for rest in plain] + [
        r for its_reads in fold_reads for r in its_reads
    ]
    if not runs:
        return []
    ran = _run_all(runs, read, workers)
    answers = dict(zip(plain, ran[: len(plain)], strict=True))
    at = len(plain)
    missed: list[tuple[str, ...]] = []
    for fold, its_reads in zip(folds, fold_reads, strict=True):
        served = fold.serve(ran[at : at + len(its_reads)])
        at += len(its_reads)
        answers.update(served)
        missed += [get for get in fold.gets.values() if get not in served]
    answers.update(zip(missed, _run_all([list(get) for get in missed], read, workers), strict=True))
    results = []
    for argv in reads:
        meta = _meta_read(argv)
        if meta is None:
            results.append(answers[tuple(argv)])
        else:
            rest, keys = meta
            results.append(_rows_of(answers[rest], keys))
    return results


def _run_all(runs: Sequence[list[str]], read: Read, workers: int) -> list[Answer]:
    if not runs:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(runs)))) as pool:
        return list(pool.map(_answer(read), runs))


# The fields `post get --format=json` gives that a `post list` may show (the password is a secret
# field there: whether a post has one is read apart, with --has_password).
_POST_LIST_FIELDS = (
    "ID", "post_author", "post_date", "post_date_gmt", "post_content", "post_title", "post_excerpt",
    "post_status", "comment_status", "ping_status", "post_name", "to_ping", "pinged", "post_modified",
    "post_modified_gmt", "post_content_filtered", "post_parent", "guid", "menu_order", "post_type",
    "post_mime_type", "comment_count",
)  # fmt: skip
_TERM_LIST_FIELDS = (
    "term_id", "name", "slug", "term_group", "term_taxonomy_id", "taxonomy", "description", "parent", "count",
    "filter",
)  # fmt: skip
# What stands for a password in a post's fields served from the lists: any value masks as a secret,
# as the password `post get` would show does (images.py refuses an image that held one).
_HAS_A_PASSWORD = "(password set)"  # noqa: S105 (a marker, not a password)


@dataclass(frozen=True)
class _Fold:
    """`post get <id> --format=json` (or `term get <taxonomy> <id> …`) of several objects of one site
    (and taxonomy), served by lists of those IDs: what a list shows comes back as the get shows it."""

    get: tuple[str, ...]  # the gets' words before the ID: ("post", "get") or ("term", "get", taxonomy)
    site: tuple[str, ...]  # their `--url=` words
    gets: dict[str, tuple[str, ...]]  # object ID → the read it serves

    def reads(self) -> list[list[str]]:
        ids, count = ",".join(self.gets), len(self.gets)
        if self.get[0] == "term":
            fields = f"--fields={','.join(_TERM_LIST_FIELDS)}"
            return [
                [
                    "term",
                    "list",
                    self.get[2],
                    f"--include={ids}",
                    "--hide_empty=0",
                    fields,
                    "--format=json",
                    *self.site,
                ]
            ]
        posts = [
            "post", "list", f"--post__in={ids}", "--post_type=any", f"--post_status={ALL_POST_STATUSES}",
            "--orderby=ID", "--order=ASC", f"--posts_per_page={count}", "--suppress_filters=1",
        ]  # fmt: skip
        return [
            [*posts, f"--fields={','.join(_POST_LIST_FIELDS)}", "--format=json", *self.site],
            [*posts, "--has_password=1", "--format=ids", *self.site],
        ]

    def serve(self, answers: Sequence[Answer]) -> dict[tuple[str, ...], Answer]:
        """The answers the lists give; nothing for an object they leave out, or when they failed."""
        listed, *protected = answers
        if not _ok(listed) or not all(_ok(a) for a in protected):
            return {}
        with_password = {word for a in protected if _ok(a) for word in a.stdout.split()}  # _ok: for mypy
        id_field, fields = (
            ("term_id", _TERM_LIST_FIELDS) if self.get[0] == "term" else ("ID", _POST_LIST_FIELDS)
        )
        try:
            rows = json.loads(listed.stdout or "[]")
        except ValueError:
            return {}
        if not isinstance(rows, list) or not with_password <= set(self.gets):
            return {}
        served: dict[tuple[str, ...], Answer] = {}
        for row in rows:
            object_id = str(row.get(id_field)) if isinstance(row, dict) else ""
            if object_id not in self.gets or set(row) != set(fields):
                return {}  # not what was asked: every object is read on its own
            shown = (
                row
                if self.get[0] != "post"
                else {**row, "post_password": _HAS_A_PASSWORD if object_id in with_password else ""}
            )
            stdout = json.dumps(shown, ensure_ascii=False)
            served[self.gets[object_id]] = CommandResult(stdout, "", 0, listed.duration_ms, listed.truncated)
        return served


def _ok(answer: Answer) -> TypeGuard[CommandResult]:
    return isinstance(answer, CommandResult) and answer.ok and not answer.truncated


def _folds(unique: dict[tuple[str, ...], list[str] | None]) -> list[_Fold]:
    """The `post get <id> --format=json [--url=…]` and `term get <taxonomy> <id> --format=json
    [--url=…]` reads, by site (and taxonomy), where there is more than one."""
    grouped: dict[tuple[tuple[str, ...], tuple[str, ...]], dict[str, tuple[str, ...]]] = {}
    for argv in unique:
        at = 2 if argv[:2] == ("post", "get") else 3 if argv[:2] == ("term", "get") else None
        if (
            at is not None
            and len(argv) > at + 1
            and argv[at].isascii()
            and argv[at].isdigit()
            and argv[at + 1] == "--format=json"
            and all(word.startswith("--url=") for word in argv[at + 2 :])
        ):
            grouped.setdefault((argv[:at], argv[at + 2 :]), {})[str(int(argv[at]))] = argv
    return [_Fold(get, site, gets) for (get, site), gets in grouped.items() if len(gets) > 1]


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
