"""The WpCli port: run one WP-CLI argv somewhere and report what happened."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from wp_agent.executors.php_launch import PhpLaunch

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
