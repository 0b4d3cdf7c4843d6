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
    """The longest one command can take: a probe of an idle connection, connecting with every
    retry, once more after a dropped connection, opening the channel, the command and its grace."""
    connect_timeout = settings.vps_ssh_connect_timeout
    connecting = (1 + CONNECT_RETRIES) * _TIMEOUTS_PER_ATTEMPT * connect_timeout
    backing_off = RETRY_BASE_SECONDS * ((1 << CONNECT_RETRIES) - 1)
    channel = min(connect_timeout, IDLE_PROBE_TIMEOUT_SECONDS) + connect_timeout
    return 2 * (connecting + backing_off) + channel + settings.command_timeout_seconds + LOCAL_GRACE_SECONDS
