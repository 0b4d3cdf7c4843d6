"""The command line the SSH executor sends: every word shell-quoted, so the shell on the host sees
only literal arguments, and `timeout` so nothing outlives the time limit."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from wp_agent.executors.php_launch import PhpLaunch
from wp_agent.executors.ssh_timing import REMOTE_KILL_AFTER_SECONDS


def build_remote_command(
    wp_cli_bin: str,
    wp_path: str,
    argv: Sequence[str],
    timeout_seconds: float,
    *,
    allow_root: bool = False,
    wp_user: str | None = None,
    launch: PhpLaunch | None = None,
) -> str:
    """`exec timeout -k 5 <secs> <wp…> --path=<wp_path> [--user=…] [--allow-root] <argv…>`.

    WP-CLI refuses to run as root unless told; `allow_root` is set when we log in as root.
    `wp_user` is the target's configured WordPress user (the policy refuses --user from the model).
    With a cached `launch` the same arguments go to PHP with the opcache flags when the launch's
    guard still holds on the host, else to `wp` as configured (php_launch.py).
    """
    limit = ["timeout", "-k", str(REMOTE_KILL_AFTER_SECONDS), f"{timeout_seconds:g}"]
    arguments = [
        f"--path={wp_path}",
        *([f"--user={wp_user}"] if wp_user else []),
        *(["--allow-root"] if allow_root else []),
        *argv,
    ]
    configured = [*limit, *shlex.split(wp_cli_bin)]
    # `exec`: `timeout` becomes the session's leader, so the process group sshd kills on an interrupt
    # (a `signal` request) is the command's own (a forked `timeout` would move to a group of its own).
    if launch is None or not launch.cached:
        return f"exec {shlex.join([*configured, *arguments])}"
    # The arguments are written once (`set --`), whichever way PHP starts.
    return (
        f"set -- {shlex.join(arguments)}; "
        f'if {launch.shell_guard()}; then exec {shlex.join([*limit, *launch.php_argv()])} "$@"; fi; '
        f'exec {shlex.join(configured)} "$@"'
    )
