"""The checks of an SSH target, one step at a time so a person sees which one fails: the key and the
pinned host key read, the host reachable, the host key the server presents, the login, then WordPress
(checks.wordpress_checks). A fresh connection of its own (never the shared pool's), no retries, short
timeouts and an overall deadline, so an answer comes within an API request's time."""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence

from wp_agent.config import WpCliSettings
from wp_agent.diagnostics.checks import Check, failed, passed, wordpress_checks
from wp_agent.diagnostics.health import health_checks, probe
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.port import CommandResult, WpCli
from wp_agent.executors.ssh_target import SshTarget

CONNECT_TIMEOUT_SECONDS = 5.0
COMMAND_TIMEOUT_MS = 5_000
# API Gateway answers after 29 s: the checks stop starting commands well before that.
DEADLINE_SECONDS = 20.0


class _Deadline:
    """A WpCli that starts no command once the checks' time is up."""

    def __init__(self, wp_cli: WpCli, ends_at: float) -> None:
        self._wp_cli = wp_cli
        self._ends_at = ends_at

    def run(self, argv: Sequence[str]) -> CommandResult:
        if time.monotonic() >= self._ends_at:
            raise WpAgentError(
                AgentErrorCode.COMMAND_TIMEOUT,
                "点検の制限時間内に終わりませんでした。サーバーの負荷を確認して、もう一度点検してください。",
            )
        return self._wp_cli.run(argv)

    def __getattr__(self, name: str) -> object:
        return getattr(self._wp_cli, name)


def check_ssh_target(settings: WpCliSettings, target: SshTarget) -> list[Check]:
    """Every check of the target, in order; a failed step ends the list with its fix."""
    from wp_agent.executors.ssh import SshWpCli
    from wp_agent.executors.ssh_keys import describe_key, load_ssh_credentials
    from wp_agent.executors.ssh_pool import SshConnectionPool

    ends_at = time.monotonic() + DEADLINE_SECONDS
    try:
        credentials = load_ssh_credentials(settings, target)
    except WpAgentError as exc:
        return [
            failed("ssh.credentials", "SSH鍵とホスト鍵（シークレット）", "読み込めません", exc.message_ja)
        ]
    checks = [
        passed(
            "ssh.credentials",
            "SSH鍵とホスト鍵（シークレット）",
            f"秘密鍵 {describe_key(credentials.private_key)} ／ 固定したホスト鍵 {'、'.join(credentials.host_fingerprints)}",
        )
    ]
    reach = reachable(target.host, target.port)
    checks.append(reach)
    if not reach.ok:
        return checks
    quick = settings.model_copy(
        update={"vps_ssh_connect_timeout": CONNECT_TIMEOUT_SECONDS, "wp_cli_timeout": COMMAND_TIMEOUT_MS}
    )
    pool = SshConnectionPool()
    ssh = SshWpCli(quick, target=target, credentials=credentials, pool=pool, connect_retries=0)
    try:
        login = _login_checks(ssh, target)
        checks += login
        if all(check.ok for check in login):
            found = wordpress_checks(_Deadline(ssh, ends_at))  # type: ignore[arg-type]
            checks += found
            if all(check.ok for check in found):
                # The site as visitors and administrators see it, fetched by the server itself.
                connect = settings.health_connect_for(target.wp_path)
                checks += health_checks(probe(_Deadline(ssh, ends_at), ssh, connect=connect))  # type: ignore[arg-type]
    finally:
        pool.close_all()
    return checks


def reachable(host: str, port: int, timeout: float = CONNECT_TIMEOUT_SECONDS) -> Check:
    label = "接続先に届くか"
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        return failed(
            "ssh.reachable",
            label,
            f"{host}:{port} に接続できません（{type(exc).__name__}）",
            "ホスト名・ポート番号、サーバーが動いているか、ファイアウォールで SSH が許可されているかを確認してください。",
        )
    return passed("ssh.reachable", label, f"{host}:{port}")


def _login_checks(ssh: WpCli, target: SshTarget) -> list[Check]:
    """The host key the server presents, then the login; one harmless command opens the connection."""
    host_key, login = "SSHホスト鍵（固定した鍵と一致するか）", "SSHログイン"
    try:
        ssh.run(["cli", "version"])
    except WpAgentError as exc:
        cause = (exc.details or {}).get("cause")
        if cause == "host_key_mismatch":
            presented = exc.details.get("presented", "")
            return [failed("ssh.host_key", host_key, f"サーバーが提示した鍵: {presented}", exc.message_ja)]
        if cause == "auth_failed":
            return [
                passed("ssh.host_key", host_key, "一致しました"),
                failed("ssh.login", login, f"ユーザー {target.user} で認証できません", exc.message_ja),
            ]
        return [failed("ssh.connect", "SSH接続", "接続できません", exc.message_ja)]
    return [
        passed("ssh.host_key", host_key, "一致しました"),
        passed("ssh.login", login, f"ユーザー {target.user} でログインしました"),
    ]
