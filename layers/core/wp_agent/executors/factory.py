"""Pick the WpCli adapter for WP_CLI_MODE (local | ssh | sandbox)."""

from __future__ import annotations

from wp_agent.config import WpCliMode, WpCliSettings
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.local import LocalWpCli
from wp_agent.executors.port import WpCli


def build_wp_cli(settings: WpCliSettings) -> WpCli:
    """The executor for `settings.wp_cli_mode`, its code changes guarded (executors/code_guard.py) unless
    WP_AGENT_GUARD_CODE_CHANGES is off; a clear Japanese error when its settings are incomplete."""
    executor = _executor(settings)
    if not settings.wp_agent_guard_code_changes:
        return executor
    from wp_agent.executors.code_guard import GuardedWpCli, fixed

    connect = fixed(settings.health_connect)
    if settings.wp_cli_mode is WpCliMode.SANDBOX:
        from wp_agent.executors.sandbox import SandboxWpCli, served_site

        if isinstance(executor, SandboxWpCli):
            connect = served_site(executor.site)  # the sandbox has no web server of its own
    return GuardedWpCli(executor, executor, connect=connect)  # type: ignore[arg-type]


def _executor(settings: WpCliSettings) -> WpCli:
    if settings.wp_cli_mode is WpCliMode.LOCAL:
        return LocalWpCli.from_settings(settings)
    if settings.wp_cli_mode is WpCliMode.SANDBOX:
        # Local only (it manages a MariaDB server and PHP); the Lambda layer does not carry it.
        from wp_agent.executors.sandbox import SandboxWpCli

        return SandboxWpCli.from_settings(settings)
    if settings.wp_cli_mode is WpCliMode.SSH:
        # paramiko is loaded only when SSH is actually used.
        from wp_agent.executors.ssh import SshWpCli
        from wp_agent.executors.ssh_keys import KeyMethod, check_key_file, configured_key_method

        if not settings.vps_host:
            raise WpAgentError(
                AgentErrorCode.SSH_CONNECTION_FAILED,
                "WP_CLI_MODE=ssh には VPS_HOST（接続先ホスト）の設定が必要です。",
                details={"cause": "ssh_config", "variables": ["VPS_HOST"]},
            )
        if configured_key_method(settings) is KeyMethod.FILE:
            check_key_file(settings)  # before any model call, not at the first command
        return SshWpCli(settings)
    raise WpAgentError(  # pragma: no cover - WpCliMode is exhaustive
        AgentErrorCode.UNKNOWN_ERROR,
        f"WP_CLI_MODE の値（{settings.wp_cli_mode}）に対応していません。local・ssh・sandbox のいずれかを指定してください。",
    )
