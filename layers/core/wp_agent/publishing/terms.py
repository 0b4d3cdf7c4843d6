"""Matching the article's categories (slugs) and tags (names) against the site's existing terms."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

Taxonomy = Literal["category", "post_tag"]
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class SiteTerm:
    term_id: int
    name: str
    slug: str


@dataclass(frozen=True)
class WantedTerm:
    """One category or tag of the article; `label` is what the caller wrote."""

    taxonomy: Taxonomy
    label: str

    @property
    def key(self) -> str:
        return slug_key(self.label)


def slug_key(value: str) -> str:
    """A comparison key close to WordPress's `sanitize_title()`: decoded, lower-case, spaces as '-'.

    WordPress stores non-ASCII slugs percent-encoded ("ai%e6%b4%bb…"), so both sides are decoded.
    """
    return _SPACES.sub("-", unquote(value).strip().lower())


def parse_term_list(stdout: str) -> list[SiteTerm]:
    """`wp term list <taxonomy> --fields=term_id,name,slug --format=json`."""
    rows = json.loads(stdout or "[]")
    if not isinstance(rows, list):
        raise TypeError("term list did not return a JSON array")
    return [SiteTerm(int(row["term_id"]), str(row["name"]), str(row["slug"])) for row in rows]


def find_term(wanted: WantedTerm, terms: Iterable[SiteTerm]) -> SiteTerm | None:
    """Categories are slugs (a name is accepted as a fallback); tags are names (or slugs).

    Names compare case-insensitively, as MySQL's default collation does for `term_exists()`.
    """
    candidates = list(terms)
    # Of several alike (two publishes at once can each create the term), the oldest: every caller
    # settles on the same one.
    by_slug = min((t for t in candidates if slug_key(t.slug) == wanted.key), key=_age, default=None)
    by_name = min(
        (t for t in candidates if t.name.casefold() == wanted.label.casefold()), key=_age, default=None
    )
    if wanted.taxonomy == "category":
        return by_slug or by_name
    return by_name or by_slug


def _age(term: SiteTerm) -> int:
    return term.term_id


def wanted_terms(taxonomy: Taxonomy, labels: Sequence[str] | None) -> list[WantedTerm]:
    """The article's labels, without entries that WordPress would treat as the same term."""
    unique: dict[str, WantedTerm] = {}
    for label in labels or ():
        term = WantedTerm(taxonomy, label)
        unique.setdefault(term.key, term)
    return list(unique.values())
