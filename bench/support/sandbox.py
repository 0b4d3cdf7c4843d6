"""A sandbox WordPress of the benchmark's own (real WP-CLI, its own MariaDB, a temp directory)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from wp_agent.sandbox import SandboxSite


@contextmanager
def own_sandbox() -> Iterator[SandboxSite]:
    """Started and seeded on entry; its database stopped and its files removed on exit."""
    with tempfile.TemporaryDirectory(prefix="wp-agent-bench-") as directory:
        site = SandboxSite(Path(directory) / "sandbox")
        try:
            site.start()
            yield site
        finally:
            site.stop()
