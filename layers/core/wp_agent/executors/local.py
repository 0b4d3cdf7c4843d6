"""Run WP-CLI as a local subprocess (WP_CLI_MODE=local): argv only, never a shell."""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from wp_agent.config import WpCliSettings
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors import running
from wp_agent.executors.ability_reads import AbilityReads
from wp_agent.executors.environment import minimal_environment, parse_passthrough
from wp_agent.executors.media_staging import MediaImporter, StagedFile, local_staged_files
from wp_agent.executors.output import CappedOutput, finished_result
from wp_agent.executors.php_launch import (
    PROBE_TIMEOUT_SECONDS,
    LaunchReason,
    PhpLaunch,
    plain,
    probe_steps,
    refused_at_startup,
    run_probe,
)
from wp_agent.executors.port import OUTPUT_LIMIT_BYTES, CommandResult
from wp_agent.masking import command_label

logger = logging.getLogger(__name__)

_READ_CHUNK = 64 * 1024
# After a kill, how long we still wait for the pipes to close before giving up on them.
_KILL_GRACE_SECONDS = 5.0


class LocalWpCli:
    """`<wp binary> --path=<wp_path> <argv…>` as a subprocess with a hard timeout and capped output.

    Past the output cap we keep reading and discard: the command then finishes normally and reports
    its real exit code (killing it mid-write could leave a half-applied change), memory stays bounded,
    and the timeout still bounds the time spent. With `opcache`, PHP is started with the opcache file
    cache when that runs the same program (php_launch.py; decided at the first command).
    """

    def __init__(
        self,
        wp_path: Path | str,
        *,
        wp_cli_bin: str | Sequence[str] = "wp",
        timeout_seconds: float = 60.0,
        max_concurrency: int = 5,
        simulated: bool = False,
        env: Mapping[str, str] | None = None,
        output_limit: int = OUTPUT_LIMIT_BYTES,
        wp_user: str | None = None,
        env_passthrough: Sequence[str] = (),
        media: MediaImporter | None = None,
        opcache: bool = False,
    ) -> None:
        base = shlex.split(wp_cli_bin) if isinstance(wp_cli_bin, str) else list(wp_cli_bin)
        if not base:
            raise WpAgentError(
                AgentErrorCode.UNKNOWN_ERROR,
                "WP_CLI_BIN が空です。wp コマンドのパス（例: wp や php /opt/wp-cli.phar）を設定してください。",
            )
        self._base_command = base
        self._wp_path = str(wp_path)
        self._wp_user = wp_user
        self._timeout_seconds = timeout_seconds
        self._max_concurrency = max_concurrency
        self._simulated = simulated
        # Never os.environ: WordPress's plugins would read the agent's keys (environment.py).
        self._env = minimal_environment(env, env_passthrough)
        if os.geteuid() == 0:
            # WP-CLI refuses root unless told; the environment says so without changing the argv.
            self._env.setdefault("WP_CLI_ALLOW_ROOT", "1")
        self._output_limit = output_limit
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._media = media or MediaImporter()
        self._abilities = AbilityReads()
        self._opcache = opcache
        self._launch_lock = threading.Lock()
        self._launch: PhpLaunch | None = None

    @classmethod
    def from_settings(cls, settings: WpCliSettings) -> LocalWpCli:
        if settings.wp_local_path is None:
            raise WpAgentError(
                AgentErrorCode.UNKNOWN_ERROR,
                "WP_CLI_MODE=local には WP_LOCAL_PATH（WordPress のディレクトリ）の設定が必要です。",
                details={"missing": ["WP_LOCAL_PATH"]},
            )
        wordpress = settings.wp_local_path.expanduser()
        if not wordpress.is_dir():
            raise WpAgentError(
                AgentErrorCode.UNKNOWN_ERROR,
                f"WP_LOCAL_PATH（{settings.wp_local_path}）はディレクトリではありません。WordPress のディレクトリを指定してください。",
                details={"invalid": ["WP_LOCAL_PATH"]},
            )
        return cls(
            wordpress,
            wp_cli_bin=settings.wp_cli_bin,
            timeout_seconds=settings.command_timeout_seconds,
            wp_user=settings.wp_agent_wp_user,
            env_passthrough=parse_passthrough(settings.wp_agent_local_env_passthrough),
            media=MediaImporter.from_settings(settings),
            opcache=settings.wp_agent_opcache,
        )

    @property
    def max_concurrency(self) -> int:
        return self._max_concurrency

    @property
    def simulated(self) -> bool:
        return self._simulated

    def command_line(self, argv: Sequence[str], launch: PhpLaunch | None = None) -> list[str]:
        """The exact argv handed to the OS: our --path and --user first (the policy refuses both
        from the model); through PHP with the cache when `launch` is cached and its guard holds."""
        user = [f"--user={self._wp_user}"] if self._wp_user else []
        start = self._base_command
        if launch is not None and launch.cached and launch.guard_holds_here():
            start = launch.php_argv()
        return [*start, f"--path={self._wp_path}", *user, *argv]

    def php_launch(self) -> PhpLaunch:
        """How PHP starts WP-CLI here (probed at the first command; `doctor` shows it)."""
        if not self._opcache:
            return plain(LaunchReason.DISABLED)
        with self._launch_lock:
            if self._launch is None:
                self._launch = run_probe(probe_steps(shlex.join(self._base_command)), self._probe_shell)
                logger.info("wp-cli launch chosen", extra=self._launch.log_fields())
            return self._launch

    def _probe_shell(self, command: str) -> tuple[int, str, str]:
        try:
            done = subprocess.run(  # noqa: S603 - our own probe script, its words quoted
                ["/bin/sh", "-c", command],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                env=self._env,
                timeout=PROBE_TIMEOUT_SECONDS + 5,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return -1, "", type(exc).__name__
        # A binary's first "line" is not text.
        return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")

    def run(self, argv: Sequence[str]) -> CommandResult:
        # `media import <URL>` is downloaded by the agent and imported from a staged file.
        return self._media.run(argv, self._run_answered, self)

    def _run_answered(self, argv: Sequence[str]) -> CommandResult:
        # The Abilities registry's reads, where this WP-CLI has no ability command (ability_reads.py).
        return self._abilities.run(argv, self._run_command, self)

    def staged_files(self, files: Sequence[StagedFile]) -> contextlib.AbstractContextManager[list[str]]:
        """A private temporary directory on this machine (WP-CLI runs here)."""
        return local_staged_files(files)

    def _run_command(self, argv: Sequence[str]) -> CommandResult:
        launch = self.php_launch()
        with self._slots:
            result = self._run(list(argv), launch)
            if refused_at_startup(launch, result.exit_code, result.stdout, result.stderr):
                # PHP stopped before running anything: the same command as configured, from now on.
                with self._launch_lock:
                    self._launch = plain(LaunchReason.STARTUP_REFUSED, result.stderr.strip())
                logger.warning("wp-cli launch changed", extra=self._launch.log_fields())
                result = self._run(list(argv), None)
            return result

    def close(self) -> None:
        """Nothing to release: every run owns its process."""

    def _run(self, argv: list[str], launch: PhpLaunch | None) -> CommandResult:
        label = command_label(argv)
        started = time.monotonic()
        deadline = started + self._timeout_seconds
        try:
            # S603: argv list, shell=False; the policy has already vetted argv.
            process = subprocess.Popen(  # noqa: S603
                self.command_line(argv, launch),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                shell=False,
                start_new_session=True,
                env=self._env,
            )
        except FileNotFoundError as exc:
            raise WpAgentError(
                AgentErrorCode.UNKNOWN_ERROR,
                f"WP-CLI の実行ファイルが見つかりません（{self._base_command[0]}）。WP_CLI_BIN を確認してください。",
                details={"binary": self._base_command[0]},
            ) from exc
        except PermissionError as exc:
            raise WpAgentError(
                AgentErrorCode.UNKNOWN_ERROR,
                f"WP-CLI の実行ファイルを実行できません（{self._base_command[0]}）。権限を確認してください。",
                details={"binary": self._base_command[0]},
            ) from exc

        # An interrupt (Ctrl-C) ends it: it is not in our process group.
        with running.tracked(running.LocalProcessGroup(process, label)):
            return self._wait(process, label, started, deadline)

    def _wait(
        self, process: subprocess.Popen[bytes], label: str, started: float, deadline: float
    ) -> CommandResult:
        assert process.stdout is not None  # noqa: S101 - PIPE was requested
        assert process.stderr is not None  # noqa: S101
        stdout = CappedOutput(self._output_limit)
        stderr = CappedOutput(self._output_limit)
        readers = [
            threading.Thread(target=_drain, args=(process.stdout, stdout), daemon=True),
            threading.Thread(target=_drain, args=(process.stderr, stderr), daemon=True),
        ]
        for reader in readers:
            reader.start()

        timed_out = False
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
        # A child that outlives `wp` could hold the pipes open; the same deadline applies to it.
        for reader in readers:
            reader.join(timeout=max(0.0, deadline - time.monotonic()))
        if timed_out or any(reader.is_alive() for reader in readers):
            _kill_group(process)
            for reader in readers:
                reader.join(timeout=_KILL_GRACE_SECONDS)
            duration_ms = int((time.monotonic() - started) * 1000)
            logger.warning(
                "wp-cli timed out and its process group was killed",
                extra={
                    "command": label,
                    "timeout_seconds": self._timeout_seconds,
                    "duration_ms": duration_ms,
                },
            )
            raise WpAgentError(
                AgentErrorCode.COMMAND_TIMEOUT,
                f"コマンドが制限時間（{self._timeout_seconds:g}秒）内に終わらなかったため中断しました。",
                details={"timeoutSeconds": self._timeout_seconds, "durationMs": duration_ms},
            )

        exit_code = _exit_code(process.returncode)
        duration_ms = int((time.monotonic() - started) * 1000)
        return finished_result(
            stdout, stderr, exit_code=exit_code, duration_ms=duration_ms, label=label, via="local"
        )


def _drain(stream: IO[bytes], sink: CappedOutput) -> None:
    with stream:
        fd = stream.fileno()
        while chunk := os.read(fd, _READ_CHUNK):
            sink.write(chunk)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    try:
        process.wait(timeout=_KILL_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        logger.error("wp-cli process did not exit after SIGKILL", extra={"pid": process.pid})  # noqa: TRY400


def _exit_code(returncode: int) -> int:
    # Killed by a signal: report it the way a shell does (128 + signal number).
    return 128 - returncode if returncode < 0 else returncode
