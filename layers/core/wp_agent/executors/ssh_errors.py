"""Why an SSH connection could not be made, in one Japanese sentence with its fix: the exceptions
socket and paramiko raise (refused, silent, not SSH, unknown host, …) mapped once, for the executor and
for `wp-agent sites add`'s host-key fetch alike. `details.cause` stays `unreachable` (clients match on
it); `details.reason` names the case."""

from __future__ import annotations

import errno
import socket

import paramiko

from wp_agent.errors import AgentErrorCode, WpAgentError

# paramiko's words when a line was read and it was not an SSH version we speak ...
_OTHER_PROTOCOL = ("Indecipherable", "Incompatible version")
# ... and, with those, when what answered is not an SSH server (or closed before its banner).
_NOT_SSH_MARKERS = ("protocol banner", *_OTHER_PROTOCOL)


def connect_reason(error: BaseException | None) -> str:
    """refused | timeout | dns | network | not_ssh | dropped | other."""
    if isinstance(error, paramiko.ssh_exception.NoValidConnectionsError) and error.errors:
        # paramiko tried every address of the host; the first one's failure says why
        return connect_reason(next(iter(error.errors.values())))
    if isinstance(error, socket.gaierror):
        return "dns"
    if isinstance(error, ConnectionRefusedError):
        return "refused"
    if isinstance(error, TimeoutError):
        return "timeout"
    if isinstance(error, OSError) and error.errno in {errno.ENETUNREACH, errno.EHOSTUNREACH}:
        return "network"
    if isinstance(error, paramiko.SSHException) and any(m in str(error) for m in _NOT_SSH_MARKERS):
        return "not_ssh"
    if isinstance(error, EOFError | ConnectionError | paramiko.SSHException):
        return "dropped"
    return "other"


def cannot_recover(error: BaseException | None) -> bool:
    """A failure no retry can change: the host name does not exist (not a resolver that failed for
    now: EAI_AGAIN is tried again), or what answered spoke another protocol or SSH version. A port that
    stays silent or closes before its banner may be an sshd at its MaxStartups: that is tried again."""
    if isinstance(error, paramiko.ssh_exception.NoValidConnectionsError) and error.errors:
        return all(cannot_recover(e) for e in error.errors.values())
    if isinstance(error, socket.gaierror):
        return error.errno in {socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)}
    return isinstance(error, paramiko.SSHException) and any(m in str(error) for m in _OTHER_PROTOCOL)


# A port that refuses, a host that does not answer or cannot be routed to: one more try (an sshd that
# is restarting takes well under the first back-off), not the whole series a busy sshd gets.
_SETTLED_AFTER_ONE_RETRY = frozenset({"refused", "timeout", "network"})


def attempts_worth_making(error: BaseException | None, configured: int) -> int:
    """How many connection attempts in all this failure is worth (`configured`: the most)."""
    if cannot_recover(error):
        return 1
    if connect_reason(error) in _SETTLED_AFTER_ONE_RETRY:
        return min(configured, 2)
    return configured


def connect_failure(
    host: str, port: int, error: BaseException | None, *, attempts: int, timeout_seconds: float
) -> WpAgentError:
    """The one error for a connection that did not come up (after `attempts` tries)."""
    reason = connect_reason(error)
    where = f"{host}:{port}"
    tried = f"（{attempts}回試行）" if attempts > 1 else ""
    messages = {
        "refused": f"{where} への接続が拒否されました{tried}。そのポートでSSHサーバーが動いていません。"
        "ポート番号と、サーバーでSSHが動いているかを確認してください。",
        "timeout": f"{where} から{timeout_seconds:g}秒以内に応答がありません{tried}。"
        "ホスト名・ポート番号・ファイアウォールを確認してください。",
        "dns": f"ホスト名 {host} を解決できません{tried}。ホスト名のつづりとネットワーク（DNS）を確認してください。",
        "network": f"{host} に到達できません（ネットワークに届きません）{tried}。接続先とネットワークを確認してください。",
        "not_ssh": f"{where} はSSHサーバーとして応答しませんでした{tried}。別のサービスのポートの可能性があります。"
        "SSHのポート番号（通常は 22）を確認してください。",
        "dropped": f"{where} が接続を途中で閉じました{tried}。サーバーの状態と接続元の制限（MaxStartups、"
        "fail2ban など）を確認してください。",
        "other": f"{where} にSSH接続できませんでした{tried}。ホスト・ポート・ファイアウォール・サーバーの状態を確認してください。",
    }
    return WpAgentError(
        AgentErrorCode.SSH_CONNECTION_FAILED,
        messages[reason],
        details={
            "cause": "unreachable",
            "reason": reason,
            "attempts": attempts,
            "errorType": type(error).__name__ if error is not None else None,
        },
    )
