"""SshTarget: the one WordPress host an SSH executor talks to, as a value.

The local CLI's target comes from the VPS_* settings; a registered target (serverless) brings its
own host, user, WordPress path and user, and the secret that holds its SSH key and pinned host key
(nothing of the deployment's own VPS_* key or host-key settings applies to it).
"""

from __future__ import annotations

from dataclasses import dataclass

from wp_agent.config import WpCliSettings
from wp_agent.errors import AgentErrorCode, WpAgentError


@dataclass(frozen=True)
class SshTarget:
    host: str
    port: int
    user: str
    wp_path: str
    wp_user: str | None = None
    key_secret_arn: str | None = None
    """When set: the key and the pinned host key come from this Secrets Manager secret only."""

    @classmethod
    def from_settings(cls, settings: WpCliSettings) -> SshTarget:
        if not settings.vps_host:
            raise WpAgentError(
                AgentErrorCode.SSH_CONNECTION_FAILED,
                "WP_CLI_MODE=ssh には VPS_HOST（接続先ホスト）の設定が必要です。",
                details={"cause": "ssh_config", "variables": ["VPS_HOST"]},
            )
        return cls(
            host=settings.vps_host,
            port=settings.vps_port,
            user=settings.vps_ssh_user,
            wp_path=settings.wp_path,
            wp_user=settings.wp_agent_wp_user,
        )
