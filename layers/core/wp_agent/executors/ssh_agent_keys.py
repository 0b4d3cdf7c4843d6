"""Key method F: a key held by the person's ssh-agent (SSH_AUTH_SOCK). The private key never leaves
the agent; we keep only its public fingerprint (`SHA256:…`) and ask the agent to sign the login."""

from __future__ import annotations

import os

import paramiko

from wp_agent.executors.ssh_key_sources import config_error

AGENT_SOCKET_VARIABLE = "SSH_AUTH_SOCK"


def agent_keys() -> list[paramiko.PKey]:
    """Every key the running ssh-agent offers; a Japanese error when no agent can be reached."""
    if not os.environ.get(AGENT_SOCKET_VARIABLE):
        raise config_error(
            "ssh-agent に接続できません（SSH_AUTH_SOCK が設定されていません）。ssh-agent を起動して ssh-add で鍵を"
            "追加するか、鍵ファイルを指定してください（wp-agent sites add … --key ファイル）。",
            source="ssh-agent",
        )
    try:
        keys: list[paramiko.PKey] = list(paramiko.Agent().get_keys())
    except (paramiko.SSHException, OSError):
        raise config_error(
            "ssh-agent から鍵の一覧を取得できませんでした。ssh-agent が動いているか（ssh-add -l）確認してください。",
            source="ssh-agent",
        ) from None
    if not keys:
        raise config_error(
            "ssh-agent に鍵がありません。ssh-add <鍵ファイル> で追加してください。", source="ssh-agent"
        )
    return keys


def agent_key(fingerprint: str) -> paramiko.PKey:
    """The agent's key with this `SHA256:…` fingerprint (a leading key type is allowed)."""
    wanted = fingerprint.rsplit(maxsplit=1)[-1] if fingerprint.strip() else ""
    for key in agent_keys():
        if key.fingerprint == wanted:
            return key
    raise config_error(
        f"ssh-agent に鍵 {wanted} がありません。その鍵を ssh-add で追加してください"
        "（ssh-add -l で追加済みの鍵を確認できます）。",
        source="VPS_SSH_AGENT_KEY",
    )
