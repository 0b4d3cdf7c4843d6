"""`media import <URL>` never reaches WordPress: the agent downloads the file (SafeDownloader),
stages it in a private directory on the WordPress host, imports that file and removes it.

Every executor routes its commands through MediaImporter.run, so neither the agent's commands nor
publishArticle's featured image can make WordPress fetch a URL.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from wp_agent.command_line.aliases import canonical_argv
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.config import WpCliSettings
from wp_agent.executors.port import CommandResult, WpCli
from wp_agent.media.safe_download import (
    DEFAULT_MAX_BYTES,
    MediaDownloadError,
    SafeDownloader,
    parse_test_hosts,
)

MEDIA_IMPORT = ("media", "import")
StagedFile = tuple[str, bytes]  # (file name, contents)


@runtime_checkable
class FileStager(Protocol):
    """Puts files where WP-CLI on the WordPress host can read them, privately, for one command."""

    def staged_files(self, files: Sequence[StagedFile]) -> contextlib.AbstractContextManager[list[str]]:
        """Yields each file's path on the WordPress host; everything is removed on exit."""


def run_staged_script(
    wp_cli: WpCli, stager: FileStager, script: Path, request: dict[str, Any], flags: Sequence[str] = ()
) -> CommandResult:
    """`wp eval-file <script> '<request JSON>' [flags]` with our PHP script staged on the WordPress host for
    that one command (removed after it): the health probe's and the code guard's way to ask the server."""
    name = f"wp-agent-{script.stem.replace('_', '-')}.php"
    with stager.staged_files([(name, script.read_bytes())]) as (staged,):
        return wp_cli.run(["eval-file", staged, json.dumps(request), *flags])


def json_answer(result: CommandResult) -> dict[str, Any]:
    """The JSON object a staged script printed; empty when it failed or printed something else."""
    try:
        answer = json.loads(result.stdout) if result.exit_code == 0 else {}
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}


def unique_names(files: Sequence[StagedFile]) -> list[str]:
    """The files' names, made unique (`a.jpg`, `a-2.jpg`) without changing the first one's title."""
    seen: set[str] = set()
    names: list[str] = []
    for name, _data in files:
        stem, dot, ext = name.rpartition(".")
        candidate, n = name, 1
        while candidate in seen:
            n += 1
            candidate = f"{stem}-{n}{dot}{ext}" if dot else f"{name}-{n}"
        seen.add(candidate)
        names.append(candidate)
    return names


@contextlib.contextmanager
def local_staged_files(files: Sequence[StagedFile]) -> Iterator[list[str]]:
    """A private (0700) temporary directory on this machine; removed afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="wp-agent-media-"))
    try:
        paths: list[str] = []
        for name, (_original, data) in zip(unique_names(files), files, strict=True):
            path = directory / name
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            paths.append(str(path))
        yield paths
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _failed(message_ja: str, started: float) -> CommandResult:
    # Reported like WP-CLI's own failure, so the run and publishArticle handle it as one.
    return CommandResult("", f"Error: {message_ja}\n", 1, int((time.monotonic() - started) * 1000))


class MediaImporter:
    """Runs `media import <URL>…` as download → stage → `media import <staged file>…` → remove."""

    def __init__(self, downloader: SafeDownloader | None = None) -> None:
        self._downloader = downloader or SafeDownloader()

    @classmethod
    def from_settings(cls, settings: WpCliSettings) -> MediaImporter:
        return cls(
            SafeDownloader(
                max_bytes=settings.wp_agent_media_max_bytes,
                timeout_seconds=settings.command_timeout_seconds,
                test_hosts=parse_test_hosts(settings.wp_agent_media_test_hosts),
            )
        )

    def run(
        self, argv: Sequence[str], run: Callable[[Sequence[str]], CommandResult], stager: FileStager
    ) -> CommandResult:
        canonical = canonical_argv(argv)
        parsed = ParsedCommand.from_argv(canonical)
        if parsed.positionals[:2] != MEDIA_IMPORT:
            return run(argv)
        started = time.monotonic()
        sources = parsed.args_after(MEDIA_IMPORT)
        if not sources or not all(s.lower().startswith(("http://", "https://")) for s in sources):
            return _failed(
                "メディアは http(s) のURLからのみ取り込めます（サーバー上のファイルは指定できません）",
                started,
            )
        try:
            downloads = [self._downloader.fetch(source) for source in sources]
        except MediaDownloadError as exc:
            return _failed(exc.message_ja, started)
        with stager.staged_files([(d.filename, d.data) for d in downloads]) as paths:
            return run(_with_sources(canonical, paths))


def _with_sources(argv: Sequence[str], paths: list[str]) -> list[str]:
    """`media import <URL>… <flags>` with the URLs replaced, in order, by the staged paths."""
    out: list[str] = []
    positional = 0
    for token in argv:
        if ParsedCommand.is_option(token):
            out.append(token)
            continue
        positional += 1
        out.append(token if positional <= len(MEDIA_IMPORT) else paths[positional - len(MEDIA_IMPORT) - 1])
    return out


__all__ = ["DEFAULT_MAX_BYTES", "FileStager", "MediaImporter", "local_staged_files", "unique_names"]
