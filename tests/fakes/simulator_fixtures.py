"""Helpers for tests that need a simulated WordPress site (the WP-CLI simulator on a temp dir).

Each test module defines its own small fixture, e.g.::

    @pytest.fixture
    def site(tmp_path: Path) -> SimSite:
        return SimSite.create(tmp_path)
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from wp_agent.simulator import SimResult, SiteStore, run_wp

_SIMULATOR_VARIABLES = ("WP_SIM_SITE", "WP_SIM_BOOTSTRAP_MS", "WP_SIM_NOW", "SHELL_PIPE")


def clean_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The current environment without simulator switches, plus `extra`."""
    env = {key: value for key, value in os.environ.items() if key not in _SIMULATOR_VARIABLES}
    env.update(extra or {})
    return env


@dataclass
class SimSite:
    """A seeded site in a WordPress-like directory, and ways to run `wp` against it."""

    root: Path
    store: SiteStore

    @classmethod
    def create(cls, directory: Path) -> SimSite:
        root = directory / "wordpress"
        root.mkdir(parents=True, exist_ok=True)
        store = SiteStore.for_wordpress_path(root)
        store.ensure()
        return cls(root=root, store=store)

    def wp(
        self, *args: str, stdin: str = "", env: Mapping[str, str] | None = None, tty: bool = False
    ) -> SimResult:
        """Run in-process (fast); the environment holds only `env`."""
        return run_wp([f"--path={self.root}", *args], env=dict(env or {}), stdin=stdin, tty=tty)

    def wp_subprocess(
        self, *args: str, env: Mapping[str, str] | None = None, timeout: float = 60.0
    ) -> subprocess.CompletedProcess[str]:
        """Run `python -m wp_agent.simulator` as a separate process, like the executors do."""
        return subprocess.run(
            [sys.executable, "-m", "wp_agent.simulator", f"--path={self.root}", *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=clean_environment(env),
            timeout=timeout,
            check=False,
        )
