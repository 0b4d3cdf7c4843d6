"""WP_CLI_MODE=sandbox: the bundled WP-CLI simulator on a local sample site (labelled as simulated)."""

from __future__ import annotations

import sys
from pathlib import Path

from wp_agent.config import Settings
from wp_agent.executors.local import LocalWpCli
from wp_agent.executors.media_staging import MediaImporter

DEFAULT_SANDBOX_DIR = Path("~/.wp-agent/sandbox")
SITE_FILE_NAME = ".wp-sim-site.json"
SIMULATOR_COMMAND = (sys.executable, "-m", "wp_agent.simulator")


class SandboxWpCli(LocalWpCli):
    """A LocalWpCli whose `wp` is `python -m wp_agent.simulator`; the site is seeded on first use.

    `site` is a directory (the site file is `<dir>/.wp-sim-site.json`) or a path ending in `.json`.
    """

    def __init__(
        self,
        site: Path | str | None = None,
        *,
        timeout_seconds: float = 60.0,
        max_concurrency: int = 5,
        wp_user: str | None = None,
        media: MediaImporter | None = None,
    ) -> None:
        site_path = Path(site if site is not None else DEFAULT_SANDBOX_DIR).expanduser()
        if site_path.suffix == ".json":
            site_dir, site_file = site_path.parent, site_path
        else:
            site_dir, site_file = site_path, site_path / SITE_FILE_NAME
        site_dir.mkdir(parents=True, exist_ok=True)
        self.site_file = site_file
        super().__init__(
            site_dir,
            wp_cli_bin=SIMULATOR_COMMAND,
            timeout_seconds=timeout_seconds,
            max_concurrency=max_concurrency,
            simulated=True,
            # Explicit, so a stray WP_SIM_SITE in the environment cannot point the sandbox elsewhere.
            env={"WP_SIM_SITE": str(site_file)},
            wp_user=wp_user,
            media=media,
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> SandboxWpCli:
        return cls(
            settings.wp_agent_sandbox_site,
            timeout_seconds=settings.command_timeout_seconds,
            wp_user=settings.wp_agent_wp_user,
            media=MediaImporter.from_settings(settings),
        )
