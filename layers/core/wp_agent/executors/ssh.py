"""Run WP-CLI on the WordPress host over SSH (WP_CLI_MODE=ssh), on paramiko with a pinned host key.

One authenticated connection per (host, port, user, pinned host keys, client key) lives in a
module-level pool, so commands of one invocation and of later warm Lambda invocations reuse it;
commands run as channels multiplexed over it, at most `VPS_SSH_MAX_CHANNELS` at a time. The remote
command is `exec timeout -k 5 <secs> <wp> --path=<WP_PATH> <args…>` with every word quoted, so the shell
on the host sees only literal arguments and nothing outlives the time limit.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence

import paramiko

from wp_agent.config import WpCliSettings
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.ability_reads import AbilityReads
from wp_agent.executors.media_staging import MediaImporter, StagedFile, unique_names
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
from wp_agent.executors.ssh_command import build_remote_command
from wp_agent.executors.ssh_errors import attempts_worth_making, connect_failure
from wp_agent.executors.ssh_keys import (
    SshCredentials,
    known_hosts_name,
    load_ssh_credentials,
)
from wp_agent.executors.ssh_pool import (
    DEFAULT_POOL,
    HostKeyRejectedError,
    PinnedOnlyPolicy,
    PooledConnection,
    PoolKey,
    SshConnectionPool,
    close_pooled_connections,
    host_key_error,
)
from wp_agent.executors.ssh_running import close_quietly, run_on_channel
from wp_agent.executors.ssh_target import SshTarget
from wp_agent.executors.ssh_timing import (
    CONNECT_RETRIES,
    IDLE_PROBE_TIMEOUT_SECONDS,
    LOCAL_GRACE_SECONDS,
    RETRY_BASE_SECONDS,
)
from wp_agent.masking import command_label, mask_argv

__all__ = [  # the pool's names stay importable from here (tests, benchmarks, the serverless fakes)
    "REMOTE_STAGING_PARENT",
    "HostKeyRejectedError",
    "PoolKey",
    "PooledConnection",
    "SshConnectionPool",
    "SshTarget",
    "SshWpCli",
    "close_pooled_connections",
]

logger = logging.getLogger(__name__)

# A connection unused for this long may have been dropped silently (NAT, frozen Lambda): probe briefly.
_IDLE_PROBE_AFTER_SECONDS = 60.0
_KEEPALIVE_SECONDS = 30
# Media staged for `media import` goes into a fresh 0700 directory here on the WordPress host.
REMOTE_STAGING_PARENT = "/tmp"  # noqa: S108 - a private subdirectory is created with mkdir 0700


class SshWpCli:
    """WP-CLI over SSH with a pooled, pinned-host-key connection; safe to call from several threads."""

    def __init__(
        self,
        settings: WpCliSettings,
        *,
        target: SshTarget | None = None,
        credentials: SshCredentials | None = None,
        pool: SshConnectionPool | None = None,
        connect_retries: int = CONNECT_RETRIES,
        retry_base_seconds: float = RETRY_BASE_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
        local_grace_seconds: float = LOCAL_GRACE_SECONDS,
        output_limit: int = OUTPUT_LIMIT_BYTES,
        media: MediaImporter | None = None,
    ) -> None:
        # Where to connect comes from the target (VPS_* settings by default); timeouts, limits and
        # the WP-CLI binary from the settings.
        self._target = target or SshTarget.from_settings(settings)
        self._settings = settings
        self._host = self._target.host
        self._port = self._target.port
        self._user = self._target.user
        self._connect_timeout = settings.vps_ssh_connect_timeout
        self._timeout_seconds = settings.command_timeout_seconds
        self._max_channels = settings.vps_ssh_max_channels
        self._credentials = credentials
        self._pool = pool if pool is not None else DEFAULT_POOL
        self._connect_retries = connect_retries
        self._retry_base = retry_base_seconds
        self._sleep = sleep
        self._local_grace = local_grace_seconds
        self._output_limit = output_limit
        self._media = media or MediaImporter.from_settings(settings)
        self._abilities = AbilityReads()
        self._init_lock = threading.Lock()
        self._connection: PooledConnection | None = None

    @property
    def max_concurrency(self) -> int:
        return self._max_channels

    @property
    def simulated(self) -> bool:
        return False

    @property
    def connects(self) -> int:
        """How many times the pooled connection behind this executor was (re)established."""
        return self._pooled().connects

    def remote_command(self, argv: Sequence[str], launch: PhpLaunch | None = None) -> str:
        return build_remote_command(
            self._settings.wp_cli_bin,
            self._target.wp_path,
            argv,
            self._timeout_seconds,
            allow_root=self._target.user == "root",
            wp_user=self._target.wp_user,
            launch=launch,
        )

    def php_launch(self) -> PhpLaunch:
        """How PHP starts WP-CLI on this connection (probed once per connection; `doctor` shows it)."""
        connection = self._pooled()
        return self._launch(connection, connection.failed_connects)

    def run(self, argv: Sequence[str]) -> CommandResult:
        # `media import <URL>` is downloaded here and imported from a file staged over SFTP.
        return self._media.run(argv, self._run_answered, self)

    def _run_answered(self, argv: Sequence[str]) -> CommandResult:
        # The Abilities registry's reads, where this WP-CLI has no ability command (ability_reads.py).
        return self._abilities.run(argv, self._run_command, self)

    @contextlib.contextmanager
    def staged_files(self, files: Sequence[StagedFile]) -> Iterator[list[str]]:
        """Uploads the files over SFTP into a new 0700 directory on the host; removed on exit."""
        directory = f"{REMOTE_STAGING_PARENT}/wp-agent-media-{secrets.token_hex(16)}"
        names = unique_names(files)
        with self._sftp() as sftp:
            sftp.mkdir(directory, mode=0o700)  # fails if anything (a symlink too) has that name
            sftp.chmod(directory, 0o700)  # mkdir's mode is subject to the server's umask
            created = sftp.lstat(directory)
            if not stat.S_ISDIR(created.st_mode or 0) or stat.S_IMODE(created.st_mode or 0) != 0o700:
                raise self._staging_error("the staging directory is not a private directory")
            for name, (_original, data) in zip(names, files, strict=True):
                with sftp.open(f"{directory}/{name}", "wbx") as handle:
                    handle.chmod(0o600)
                    handle.write(data)
        try:
            yield [f"{directory}/{name}" for name in names]
        finally:
            with self._sftp() as sftp:
                for name in names:
                    with contextlib.suppress(OSError):
                        sftp.remove(f"{directory}/{name}")
                with contextlib.suppress(OSError):
                    sftp.rmdir(directory)

    @contextlib.contextmanager
    def _sftp(self) -> Iterator[paramiko.SFTPClient]:
        connection = self._pooled()
        failures_seen = connection.failed_connects
        with connection.channel_slots:
            transport = connection.transport(self._connect_with_retries, failures_seen=failures_seen)
            try:
                client = paramiko.SFTPClient.from_transport(transport)
            except (paramiko.SSHException, EOFError, OSError) as exc:
                raise self._staging_error(f"sftp unavailable ({type(exc).__name__})") from exc
            if client is None:  # pragma: no cover - paramiko returns None only without a channel
                raise self._staging_error("sftp unavailable")
            connection.channel_started()
            try:
                yield client
            except (paramiko.SSHException, EOFError) as exc:
                raise self._staging_error(f"sftp failed ({type(exc).__name__})") from exc
            finally:
                client.close()
                connection.channel_finished()

    def _staging_error(self, cause: str) -> WpAgentError:
        return WpAgentError(
            AgentErrorCode.SSH_CONNECTION_FAILED,
            f"{self._host}:{self._port} に画像ファイルを転送できませんでした（SFTP）。サーバーでSFTPが使えるか確認してください。",
            details={"cause": "media_staging", "reason": cause},
        )

    def _run_command(self, argv: Sequence[str]) -> CommandResult:
        argv = list(argv)
        connection = self._pooled()
        # A command queued behind a connect that failed (here or in the launch probe) shares its error.
        failures_seen = connection.failed_connects
        launch = self._launch(connection, failures_seen)
        label = command_label(argv)
        logger.debug("running wp-cli over ssh", extra={"argv": mask_argv(argv), "host": self._host})
        command = self.remote_command(argv, launch)
        result = self._run_remote(connection, command, label, self._timeout_seconds, failures_seen)
        if refused_at_startup(launch, result.exit_code, result.stdout, result.stderr):
            # PHP stopped before running anything: the same command as configured, from now on.
            with connection.launch_lock:
                refused = plain(LaunchReason.STARTUP_REFUSED, result.stderr.strip())
                connection.remember_launch(self._settings.wp_cli_bin, refused)
            logger.warning("wp-cli launch changed", extra={"host": self._host, **refused.log_fields()})
            result = self._run_remote(
                connection, self.remote_command(argv), label, self._timeout_seconds, None
            )
        return result

    def _run_remote(
        self,
        connection: PooledConnection,
        command: str,
        label: str,
        timeout_seconds: float,
        failures_seen: int | None,
    ) -> CommandResult:
        if failures_seen is None:
            failures_seen = connection.failed_connects
        with connection.channel_slots:
            channel = self._open_channel(connection, failures_seen)
            connection.channel_started()
            try:
                return run_on_channel(
                    channel,
                    command,
                    label,
                    timeout_seconds,
                    grace_seconds=self._local_grace,
                    output_limit=self._output_limit,
                    host=self._host,
                )
            finally:
                close_quietly(channel)
                connection.channel_finished()

    # --- how PHP starts (php_launch.py) ---------------------------------------------------------

    def _launch(self, connection: PooledConnection, failures_seen: int) -> PhpLaunch:
        if not self._settings.wp_agent_opcache:
            return plain(LaunchReason.DISABLED)
        with connection.launch_lock:
            if (known := connection.launch_for(self._settings.wp_cli_bin)) is not None:
                return known
            started = time.monotonic()
            launch = run_probe(
                probe_steps(self._settings.wp_cli_bin),
                lambda command: self._probe_shell(connection, command, failures_seen),
            )
            connection.remember_launch(self._settings.wp_cli_bin, launch)
        probe_ms = int((time.monotonic() - started) * 1000)
        logger.info(
            "wp-cli launch chosen", extra={"host": self._host, "probe_ms": probe_ms, **launch.log_fields()}
        )
        return launch

    def _probe_shell(
        self, connection: PooledConnection, command: str, failures_seen: int
    ) -> tuple[int, str, str]:
        try:
            result = self._run_remote(
                connection, command, "launch probe", PROBE_TIMEOUT_SECONDS + 5, failures_seen
            )
        except WpAgentError as exc:
            if exc.code is AgentErrorCode.COMMAND_TIMEOUT:
                return -1, "", "timed out"
            raise
        return result.exit_code, result.stdout, result.stderr

    def close(self) -> None:
        """Keeps the pooled connection open for the next invocation; see `close_pooled_connections`."""

    # --- connection --------------------------------------------------------------------------

    def _pooled(self) -> PooledConnection:
        with self._init_lock:
            if self._connection is None:
                if self._credentials is None:
                    self._credentials = load_ssh_credentials(self._settings, self._target)
                key = PoolKey(
                    host=self._host,
                    port=self._port,
                    user=self._user,
                    host_keys=self._credentials.host_fingerprints,
                    client_key=self._credentials.client_fingerprint,
                )
                self._connection = self._pool.get(key, self._max_channels)
            return self._connection

    def _open_channel(self, connection: PooledConnection, failures_seen: int) -> paramiko.Channel:
        probe = connection.idle_seconds() > _IDLE_PROBE_AFTER_SECONDS
        timeout = min(self._connect_timeout, IDLE_PROBE_TIMEOUT_SECONDS) if probe else self._connect_timeout
        transport = connection.transport(self._connect_with_retries, failures_seen=failures_seen)
        try:
            return transport.open_session(timeout=timeout)
        except paramiko.ChannelException as exc:
            # The server refused one more channel (its MaxSessions); the connection itself is fine
            # and carries other commands, so it is kept.
            raise self._channel_refused(exc) from exc
        except (paramiko.SSHException, EOFError, OSError) as exc:
            # The server may have dropped the connection before the transport noticed: reconnect once.
            logger.info(
                "opening an ssh channel failed; reconnecting",
                extra={"host": self._host, "port": self._port, "error_type": type(exc).__name__},
            )
            connection.discard(transport)
        transport = connection.transport(self._connect_with_retries)
        try:
            return transport.open_session(timeout=self._connect_timeout)
        except paramiko.ChannelException as exc:
            raise self._channel_refused(exc) from exc
        except (paramiko.SSHException, EOFError, OSError) as exc:
            connection.discard(transport)
            raise WpAgentError(
                AgentErrorCode.SSH_CONNECTION_FAILED,
                f"{self._host}:{self._port} でSSHチャネルを開けませんでした。サーバーの状態を確認してください。",
                details={"cause": "channel_open_failed", "errorType": type(exc).__name__},
            ) from exc

    def _channel_refused(self, exc: paramiko.ChannelException) -> WpAgentError:
        return WpAgentError(
            AgentErrorCode.SSH_CONNECTION_FAILED,
            f"{self._host}:{self._port} のSSHサーバーが新しいチャネルを拒否しました。サーバーの MaxSessions より"
            " VPS_SSH_MAX_CHANNELS を小さくしてください。",
            details={"cause": "channel_refused", "sshCode": exc.code},
        )

    def _connect_with_retries(self) -> paramiko.SSHClient:
        attempts = 1 + self._connect_retries
        last_error: BaseException | None = None
        for attempt in range(1, attempts + 1):
            try:
                return self._connect_once()
            except (OSError, EOFError, paramiko.SSHException) as exc:
                # Host-key and authentication failures are raised as WpAgentError and never retried.
                last_error = exc
                logger.warning(
                    "ssh connect attempt failed",
                    extra={
                        "host": self._host,
                        "port": self._port,
                        "attempt": attempt,
                        "attempts": attempts,
                        "error_type": type(exc).__name__,
                        "error": str(exc),
                    },
                )
                if attempt >= attempts_worth_making(exc, attempts):
                    break
                self._sleep(self._retry_base * 2 ** (attempt - 1))
        raise connect_failure(
            self._host, self._port, last_error, attempts=attempt, timeout_seconds=self._connect_timeout
        ) from last_error

    def _connect_once(self) -> paramiko.SSHClient:
        credentials = self._credentials
        assert credentials is not None  # noqa: S101 - _pooled() loaded them
        client = paramiko.SSHClient()
        client.set_missing_host_key_policy(PinnedOnlyPolicy())
        name = known_hosts_name(self._host, self._port)
        for host_key in credentials.host_keys:
            client.get_host_keys().add(name, host_key.get_name(), host_key)
        try:
            client.connect(
                hostname=self._host,
                port=self._port,
                username=self._user,
                pkey=credentials.private_key,
                timeout=self._connect_timeout,
                banner_timeout=self._connect_timeout,
                auth_timeout=self._connect_timeout,
                channel_timeout=self._connect_timeout,
                look_for_keys=False,
                allow_agent=False,
            )
        except paramiko.BadHostKeyException as exc:
            client.close()
            raise self._host_key_error(exc.key, "changed") from None
        except HostKeyRejectedError as exc:
            client.close()
            raise self._host_key_error(exc.presented, "unknown") from None
        except paramiko.AuthenticationException:
            client.close()
            raise WpAgentError(
                AgentErrorCode.SSH_CONNECTION_FAILED,
                f"{self._host}:{self._port} へのSSH認証に失敗しました（ユーザー {self._user}）。"
                "公開鍵がサーバーの authorized_keys に登録されているか確認してください。",
                details={"cause": "auth_failed", "user": self._user},
            ) from None
        except BaseException:
            client.close()
            raise
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(_KEEPALIVE_SECONDS)
            # Each command is a few small request/reply packets; Nagle's algorithm would hold them
            # for the peer's delayed ACK (~40 ms per command measured on a real site).
            if isinstance(transport.sock, socket.socket):
                transport.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        logger.info(
            "ssh connected",
            extra={
                "host": self._host,
                "port": self._port,
                "user": self._user,
                "key_method": credentials.method,
            },
        )
        return client

    def _host_key_error(self, presented: paramiko.PKey, kind: str) -> WpAgentError:
        assert self._credentials is not None  # noqa: S101
        return host_key_error(self._host, self._port, self._credentials.host_fingerprints, presented, kind)
