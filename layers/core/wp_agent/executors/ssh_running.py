"""One WP-CLI command over an SSH channel: started, its output read within its time limit, and ended
on an interrupt (Ctrl-C).

Closing a channel does not end a command on the server (without a terminal nothing signals it), so
ending one sends the channel a `signal` request (RFC 4254 §6.9) for SIGKILL: OpenSSH's sshd kills the
session's process group — `timeout`, the shell, PHP — and reports the exit signal. sshd refuses it for a
forced command (authorized_keys `command=`); then no exit arrives, the end stays unconfirmed and is
reported as such (the remote `timeout` still ends the command at its time limit).
"""

from __future__ import annotations

import logging
import selectors
import time

import paramiko
from paramiko.common import cMSG_CHANNEL_REQUEST

from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors import running
from wp_agent.executors.output import CappedOutput, finished_result
from wp_agent.executors.port import CommandResult

logger = logging.getLogger(__name__)

# GNU timeout's exit status when it ended the command (124), or killed it after -k (128 + 9).
_TIMEOUT_EXIT_CODES = frozenset({124, 137})
_READ_CHUNK = 64 * 1024


def run_on_channel(
    channel: paramiko.Channel,
    command: str,
    label: str,
    timeout_seconds: float,
    *,
    grace_seconds: float,
    output_limit: int,
    host: str,
) -> CommandResult:
    """Run `command` on the opened `channel`; waits `timeout_seconds` plus `grace_seconds` (the remote
    `timeout` reports first) before giving up locally."""
    started = time.monotonic()
    deadline = started + timeout_seconds + grace_seconds
    stdout = CappedOutput(output_limit)
    stderr = CappedOutput(output_limit)
    try:
        channel.exec_command(command)
        channel.shutdown_write()  # stdin closed: a prompt fails instead of waiting
    except (paramiko.SSHException, EOFError, OSError) as exc:
        raise WpAgentError(
            AgentErrorCode.SSH_CONNECTION_FAILED,
            "SSHでコマンドを開始できませんでした（接続が切れた可能性があります）。",
            details={"cause": "exec_failed", "command": label, "errorType": type(exc).__name__},
        ) from exc
    remote = RemoteCommand(channel, label, host)
    with running.tracked(remote), selectors.DefaultSelector() as selector:
        # The channel's fileno becomes readable on stdout data, stderr data or close.
        selector.register(channel, selectors.EVENT_READ)
        while not _drain_once(channel, stdout, stderr):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                close_quietly(channel)
                raise _timeout_error(label, started, timeout_seconds)
            selector.select(min(remaining, 1.0))

    exit_code = channel.recv_exit_status()
    duration_ms = int((time.monotonic() - started) * 1000)
    if exit_code == -1 and remote.ended_by_request:
        if remote.given_up:
            raise WpAgentError(
                AgentErrorCode.CANCELLED,
                "中断しましたが、サーバー上でこのコマンドが終了したかは確認できませんでした"
                f"（遅くとも制限時間の{timeout_seconds:g}秒後に終了します）。",
                details={"cause": "interrupt_unconfirmed", "command": label},
            )
        # Killed on the interrupt (sshd reports an exit signal, not a status): a killed command.
        exit_code = running.KILLED_EXIT_CODE
    if exit_code == -1:
        raise WpAgentError(
            AgentErrorCode.SSH_CONNECTION_FAILED,
            "コマンドの実行中にSSH接続が切れました。コマンドが実行されたかどうかをサーバーで確認してください。",
            details={"cause": "connection_lost", "command": label, "durationMs": duration_ms},
        )
    if exit_code in _TIMEOUT_EXIT_CODES and duration_ms >= timeout_seconds * 1000:
        raise _timeout_error(label, started, timeout_seconds)
    return finished_result(
        stdout, stderr, exit_code=exit_code, duration_ms=duration_ms, label=label, via="ssh"
    )


def _drain_once(channel: paramiko.Channel, stdout: CappedOutput, stderr: CappedOutput) -> bool:
    """Read what is buffered; True once the command has exited and all its output was read."""
    while channel.recv_ready():
        stdout.write(channel.recv(_READ_CHUNK))
    while channel.recv_stderr_ready():
        stderr.write(channel.recv_stderr(_READ_CHUNK))
    finished = channel.exit_status_ready() and bool(channel.eof_received or channel.closed)
    return finished and not channel.recv_ready() and not channel.recv_stderr_ready()


def _timeout_error(label: str, started: float, timeout_seconds: float) -> WpAgentError:
    duration_ms = int((time.monotonic() - started) * 1000)
    logger.warning(
        "wp-cli over ssh timed out",
        extra={"command": label, "timeout_seconds": timeout_seconds, "duration_ms": duration_ms},
    )
    return WpAgentError(
        AgentErrorCode.COMMAND_TIMEOUT,
        f"コマンドが制限時間（{timeout_seconds:g}秒）内に終わらなかったため中断しました。",
        details={"timeoutSeconds": timeout_seconds, "durationMs": duration_ms},
    )


class RemoteCommand:
    """A command on a channel, as `running` ends it on an interrupt."""

    def __init__(self, channel: paramiko.Channel, label: str, host: str) -> None:
        self.channel = channel
        self.label = label
        self.host = host
        self.ended_by_request = False
        self.given_up = False  # no end seen in time: the channel was closed here instead

    def end(self) -> None:
        self.ended_by_request = True
        message = paramiko.Message()
        message.add_byte(cMSG_CHANNEL_REQUEST)
        message.add_int(self.channel.remote_chanid)
        message.add_string("signal")
        message.add_boolean(False)  # no reply: sshd answers a refusal only in its log
        message.add_string("KILL")
        try:
            # paramiko has no public call for a signal request; it sends every channel request this way.
            self.channel.get_transport()._send_user_message(message)  # type: ignore[attr-defined]
        except (paramiko.SSHException, EOFError, OSError) as exc:
            logger.warning(
                "could not send the interrupt to a remote command",
                extra={"host": self.host, "command": self.label, "error_type": type(exc).__name__},
            )

    def ended(self, seconds: float) -> bool:
        # The server reports the exit (or closes the channel) once the process group is gone.
        if self.channel.status_event.wait(seconds):
            return True
        logger.warning(
            "a remote command did not confirm its end after the interrupt",
            extra={"host": self.host, "command": self.label, "waited_seconds": seconds},
        )
        self.given_up = True
        close_quietly(self.channel)  # the run stops waiting for it; the server's `timeout` still ends it
        return False


def close_quietly(channel: paramiko.Channel) -> None:
    """Close a channel whose connection may already be gone: paramiko raises EOFError (or an SSH/socket
    error) sending the close on a dead transport, which must not replace the error that is being raised
    about that very connection (nor skip the bookkeeping after the close)."""
    try:
        channel.close()
    except (paramiko.SSHException, EOFError, OSError):
        logger.debug("closing a channel of a dropped connection failed", exc_info=True)
