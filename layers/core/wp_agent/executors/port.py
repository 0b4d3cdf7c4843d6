"""The WpCli port: run one WP-CLI argv somewhere and report what happened."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.php_launch import PhpLaunch

logger = logging.getLogger(__name__)

# NFR-1.5: at most this many bytes of stdout (and separately stderr) are kept.
OUTPUT_LIMIT_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True)
class CommandResult:
    """Outcome of one WP-CLI invocation; stdout/stderr are decoded UTF-8 (replacement on bad bytes)."""

    stdout: str
    stderr: str
    exit_code: int
    duration_ms: int
    truncated: bool = False
    # A guarded code change that made the site worse and was taken back (executors/code_guard.py)
    rolled_back: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


class WpCli(Protocol):
    """Runs WP-CLI with the given arguments (no leading `wp`); never through a shell.

    Raises WpAgentError(COMMAND_TIMEOUT) when the command outlives the timeout (the process is ended)
    and WpAgentError(SSH_CONNECTION_FAILED) when the host cannot be reached.
    """

    @property
    def max_concurrency(self) -> int: ...

    @property
    def simulated(self) -> bool: ...

    def run(self, argv: Sequence[str]) -> CommandResult: ...

    def close(self) -> None: ...


@runtime_checkable
class ReportsPhpLaunch(Protocol):
    """An executor that decides how PHP starts WP-CLI (php_launch.py) and can say how."""

    def php_launch(self) -> PhpLaunch: ...


def first_line(text: str) -> str:
    """The first line of an output that says something (WP-CLI's error, a PHP error)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


# An established connection that died under a command (before it started, or while it ran): a new
# connection may well run it. Not a host that cannot be reached, refused the key or changed its host key.
CONNECTION_DIED = frozenset({"exec_failed", "connection_lost"})


def run_read(wp_cli: WpCli, argv: Sequence[str]) -> CommandResult:
    """Run a command the caller has decided is a read; when the connection died under it, once more on
    a new connection (a read that may have run changes nothing when it runs again — a write is never
    retried: it may have started and its effect is not known)."""
    try:
        return wp_cli.run(list(argv))
    except WpAgentError as exc:
        if (
            exc.code is not AgentErrorCode.SSH_CONNECTION_FAILED
            or exc.details.get("cause") not in CONNECTION_DIED
        ):
            raise
        logger.info(
            "a read's connection died; running it once more", extra={"cause": exc.details.get("cause")}
        )
        return wp_cli.run(list(argv))
