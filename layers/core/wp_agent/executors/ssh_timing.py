"""How long the SSH executor waits at each step, and how long a command can go on on the server.
Kept apart from ssh.py so the rate limiter can size its leases without importing paramiko."""

from __future__ import annotations

from wp_agent.config import WpCliSettings

# Connection attempts after the first, and the first back-off (doubling: 1 + 2 + 4 s).
CONNECT_RETRIES = 3
RETRY_BASE_SECONDS = 1.0
# The remote `timeout` sends TERM at the limit and KILL this many seconds later.
REMOTE_KILL_AFTER_SECONDS = 5
# We give up locally only after the remote side had time to report its own timeout.
LOCAL_GRACE_SECONDS = REMOTE_KILL_AFTER_SECONDS + 3.0
# A connection unused for a while is probed with a short channel open before it is trusted.
IDLE_PROBE_TIMEOUT_SECONDS = 5.0


def last_command_ends_seconds(settings: WpCliSettings, holder_lifetime_seconds: float) -> float:
    """However long connecting took, a command starts before its holder's invocation ends, and the
    remote `timeout` ends it within the command timeout and the kill delay after that."""
    return holder_lifetime_seconds + settings.command_timeout_seconds + REMOTE_KILL_AFTER_SECONDS
