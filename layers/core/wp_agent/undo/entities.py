"""The kinds of things a command changes, as data: how to read one with read-only WP-CLI commands,
how to tell that it does not exist, and which WP-CLI commands set it back to an earlier state.

A snapshot is plain JSON (None: the thing does not exist). Restoring compares the before-image with
the current state and emits only what differs, so a kind works for every command that touches it.
"""

from __future__ import annotations

from wp_agent.undo.content_kinds import COMMENT, POST, TERM, TERMS
from wp_agent.undo.kind import CaptureError, Kind, Read, scoped, value_args
from wp_agent.undo.site_kinds import (
    EXTENSION,
    MENU,
    MENU_ITEMS,
    META,
    OPTION,
    PLUGINS,
    SITE,
    THEME,
    USER,
)

__all__ = ["KINDS", "CaptureError", "Kind", "Read", "scoped", "value_args"]

KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        POST,
        COMMENT,
        TERM,
        TERMS,
        OPTION,
        USER,
        META,
        MENU,
        MENU_ITEMS,
        PLUGINS,
        THEME,
        SITE,
        EXTENSION,
    )
}
