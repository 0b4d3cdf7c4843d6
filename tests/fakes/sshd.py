"""A real OpenSSH sshd on 127.0.0.1 for tests and benchmarks, with the real WP-CLI as `wp`.

    with running_wordpress() as wordpress, SshdRig(wordpress) as rig:
        wp = SshWpCli(rig.settings())
        wp.run(["post", "list", "--format=json"])

The rig lives in a temp directory: an ed25519 host key and client key, a minimal sshd_config
(own PidFile, AuthorizedKeysFile, ListenAddress 127.0.0.1, ephemeral port, Debian's sftp-server as
the SFTP subsystem for staged media), a `bin/` directory that sshd's `SetEnv PATH` puts first,
holding `wp` (the verified WP-CLI phar itself, run by its `#!/usr/bin/env php` with Debian's PHP on
the tests' WordPress, tests/fakes/wordpress.py: a plain phar without opcache, as on a VPS) and `wp-stub` (tests/fakes/wp_stub.py, for timeouts, huge output and
concurrency probes). Sessions log in as a dedicated unprivileged user with a plain /bin/sh (as root;
otherwise as ourselves): no login shell rc files, the way the README advises for production. (A login
user with another shell gets an authorized_keys `command=` that sets PATH after its rc files.) `set_fault` puts a shell script running
tests/fakes/wp_faults.py in front of the phar for commands that should fail or hang, until `clear_faults`. Installs `openssh-server` with apt-get
when sshd is missing. Every wait is bounded and `stop()` (also run at exit) ends the listener and
its sessions.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from tests.fakes.wordpress import TestWordPress
from wp_agent.config import CliSettings
from wp_agent.sandbox.http_front import HttpFront
from wp_agent.sandbox.processes import wait_or_kill
from wp_agent.sandbox.wp_cli import verified_phar

SSHD_BIN = Path("/usr/sbin/sshd")
PRIVSEP_DIR = Path("/run/sshd")
HOST = "127.0.0.1"
WP_STUB = Path(__file__).with_name("wp_stub.py")
WP_FAULTS = Path(__file__).with_name("wp_faults.py")
_SFTP_SERVER = "/usr/lib/openssh/sftp-server"  # Debian openssh-server
_START_TIMEOUT_SECONDS = 15.0
_STOP_TIMEOUT_SECONDS = 5.0
_APT_TIMEOUT_SECONDS = 600


class SshdRigError(RuntimeError):
    """The rig could not be set up (sshd missing and not installable, or it did not start)."""


def generate_ed25519_key(private_path: Path | None = None) -> tuple[str, str]:
    """A new ed25519 key: (private OpenSSH text, public `ssh-ed25519 AAAA…` line); written 0600 if a path is given."""
    key = ed25519.Ed25519PrivateKey.generate()
    private_text = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    ).decode()
    public_line = (
        key.public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        .decode()
    )
    if private_path is not None:
        private_path.write_text(private_text)
        private_path.chmod(0o600)
        private_path.with_name(private_path.name + ".pub").write_text(public_line + "\n")
    return private_text, public_line


def random_host_key_line() -> str:
    """A host key line no server here presents (to pin a 'wrong' key)."""
    return generate_ed25519_key()[1]


def ensure_sshd_installed() -> Path:
    """/usr/sbin/sshd, installing Debian's openssh-server with apt-get when it is missing."""
    if SSHD_BIN.exists():
        return SSHD_BIN
    if os.geteuid() != 0:
        raise SshdRigError(
            f"{SSHD_BIN} is missing and we are not root; install it with: sudo apt-get install -y openssh-server"
        )
    apt = shutil.which("apt-get")
    if apt is None:
        raise SshdRigError(
            f"{SSHD_BIN} is missing and apt-get is not available; install OpenSSH server manually"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [apt, "install", "-y", "--no-install-recommends", "openssh-server"]
    print(f"[sshd rig] {SSHD_BIN} not found; running: {' '.join(install)}", file=sys.stderr, flush=True)
    result = subprocess.run(
        install, env=env, capture_output=True, text=True, timeout=_APT_TIMEOUT_SECONDS, check=False
    )
    if result.returncode != 0:
        print("[sshd rig] install failed; running: apt-get update", file=sys.stderr, flush=True)
        subprocess.run(
            [apt, "update"],
            env=env,
            capture_output=True,
            text=True,
            timeout=_APT_TIMEOUT_SECONDS,
            check=False,
        )
        print(f"[sshd rig] retrying: {' '.join(install)}", file=sys.stderr, flush=True)
        result = subprocess.run(
            install, env=env, capture_output=True, text=True, timeout=_APT_TIMEOUT_SECONDS, check=False
        )
    if result.returncode != 0 or not SSHD_BIN.exists():
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-15:])
        raise SshdRigError(
            f"installing openssh-server with apt-get failed (exit {result.returncode}):\n{tail}"
        )
    print("[sshd rig] openssh-server installed", file=sys.stderr, flush=True)
    return SSHD_BIN


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _children_of(pid: int) -> list[int]:
    children: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Field 4 (ppid) follows the parenthesised command name, which may itself contain spaces.
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid:
            children.append(int(entry.name))
    return children


def _descendants_of(pid: int) -> list[int]:
    found: list[int] = []
    pending = [pid]
    while pending:
        for child in _children_of(pending.pop()):
            found.append(child)
            pending.append(child)
    return found


def _kill_pids(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class SshdRig:
    """A throwaway sshd on 127.0.0.1:<ephemeral port> whose sessions find the real WP-CLI as `wp`."""

    def __init__(
        self,
        wordpress: TestWordPress,
        *,
        base_dir: Path | None = None,
        max_startups: str = "200:30:400",
        max_sessions: int = 64,
    ) -> None:
        self.host = HOST
        self.port = 0
        self.wordpress = wordpress
        self.user = wordpress.owner
        self._plain_shell = pwd.getpwnam(self.user).pw_shell in {"/bin/sh", "/bin/dash", "/usr/bin/dash"}
        self._own_dir = base_dir is None
        self.dir = Path(base_dir or tempfile.mkdtemp(prefix="wp-agent-sshd-"))
        self.bin_dir = self.dir / "bin"
        self.phar_path = self.dir / "wp-cli.phar"
        self.home_dir = self.dir / "home"
        self.faults_path = self.dir / "faults.json"
        # Files the login user's commands write (stub logs, canaries): pytest's temp dirs are root's.
        self.scratch_dir = self.dir / "scratch"
        self.host_key_path = self.dir / "ssh_host_ed25519_key"
        self.client_key_path = self.dir / "client_ed25519"
        self.authorized_keys_path = self.dir / "authorized_keys"
        self.config_path = self.dir / "sshd_config"
        self.pid_path = self.dir / "sshd.pid"
        self.log_path = self.dir / "sshd.log"
        self.known_hosts_path = self.dir / "known_hosts"
        self._max_startups = max_startups
        self._max_sessions = max_sessions
        self._process: subprocess.Popen[bytes] | None = None
        # The rig's WordPress over loopback HTTP: the site the health probe's server fetches.
        self.front: HttpFront | None = None
        self._log_file: Any = None
        self.host_key_line = ""
        self.client_public_line = ""
        self._prepared = False
        self._atexit_registered = False

    # --- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> SshdRig:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> SshdRig:
        """Prepare the directory (first time), start sshd and wait until it answers with its banner."""
        sshd = ensure_sshd_installed()
        if self.front is None:
            self.front = HttpFront(self.wordpress.site, workers=2)
            self.front.start()
        PRIVSEP_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)
        if not self._prepared:
            self._prepare()
        last_error = ""
        for _attempt in range(3):
            if not self.port:
                self.port = _free_port()
            self._write_config()
            self._log_file = self.log_path.open("ab")
            self._process = subprocess.Popen(
                [str(sshd), "-D", "-e", "-f", str(self.config_path)],
                stdin=subprocess.DEVNULL,
                stdout=self._log_file,
                stderr=self._log_file,
                start_new_session=True,
            )
            try:
                self._wait_ready()
            except SshdRigError as exc:
                last_error = str(exc)
                self._stop_process()
                self.port = 0  # another process may have taken the port: pick a new one
                continue
            if not self._atexit_registered:
                atexit.register(self.stop)
                self._atexit_registered = True
            return self
        raise SshdRigError(f"sshd did not start: {last_error}")

    def stop(self) -> None:
        """Stop the listener and every session process it forked; keep the directory unless we made it."""
        self._stop_process()
        if self.front is not None:
            self.front.close()
            self.front = None
        if self._own_dir and self.dir.exists() and os.environ.get("WP_AGENT_KEEP_SSHD_DIR") != "1":
            shutil.rmtree(self.dir, ignore_errors=True)

    def restart(self) -> None:
        """Stop and start sshd on the same port (existing connections are dropped)."""
        self._stop_process()
        self.start()

    def rotate_host_key(self) -> str:
        """Give the server a new host key (restarting it); returns the new `ssh-ed25519 …` line."""
        _, self.host_key_line = generate_ed25519_key(self.host_key_path)
        self._write_known_hosts()
        self.restart()
        return self.host_key_line

    def drop_connections(self) -> int:
        """Kill every per-connection sshd process (the listener stays): clients see the server hang up."""
        if self._process is None:
            return 0
        sessions = _children_of(self._process.pid)
        _kill_pids([pid for session in sessions for pid in _descendants_of(session)] + sessions)
        return len(sessions)

    def authorize_key(self, public_line: str, *, forced_command: bool = False) -> None:
        """Let another client key log in (same environment as the rig's own key); with `forced_command`
        through an authorized_keys `command=` even where the login shell is plain (sshd treats such
        sessions differently: it refuses to signal them)."""
        with self.authorized_keys_path.open("a") as handle:
            if self._plain_shell and not forced_command:
                # /bin/sh reads no rc files: sshd's SetEnv PATH puts bin/ first, as in production.
                handle.write(public_line.strip() + "\n")
                return
            # Another login shell may run rc files that prepend to PATH (root's ~/.bashrc here): a forced
            # command sets PATH after them, then runs the client's command line unchanged with /bin/sh.
            # A subsystem request (SFTP, for staged media) reaches the forced command without a command
            # line; it gets Debian's sftp-server, as a stock sshd_config would give it.
            forced = (
                f"PATH={self.bin_dir}:$PATH; export PATH; "
                f'[ -z \\"$SSH_ORIGINAL_COMMAND\\" ] && exec {_SFTP_SERVER}; '
                f'exec /bin/sh -c \\"$SSH_ORIGINAL_COMMAND\\"'
            )
            handle.write(f'command="{forced}" {public_line.strip()}\n')

    def session_pids(self) -> list[int]:
        """One sshd process per open client connection."""
        return [] if self._process is None else _children_of(self._process.pid)

    def faulted_pids(self, *words: str) -> list[int]:
        """The processes (any rig) running a fault (wp_faults.py) for a command with these words."""
        wanted = [str(WP_FAULTS).encode(), *(word.encode() for word in words)]
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if all(word in argv for word in wanted):
                found.append(int(proc.name))
        return found

    def wait_idle(self, timeout: float = 5.0) -> None:
        """Return once no client is connected (a closed client's session process takes a moment to
        exit); SshdRigError when one stays connected, i.e. something still holds a connection open."""
        deadline = time.monotonic() + timeout
        while pids := self.session_pids():
            if time.monotonic() >= deadline:
                raise SshdRigError(f"clients still connected after {timeout:.0f} s (session pids {pids})")
            time.sleep(0.05)

    # --- what clients need -------------------------------------------------------------------

    @property
    def known_hosts_line(self) -> str:
        return f"[{self.host}]:{self.port} {self.host_key_line}"

    @property
    def wp_path(self) -> str:
        return str(self.wordpress.path)

    def set_fault(
        self,
        command: str,
        *,
        error: str | None = None,
        delay_ms: int = 0,
        stdout_bytes: int = 0,
        times: int | None = None,
    ) -> None:
        """Make `wp <command…>` fail with `Error: <error>`, hang `delay_ms`, or flood stdout (see wp_faults.py)."""
        faults = json.loads(self.faults_path.read_text() or "[]")
        faults.append(
            {
                "command": command,
                "error": error,
                "delay_ms": delay_ms,
                "stdout_bytes": stdout_bytes,
                "times": times,
            }
        )
        self.faults_path.write_text(json.dumps(faults))
        self._install_fault_wrapper()

    def clear_faults(self) -> None:
        self.faults_path.write_text("")
        if self._prepared:
            self._install_plain_wp()

    def settings(self, **overrides: Any) -> CliSettings:
        """CliSettings for SshWpCli against this server (key method A, pinned host key); overrides win.

        Every key source is set explicitly so variables in the caller's environment cannot leak in.
        """
        values: dict[str, Any] = {
            "wp_cli_mode": "ssh",
            "vps_host": self.host,
            "vps_port": self.port,
            "vps_ssh_user": self.user,
            "wp_path": self.wp_path,
            "wp_cli_bin": "wp",
            "wp_cli_timeout": 60_000,
            "vps_ssh_key_path": self.client_key_path,
            "vps_ssh_key_secret_arn": None,
            "vps_ssh_key_secret_id": None,
            "vps_ssh_key_vault_path": None,
            "vps_ssh_private_key": None,
            "vps_ssh_key_passphrase": None,
            "vps_ssh_host_key": self.host_key_line,
            "vps_ssh_known_hosts": None,
            "vps_ssh_connect_timeout": 10.0,
            "vps_ssh_max_channels": 5,
        }
        values.update(overrides)
        return CliSettings(**values)

    def environment(self) -> dict[str, str]:
        """The same configuration as environment variables, for `wp-agent` run as a process."""
        return {
            "WP_CLI_MODE": "ssh",
            "VPS_HOST": self.host,
            "VPS_PORT": str(self.port),
            "VPS_SSH_USER": self.user,
            "WP_PATH": self.wp_path,
            "VPS_SSH_KEY_PATH": str(self.client_key_path),
            "VPS_SSH_HOST_KEY": self.host_key_line,
            "VPS_SSH_CONNECT_TIMEOUT": "10",
            "WP_AGENT_HEALTH_CONNECT": self.health_connect,
        }

    @property
    def health_connect(self) -> str:
        return f"127.0.0.1:{self.front.port}" if self.front is not None else ""

    def ssh_client_argv(self, remote_command: str) -> list[str]:
        """The OpenSSH `ssh` client invocation for one command (one process and connection per call)."""
        return [
            "ssh",
            "-p",
            str(self.port),
            "-i",
            str(self.client_key_path),
            "-o",
            "BatchMode=yes",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            f"UserKnownHostsFile={self.known_hosts_path}",
            "-o",
            "GlobalKnownHostsFile=/dev/null",
            "-o",
            "LogLevel=ERROR",
            "-o",
            "ConnectTimeout=10",
            f"{self.user}@{self.host}",
            remote_command,
        ]

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # --- internals ---------------------------------------------------------------------------

    def _prepare(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.dir.chmod(0o711)  # the login user reaches bin/, home/ and faults.json; keys stay root's
        self.bin_dir.mkdir(mode=0o755, exist_ok=True)
        self.home_dir.mkdir(exist_ok=True)
        self.scratch_dir.mkdir(mode=0o700, exist_ok=True)
        self.faults_path.write_text("")
        self.faults_path.chmod(0o600)
        self.authorized_keys_path.write_text("")
        self.authorized_keys_path.chmod(0o600)
        if os.geteuid() == 0:
            # sshd reads authorized_keys as the login user; the user's commands update faults.json.
            login = pwd.getpwnam(self.user)
            for owned in (self.home_dir, self.scratch_dir, self.faults_path, self.authorized_keys_path):
                os.chown(owned, login.pw_uid, login.pw_gid)
        _, self.host_key_line = generate_ed25519_key(self.host_key_path)
        _, self.client_public_line = generate_ed25519_key(self.client_key_path)
        self.authorize_key(self.client_public_line)
        self._write_wrappers()
        self._prepared = True

    def _write_wrappers(self) -> None:
        # `wp` is the plain WP-CLI phar, as on a VPS: no opcache unless the client starts PHP with it.
        shutil.copyfile(verified_phar(), self.phar_path)
        self.phar_path.chmod(0o555)
        self._install_plain_wp()
        # The login user cannot run our interpreter (it may live in root's home); the shims need only
        # the standard library.
        self._install("wp-stub", f'exec {self._python} {shlex.quote(str(WP_STUB))} "$@"')

    @property
    def _python(self) -> str:
        return shlex.quote(shutil.which("python3", path="/usr/bin:/bin") or sys.executable)

    def _install_plain_wp(self) -> None:
        path = self.bin_dir / "wp"
        if path.exists() and path.samefile(self.phar_path):
            return  # rename() of a hard link onto itself does nothing and would leave the link behind
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        os.link(self.phar_path, tmp)
        tmp.replace(path)  # atomic: a command starting now sees the old or the new `wp`

    def _install_fault_wrapper(self) -> None:
        """A shell script in front of the plain phar (tests/fakes/wp_faults.py) while faults are set."""
        real = ["php", str(self.phar_path)]
        self._install(
            "wp",
            f"if [ -s {shlex.quote(str(self.faults_path))} ]; then\n"
            f"  exec {self._python} {shlex.quote(str(WP_FAULTS))} {shlex.quote(str(self.faults_path))} "
            f'{shlex.quote(json.dumps(real))} "$@"\n'
            "fi\n"
            f'exec {shlex.join(real)} "$@"',
        )

    def _install(self, name: str, body: str) -> None:
        path = self.bin_dir / name
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)  # never write through a name that may be a link to the phar
        tmp.write_text("#!/bin/sh\n" + body + "\n")
        tmp.chmod(0o755)
        tmp.replace(path)  # atomic: a command starting now sees the old or the new script

    def _write_known_hosts(self) -> None:
        if self.port:
            self.known_hosts_path.write_text(self.known_hosts_line + "\n")

    def _write_config(self) -> None:
        self._write_known_hosts()
        self.config_path.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    f"ListenAddress {self.host}",
                    f"HostKey {self.host_key_path}",
                    f"PidFile {self.pid_path}",
                    f"AuthorizedKeysFile {self.authorized_keys_path}",
                    "StrictModes no",
                    "UsePAM no",
                    "PubkeyAuthentication yes",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "PermitRootLogin prohibit-password",
                    f"AllowUsers {self.user}",
                    f"MaxSessions {self._max_sessions}",
                    f"MaxStartups {self._max_startups}",
                    "LoginGraceTime 30",
                    "PrintMotd no",
                    "UseDNS no",
                    "X11Forwarding no",
                    "AllowTcpForwarding no",
                    f"Subsystem sftp {_SFTP_SERVER}",  # media import stages files over SFTP
                    "LogLevel VERBOSE",
                    # Sessions must not depend on the host user's dotfiles (here root's ~/.bashrc runs
                    # `pyenv init`, ~100 ms of CPU per command): give them an empty home instead.
                    f"SetEnv HOME={self.home_dir} PATH={self.bin_dir}:/usr/local/bin:/usr/bin:/bin",
                    "",
                ]
            )
        )

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                raise SshdRigError(f"sshd exited with {self._process.returncode}:\n{self.log_tail()}")
            try:
                with socket.create_connection((self.host, self.port), timeout=1.0) as sock:
                    sock.settimeout(2.0)
                    if sock.recv(64).startswith(b"SSH-2.0-"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise SshdRigError(f"sshd did not answer on {self.host}:{self.port} in time:\n{self.log_tail()}")

    def _stop_process(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            sessions = [
                pid for session in _children_of(process.pid) for pid in [session, *_descendants_of(session)]
            ]
            if process.poll() is None:
                process.terminate()
                wait_or_kill(process, _STOP_TIMEOUT_SECONDS)
            # Session processes outlive the listener; end them (they are ours: forked by our sshd).
            _kill_pids(sessions)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
