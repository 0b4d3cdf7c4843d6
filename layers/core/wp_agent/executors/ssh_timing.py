"""How long the SSH executor may wait at each step, and so how long one command can hold an SSH slot.
Kept apart from ssh.py so the rate limiter can size its leases without importing paramiko."""

from __future__ import annotations

from wp_agent.config import Settings

# Connection attempts after the first, and the first back-off (doubling: 1 + 2 + 4 s).
CONNECT_RETRIES = 3
RETRY_BASE_SECONDS = 1.0
# One connection attempt may wait out the TCP connect, the banner and the authentication.
_TIMEOUTS_PER_ATTEMPT = 3
# The remote `timeout` sends TERM at the limit and KILL this many seconds later.
REMOTE_KILL_AFTER_SECONDS = 5
# We give up locally only after the remote side had time to report its own timeout.
LOCAL_GRACE_SECONDS = REMOTE_KILL_AFTER_SECONDS + 3.0
# A connection unused for a while is probed with a short channel open before it is trusted.
IDLE_PROBE_TIMEOUT_SECONDS = 5.0


def longest_command_seconds(settings: Settings) -> float:
    """The longest one command can take: waiting for another command's connect (with every retry)
    that succeeded, then a channel open on a connection that proves dead, connecting again with
    every retry, the channel on the new connection, the command and its grace. (A command queued
    behind a connect that failed fails with it instead of trying once more.)"""
    connect_timeout = settings.vps_ssh_connect_timeout
    connecting = (1 + CONNECT_RETRIES) * _TIMEOUTS_PER_ATTEMPT * connect_timeout
    backing_off = RETRY_BASE_SECONDS * ((1 << CONNECT_RETRIES) - 1)
    channels = 2 * connect_timeout
    return 2 * (connecting + backing_off) + channels + settings.command_timeout_seconds + LOCAL_GRACE_SECONDS


def last_command_ends_seconds(settings: Settings, holder_lifetime_seconds: float) -> float:
    """However long connecting took, a command starts before its holder's invocation ends, and the
    remote `timeout` ends it within the command timeout and the kill delay after that."""
    return holder_lifetime_seconds + settings.command_timeout_seconds + REMOTE_KILL_AFTER_SECONDS
