"""WP_CLI_MODE=sandbox: real WP-CLI on the local sandbox WordPress (wp_agent.sandbox), labelled as such.

Nothing here reaches a person's site: the sandbox is a WordPress network of its own on a private
MariaDB under WP_AGENT_SANDBOX_SITE (default ~/.wp-agent/sandbox/), started and seeded on first use.
Commands run exactly as in `local` mode — `php wp-cli.phar --path=<sandbox>/wordpress <argv…>`, no
shell, a minimal environment, `--user` from WP_AGENT_WP_USER — and `media import <URL>` goes the
same way as on a person's site: the agent downloads the file (SSRF-checked), stages it in a private
temporary directory and WordPress imports that file; a URL that cannot be fetched fails clearly.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from wp_agent.config import WpCliSettings
from wp_agent.executors.local import LocalWpCli
from wp_agent.executors.media_staging import MediaImporter, StagedFile
from wp_agent.executors.php_launch import LaunchReason, PhpLaunch
from wp_agent.executors.port import CommandResult
from wp_agent.sandbox import SandboxSite

DEFAULT_SANDBOX_DIR = Path("~/.wp-agent/sandbox")


class SandboxWpCli:
    """The WpCli of the sandbox: prepares the site on first use, then runs like LocalWpCli."""

    def __init__(
        self,
        site: SandboxSite | Path | str | None = None,
        *,
        timeout_seconds: float = 60.0,
        max_concurrency: int = 5,
        wp_user: str | None = None,
        media: MediaImporter | None = None,
    ) -> None:
        self.site = site if isinstance(site, SandboxSite) else SandboxSite(Path(site or DEFAULT_SANDBOX_DIR))
        self._timeout_seconds = timeout_seconds
        self._max_concurrency = max_concurrency
        self._wp_user = wp_user
        self._media = media or MediaImporter()
        self._lock = threading.Lock()
        self._local: LocalWpCli | None = None

    @classmethod
    def from_settings(cls, settings: WpCliSettings) -> SandboxWpCli:
        """Prepared at once, so a sandbox that cannot start is a configuration error before any model call."""
        wp_cli = cls(
            settings.wp_agent_sandbox_site,
            timeout_seconds=settings.command_timeout_seconds,
            wp_user=settings.wp_agent_wp_user,
            media=MediaImporter.from_settings(settings),
        )
        wp_cli.prepare()
        return wp_cli

    @property
    def max_concurrency(self) -> int:
        return self._max_concurrency

    @property
    def simulated(self) -> bool:
        """Always: answers say they come from the sandbox, not the person's site."""
        return True

    def prepare(self) -> LocalWpCli:
        """Start (and on the very first use, seed) the sandbox; the executor that runs its commands."""
        with self._lock:
            if self._local is None:
                self.site.start()
                self._local = LocalWpCli(
                    self.site.wordpress,
                    wp_cli_bin=self.site.wp_command(),
                    timeout_seconds=self._timeout_seconds,
                    max_concurrency=self._max_concurrency,
                    simulated=True,
                    wp_user=self._wp_user,
                    media=self._media,
                )
            return self._local

    def php_launch(self) -> PhpLaunch:
        """The sandbox runs its own `php … wp-cli.phar` with a cache directory of its own."""
        return PhpLaunch(LaunchReason.SANDBOX, cache_dir=str(self.site.opcache))

    def run(self, argv: Sequence[str]) -> CommandResult:
        # LocalWpCli routes `media import <URL>` through the MediaImporter, staged as below.
        return self.prepare().run(argv)

    def staged_files(self, files: Sequence[StagedFile]) -> contextlib.AbstractContextManager[list[str]]:
        """The sandbox's WP-CLI runs on this machine as us: a private (0700) temporary directory here."""
        return self.prepare().staged_files(files)

    def close(self) -> None:
        """The sandbox's database keeps running for the next call (`wp-agent sandbox stop` ends it)."""


def served_site(site: SandboxSite) -> Callable[[], AbstractContextManager[str | None]]:
    """The sandbox's site over loopback HTTP for one guarded change's probes (started, then stopped)."""

    @contextlib.contextmanager
    def serve() -> Iterator[str | None]:
        from wp_agent.sandbox.http_front import HttpFront

        with HttpFront(site, workers=2) as front:
            yield f"127.0.0.1:{front.port}"

    return serve
