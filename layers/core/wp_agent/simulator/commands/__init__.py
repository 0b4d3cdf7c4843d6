"""Simulated WP-CLI command families, one module per family."""

from __future__ import annotations


def load_all() -> None:
    """Import every command module so their `@command` registrations run."""
    from wp_agent.simulator.commands import (  # noqa: F401 - imported for registration
        cache,
        comment,
        core,
        help,
        media,
        menu,
        option,
        plugin,
        post,
        post_meta,
        post_term,
        rewrite,
        site,
        term,
        theme,
        types,
        user,
    )
