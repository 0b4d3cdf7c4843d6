"""A byte sink that keeps at most N bytes of one output stream and remembers what it dropped."""

from __future__ import annotations

import logging

from wp_agent.executors.port import OUTPUT_LIMIT_BYTES, CommandResult

logger = logging.getLogger(__name__)


class CappedOutput:
    """Keeps the first `limit` bytes written; later bytes are counted and discarded (memory stays bounded)."""

    def __init__(self, limit: int = OUTPUT_LIMIT_BYTES) -> None:
        self._limit = limit
        self._kept = bytearray()
        self.total_bytes = 0

    def write(self, chunk: bytes) -> None:
        self.total_bytes += len(chunk)
        room = self._limit - len(self._kept)
        if room > 0:
            self._kept += chunk[:room]

    @property
    def truncated(self) -> bool:
        return self.total_bytes > len(self._kept)

    def text(self) -> str:
        """The kept bytes as UTF-8; bad bytes (and a multi-byte character cut by the cap) become U+FFFD."""
        return self._kept.decode("utf-8", errors="replace")


def finished_result(
    stdout: CappedOutput, stderr: CappedOutput, *, exit_code: int, duration_ms: int, label: str, via: str
) -> CommandResult:
    """The CommandResult of a command that ran to the end (logged without its output)."""
    truncated = stdout.truncated or stderr.truncated
    logger.debug(
        "wp-cli finished",
        extra={
            "command": label,
            "via": via,
            "exit_code": exit_code,
            "duration_ms": duration_ms,
            "stdout_bytes": stdout.total_bytes,
            "stderr_bytes": stderr.total_bytes,
            "truncated": truncated,
        },
    )
    return CommandResult(
        stdout=stdout.text(),
        stderr=stderr.text(),
        exit_code=exit_code,
        duration_ms=duration_ms,
        truncated=truncated,
    )
