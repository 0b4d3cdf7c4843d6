"""`sanitize_title()` and the uniqueness rules WordPress applies to post and term slugs."""

from __future__ import annotations

import re
from collections.abc import Callable

_TAG = re.compile(r"<[^>]*>")
_ENTITY = re.compile(r"&.+?;")
_STRAY_PERCENT = re.compile(r"%(?![a-fA-F0-9]{2})")


def sanitize_title(title: str) -> str:
    """`sanitize_title_with_dashes( $title, '', 'save' )`: multibyte characters become %xx."""
    text = _TAG.sub("", title)
    text = _STRAY_PERCENT.sub("", text).lower()
    encoded: list[str] = []
    for char in text:
        if ord(char) < 128:
            encoded.append(char)
        else:
            encoded.extend(f"%{byte:02x}" for byte in char.encode("utf-8"))
    text = "".join(encoded).lower()
    text = _ENTITY.sub("", text)
    text = text.replace(".", "-")
    text = re.sub(r"[^%a-z0-9 _-]", "", text)
    text = re.sub(r"\s+", "-", text)
    text = re.sub(r"-+", "-", text)
    return text.strip("-")


def sanitize_user(login: str) -> str:
    """`sanitize_user( $login )` (non-strict): strips tags and entities, collapses spaces."""
    text = _TAG.sub("", login)
    text = re.sub(r"%([a-fA-F0-9][a-fA-F0-9])", "", text)
    text = _ENTITY.sub("", text)
    return re.sub(r"\s+", " ", text).strip()


def unique_slug(slug: str, taken: Callable[[str], bool]) -> str:
    """Append -2, -3, ... until `taken` says the slug is free (wp_unique_post_slug style)."""
    if not taken(slug):
        return slug
    suffix = 2
    while taken(f"{slug}-{suffix}"):
        suffix += 1
    return f"{slug}-{suffix}"
