"""WP-CLI's loggers: where Success/Warning/Error lines go and how `--quiet` silences them.

Facts reproduced (wp-cli/wp-cli php/WP_CLI/Loggers/Regular.php and Quiet.php):
`WP_CLI::success` writes "Success: ..." to STDOUT, `warning` "Warning: ..." to STDERR,
`error` "Error: ..." to STDERR and halts with exit code 1, `log` is informational STDOUT.
The quiet logger drops info, success and warning but still prints errors.
`WP_CLI::line` bypasses the logger, so tables and `--porcelain` ids survive `--quiet`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn


class Halt(Exception):  # noqa: N818 - mirrors WP_CLI::halt(), not an error condition
    """Stops the command with an exit code (WP_CLI::halt / exit())."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class Terminal:
    """What the real WP-CLI would detect about its STDOUT."""

    piped: bool = True
    columns: int = 80


class Output:
    """Collects a command's STDOUT and STDERR the way WP-CLI's loggers would write them."""

    def __init__(self, *, quiet: bool = False, terminal: Terminal | None = None) -> None:
        self.quiet = quiet
        self.terminal = terminal or Terminal()
        self._stdout: list[str] = []
        self._stderr: list[str] = []

    @property
    def stdout(self) -> str:
        return "".join(self._stdout)

    @property
    def stderr(self) -> str:
        return "".join(self._stderr)

    def write(self, text: str) -> None:
        """Raw echo to STDOUT (no newline added), like PHP's `echo`."""
        self._stdout.append(text)

    def write_err(self, text: str) -> None:
        self._stderr.append(text)

    def line(self, message: str = "") -> None:
        self._stdout.append(message + "\n")

    def log(self, message: str) -> None:
        if not self.quiet:
            self._stdout.append(message + "\n")

    def success(self, message: str) -> None:
        if not self.quiet:
            self._stdout.append(f"Success: {message}\n")

    def warning(self, message: str) -> None:
        if not self.quiet:
            self._stderr.append(f"Warning: {message}\n")

    def error(self, message: str, code: int = 1) -> NoReturn:
        self._stderr.append(f"Error: {message}\n")
        raise Halt(code)

    def halt(self, code: int) -> NoReturn:
        raise Halt(code)
