"""Reads of one moment, each asked of the site once.

The before-images of all the writes of one reply are read together (and so are their after-images):
a read several images need runs once, and the reads of some meta keys of one object become one read
of all of them — or are served by a read of all its meta — and each image gets the rows of its own
keys back. The fields of several posts (`post get <id> --format=json` each) are one `post list` of
those IDs beside one list of which of them have a password; a post neither list shows (a type or
status `post list` leaves out, or no such post) is read with its own `post get`. Every read still goes
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
    folds = _post_folds(unique)
    folded = {get for fold in folds for get in fold.gets.values()}
    plain = [key for key in unique if key not in folded]
    runs = [_with_keys(rest, unique[rest]) for rest in plain] + [r for fold in folds for r in fold.reads()]
    if not runs:
        return []
    ran = _run_all(runs, read, workers)
    answers = dict(zip(plain, ran[: len(plain)], strict=True))
    at = len(plain)
    missed: list[tuple[str, ...]] = []
    for fold in folds:
        served = fold.serve(ran[at], ran[at + 1])
        at += 2
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
# What stands for a password in a post's fields served from the lists: any value masks as a secret,
# as the password `post get` would show does (images.py refuses an image that held one).
_HAS_A_PASSWORD = "(password set)"  # noqa: S105 (a marker, not a password)


@dataclass(frozen=True)
class _PostFold:
    """`post get <id> --format=json` of several posts of one site, served by two lists."""

    site: tuple[str, ...]  # the reads' `--url=` words
    gets: dict[str, tuple[str, ...]]  # post ID → the read it serves

    def _list(self, *only: str) -> list[str]:
        ids = ",".join(self.gets)
        return [
            "post", "list", f"--post__in={ids}", "--post_type=any", f"--post_status={ALL_POST_STATUSES}",
            "--orderby=ID", "--order=ASC", f"--posts_per_page={len(self.gets)}", "--suppress_filters=1",
            *only, *self.site,
        ]  # fmt: skip

    def reads(self) -> list[list[str]]:
        fields = self._list(f"--fields={','.join(_POST_LIST_FIELDS)}", "--format=json")
        return [fields, self._list("--has_password=1", "--format=ids")]

    def serve(self, fields: Answer, protected: Answer) -> dict[tuple[str, ...], Answer]:
        """The answers the lists give: a post they show, as `post get` shows it; nothing for the others."""
        if not _ok(fields) or not _ok(protected):
            return {}
        try:
            rows = json.loads(fields.stdout or "[]")
        except ValueError:
            return {}
        with_password = set(protected.stdout.split())
        if not isinstance(rows, list) or not with_password <= set(self.gets):
            return {}
        served: dict[tuple[str, ...], Answer] = {}
        for row in rows:
            post_id = str(row.get("ID")) if isinstance(row, dict) else ""
            if post_id not in self.gets or set(row) != set(_POST_LIST_FIELDS):
                return {}  # not what was asked: every post is read on its own
            shown = {**row, "post_password": _HAS_A_PASSWORD if post_id in with_password else ""}
            stdout = json.dumps(shown, ensure_ascii=False)
            served[self.gets[post_id]] = CommandResult(stdout, "", 0, fields.duration_ms, fields.truncated)
        return served


def _ok(answer: Answer) -> TypeGuard[CommandResult]:
    return isinstance(answer, CommandResult) and answer.ok and not answer.truncated


def _post_folds(unique: dict[tuple[str, ...], list[str] | None]) -> list[_PostFold]:
    """The `post get <id> --format=json [--url=…]` reads, by site, where a site has more than one."""
    by_site: dict[tuple[str, ...], dict[str, tuple[str, ...]]] = {}
    for argv in unique:
        if (
            len(argv) >= 4
            and argv[:2] == ("post", "get")
            and argv[2].isascii()
            and argv[2].isdigit()
            and argv[3] == "--format=json"
            and all(word.startswith("--url=") for word in argv[4:])
        ):
            by_site.setdefault(argv[4:], {})[str(int(argv[2]))] = argv
    return [_PostFold(site, gets) for site, gets in by_site.items() if len(gets) > 1]


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
