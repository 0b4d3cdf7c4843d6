"""A private MariaDB server for one sandbox: its own datadir and unix socket, no TCP, no systemd.

Debian's mariadb-server is only used for its binaries. `mariadb-install-db` creates the datadir once;
`mariadbd` is started directly (detached, so it outlives the CLI call that needed it) with
`--skip-networking`, and `--user=<owner>` when we are root (mariadbd refuses to run as root without it).
Administration (creating the WordPress user, dumps, restores) connects over the socket as the
operating-system user through MariaDB's unix_socket authentication: `root` and the datadir's owner.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from wp_agent.sandbox.errors import SandboxError

# Small and fast rather than durable: this database holds sample content that `reset` restores.
_SERVER_OPTIONS = (
    "--skip-networking",
    "--skip-name-resolve",
    "--skip-log-bin",
    "--performance-schema=OFF",
    "--innodb-buffer-pool-size=32M",
    "--innodb-log-file-size=8M",
    "--innodb-flush-log-at-trx-commit=2",
    "--character-set-server=utf8mb4",
    "--collation-server=utf8mb4_unicode_ci",
    "--max-connections=60",
)
_START_TIMEOUT_SECONDS = 60.0
_STOP_TIMEOUT_SECONDS = 30.0
_CLIENT_TIMEOUT_SECONDS = 120.0
# sockaddr_un.sun_path holds 108 bytes including the terminating NUL.
_MAX_SOCKET_PATH = 100


def _binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name) or (
            Path("/usr/sbin") / name if (Path("/usr/sbin") / name).exists() else None
        )
        if found:
            return str(found)
    raise SandboxError(
        "mariadb_missing",
        f"MariaDB（{names[0]}）が見つかりません。`wp-agent sandbox install` でサンドボックスに必要なもの"
        "（mariadb-server など）を入れてください。",
    )


class MariaDb:
    """The server of one sandbox, living under `home` (datadir `home/data`) and owned by `owner`."""

    def __init__(self, home: Path, *, owner: str | None = None) -> None:
        self.home = home
        self.datadir = home / "data"
        self.pid_file = home / "mariadb.pid"
        self.log_file = home / "mariadb.log"
        # Its own temporary directory: installs and servers running side by side in the shared /tmp
        # collide on their temporary tables' names (seen as "Unknown table 'mysql.tmp_user_sys'").
        self.tmpdir = home / "tmp"
        self.owner = owner or pwd.getpwuid(os.geteuid()).pw_name
        self.socket = self._socket_path()

    # --- lifecycle ---------------------------------------------------------------------------

    def running(self) -> bool:
        """True when a server answers on our socket."""
        return _answers(self.socket)

    def start(self) -> None:
        """Start the server unless it already answers (creating the datadir the first time)."""
        if self.running():
            return
        if not (self.datadir / "mysql").is_dir():
            self._install_db()
        self._prepare_socket_dir()
        self._prepare_tmpdir()
        command = [
            _binary("mariadbd", "mysqld"),
            "--no-defaults",  # never /etc/mysql/my.cnf: this server is ours alone
            f"--datadir={self.datadir}",
            f"--tmpdir={self.tmpdir}",
            f"--socket={self.socket}",
            f"--pid-file={self.pid_file}",
            f"--log-error={self.log_file}",
            *_SERVER_OPTIONS,
            *self._user_option(),
        ]
        # Detached from our session: the server keeps running for the next command or CLI call.
        subprocess.Popen(  # noqa: S603 - fixed binary, our own arguments
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
        deadline = time.monotonic() + _START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.running():
                return
            time.sleep(0.05)
        raise SandboxError(
            "mariadb_start",
            f"サンドボックスのデータベース（MariaDB）が起動しませんでした。ログ: {self.log_file}",
            log=self.log_tail(),
        )

    def stop(self) -> bool:
        """Stop the server if it runs; True when one was stopped."""
        pid = self._pid()
        if pid is None:
            return False
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + _STOP_TIMEOUT_SECONDS
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self.socket.parent != self.home:  # the short directory in /tmp: made again on start
            shutil.rmtree(self.socket.parent, ignore_errors=True)
        return True

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # --- administration (as the OS user, over the socket) ------------------------------------

    def sql(self, statements: str, *, database: str | None = None) -> str:
        """Run SQL as the administrator; tab-separated rows without headers."""
        return self.client(["--batch", "--skip-column-names", *([database] if database else [])], statements)

    def client(self, arguments: Sequence[str], stdin: str | bytes | None = None) -> str:
        return self._run([_binary("mariadb", "mysql"), *self.admin_options(), *arguments], stdin)

    def dump_table(self, database: str, table: str, target: Path) -> None:
        """A plain SQL dump of one table (DROP, CREATE and its rows), to load with `client`."""
        with target.open("wb") as handle:
            self._run(
                [
                    _binary("mariadb-dump", "mysqldump"),
                    *self.admin_options(),
                    "--single-transaction",
                    "--skip-dump-date",
                    "--skip-comments",
                    "--hex-blob",
                    database,
                    table,
                ],
                None,
                stdout=handle,
            )

    def admin_options(self) -> list[str]:
        return ["--no-defaults", f"--socket={self.socket}", f"--user={_os_user()}"]

    # --- internals ---------------------------------------------------------------------------

    def _run(
        self, command: Sequence[str], stdin: str | bytes | None, *, stdout: int | IO[bytes] = subprocess.PIPE
    ) -> str:
        data = stdin.encode() if isinstance(stdin, str) else stdin
        completed = subprocess.run(  # noqa: S603 - fixed binaries, our own arguments
            list(command),
            input=data,
            stdout=stdout,
            stderr=subprocess.PIPE,
            timeout=_CLIENT_TIMEOUT_SECONDS,
            check=False,
        )
        if completed.returncode != 0:
            error = completed.stderr.decode(errors="replace").strip()
            raise SandboxError(
                "mariadb_command",
                f"サンドボックスのデータベース操作に失敗しました（{Path(command[0]).name}: {error[:300]}）。",
                log=error,
            )
        return completed.stdout.decode() if isinstance(completed.stdout, bytes) else ""

    def _install_db(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        staging = self.home / "data.new"
        shutil.rmtree(staging, ignore_errors=True)
        self._prepare_tmpdir()
        command = [
            _binary("mariadb-install-db", "mysql_install_db"),
            "--no-defaults",
            f"--datadir={staging}",
            f"--tmpdir={self.tmpdir}",
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
            *self._user_option(),
            *[option for option in _SERVER_OPTIONS if option.startswith("--innodb")],
            # Only while the system tables are made (half the time): a datadir whose install did not
            # finish is never used (it is renamed into place afterwards), so it needs no fsync.
            "--innodb-doublewrite=0",
            "--innodb-flush-method=nosync",
        ]
        completed = subprocess.run(  # noqa: S603
            command, capture_output=True, text=True, timeout=_START_TIMEOUT_SECONDS * 3, check=False
        )
        if completed.returncode != 0:
            raise SandboxError(
                "mariadb_install",
                "サンドボックスのデータベース（mariadb-install-db）を作成できませんでした。",
                log=(completed.stdout + completed.stderr)[-2000:],
            )
        staging.rename(self.datadir)  # a half-made datadir is never mistaken for a finished one

    def _prepare_tmpdir(self) -> None:
        self.tmpdir.mkdir(mode=0o700, exist_ok=True)
        if os.geteuid() == 0:  # the server runs as the owner
            owner = pwd.getpwnam(self.owner)
            os.chown(self.tmpdir, owner.pw_uid, owner.pw_gid)

    def _user_option(self) -> list[str]:
        # As root mariadbd must be told whom to run as; otherwise it runs as us and needs nothing.
        return [f"--user={self.owner}"] if os.geteuid() == 0 else []

    def _socket_path(self) -> Path:
        preferred = self.home / "mariadb.sock"
        if len(str(preferred)) <= _MAX_SOCKET_PATH:
            return preferred
        # A deep home (pytest's temp dirs): a short private directory instead, named after the home.
        tag = hashlib.sha256(str(self.home).encode()).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"wp-agent-db-{tag}" / "mariadb.sock"

    def _prepare_socket_dir(self) -> None:
        """The short socket directory in the shared temp dir: made by us, or refused. Its name can be
        guessed, so one that someone else made (or a symlink) is never adopted."""
        directory = self.socket.parent
        if directory == self.home:
            return
        owner = pwd.getpwnam(self.owner)
        try:
            directory.mkdir(mode=0o700)
            if os.geteuid() == 0:
                os.chown(directory, owner.pw_uid, owner.pw_gid)
        except FileExistsError:
            pass
        info = directory.lstat()
        ours = stat.S_ISDIR(info.st_mode) and info.st_uid == owner.pw_uid and not info.st_mode & 0o077
        if not ours:
            raise SandboxError(
                "mariadb_socket",
                f"ソケット用ディレクトリ {directory} が別のユーザーのもの（または他人が書き込める状態）のため使用しません。",
            )

    def _pid(self) -> int | None:
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if _alive(pid) and _serves(pid, self.pid_file) else None


def _os_user() -> str:
    return pwd.getpwuid(os.geteuid()).pw_name


def _serves(pid: int, pid_file: Path) -> bool:
    """Whether `pid` is the server that writes `pid_file`. A server killed outright leaves its pid file
    behind, and the number is soon another process's (a test worker, a shell): stopping the sandbox
    must never signal that one."""
    try:
        arguments = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"--pid-file={pid_file}".encode() in arguments


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (our own child that exited) is not running
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _answers(path: Path) -> bool:
    """Whether a MariaDB server greets on the unix socket (it speaks first)."""
    if not path.exists():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(2.0)
        try:
            probe.connect(str(path))
            return len(probe.recv(8)) > 0
        except OSError:
            return False
