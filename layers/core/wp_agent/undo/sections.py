"""Images read in parts: a command reads only the sections of a thing it changes (a post's fields,
its terms, one meta key…), which keeps the before-image to one read for most writes.

A sectioned image is a dict: "fields", "terms", "roles"… and "meta" ({key: [values]}). When only
some meta keys were read, "meta_keys" lists them: a key listed but not in "meta" did not exist. Without
"meta_keys", "meta" holds every key. When several commands of a run touch one thing, their images
combine section by section: the run's before-image takes each section from the first command that read
it, the after-image from the last one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from wp_agent.executors.port import CommandResult
from wp_agent.undo.kind import Parts, json_of, meta_rows

META = "meta"
META_KEY = "meta:"  # prefix of a part that reads one meta key: "meta:views"


def meta_keys(parts: Parts) -> list[str] | None:
    """The meta keys the parts read (None: all of them, or no meta part at all)."""
    if parts is None or META in parts:
        return None
    return [p.removeprefix(META_KEY) for p in parts if p.startswith(META_KEY)]


def wants(parts: Parts, section: str) -> bool:
    if parts is None:
        return True
    if section == META:
        return any(p == META or p.startswith(META_KEY) for p in parts)
    return section in parts


def fields_and_meta_reads(parts: Parts, get: list[str], meta_list: list[str]) -> list[list[str]]:
    """The reads `fields_and_meta` parses, in its order: `get` for "fields"; `meta_list` for "meta",
    narrowed to the keys the parts name (`--keys=`)."""
    reads = [get] if wants(parts, "fields") else []
    if wants(parts, META):
        keys = meta_keys(parts)
        only = [f"--keys={','.join(keys)}"] if keys else []
        reads.append([*meta_list, *only, "--format=json", "--unserialize"])
    return reads


def fields_and_meta(
    parts: Parts, results: Sequence[CommandResult], what: str, names: Sequence[str]
) -> tuple[dict[str, Any], dict[str, Any], Iterator[CommandResult]]:
    """The "fields" and "meta" sections of an image from the reads of `fields_and_meta_reads` (each
    only when the parts ask for it): the image, the raw fields read, and the results still to parse."""
    image: dict[str, Any] = {}
    raw: dict[str, Any] = {}
    pending = iter(results)
    if wants(parts, "fields"):
        raw = json_of(next(pending), what) or {}
        image["fields"] = {name: str(raw.get(name, "")) for name in names}
    if wants(parts, META):
        image[META] = meta_rows(json_of(next(pending), f"{what} のメタ"), f"{what} のメタ")
        if (keys := meta_keys(parts)) is not None:
            image["meta_keys"] = sorted(keys)
    return image, raw, pending


def covering(first: Parts, second: Parts) -> list[str] | None:
    """The parts two reads of one thing cover together (None: the whole thing)."""
    if first is None or second is None:
        return None
    parts = {*first, *second}
    if META in parts:
        parts = {p for p in parts if not p.startswith(META_KEY)}
    return sorted(parts)


def earliest(first: Any, later: Any) -> Any:
    """The before-image of a run: every section as the first command that read it saw it."""
    if not isinstance(first, dict) or not isinstance(later, dict):
        return first  # None: the thing did not exist before the run (it was created in it)
    return _combine(first, later)


def latest(earlier: Any, last: Any) -> Any:
    """The after-image of a run: every section as the last command that read it left it."""
    if not isinstance(earlier, dict) or not isinstance(last, dict):
        return last  # None: the run deleted it; or it was created in the run
    return _combine(last, earlier)


def _combine(primary: dict[str, Any], secondary: dict[str, Any]) -> dict[str, Any]:
    """`primary`'s sections, completed with the sections only `secondary` read."""
    merged = {k: v for k, v in primary.items() if k != "meta_keys"}
    for section, value in secondary.items():
        if section not in (META, "meta_keys"):
            merged.setdefault(section, value)
    if META not in secondary:
        if "meta_keys" in primary:
            merged["meta_keys"] = primary["meta_keys"]
        return merged
    if META not in primary:
        merged[META] = secondary[META]
        if "meta_keys" in secondary:
            merged["meta_keys"] = secondary["meta_keys"]
        return merged
    if "meta_keys" not in primary:  # primary read every key
        return merged
    known = set(primary["meta_keys"])
    meta = {k: v for k, v in secondary[META].items() if k not in known}
    meta.update(primary[META])
    merged[META] = dict(sorted(meta.items()))
    if "meta_keys" in secondary:
        merged["meta_keys"] = sorted(known | set(secondary["meta_keys"]))
    return merged


def whole(image: Any, sections: tuple[str, ...]) -> bool:
    """Was every section of the thing read (as it must be to create it again)?"""
    return isinstance(image, dict) and all(s in image for s in sections) and "meta_keys" not in image
