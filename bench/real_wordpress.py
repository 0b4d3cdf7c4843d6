"""Real-WordPress benchmark: our SSH executor against WP-CLI's own `--ssh` transport, on a real site.

Run from the repository root:  python bench/real_wordpress.py

Starts a real WordPress (Debian's PHP, MariaDB and files, the verified WP-CLI phar; seeded) and the
real-sshd rig in front of it (tests/fakes/wordpress.py, sshd.py), logging in as a dedicated
unprivileged user with a plain /bin/sh whose `wp` is the plain phar, as on a VPS, and prints, on
stdout, exactly:
  BENCH real_wp_pooled_vs_wpcli_ssh <x> x goal=>=4
  BENCH real_wp_concurrent_vs_wpcli_ssh <x> x goal=>=6
  BENCH real_wp_command_overhead_ms <ms> ms goal=<=5

- pooled vs wp --ssh: 20 sequential `option get blogname` through SshWpCli on a fresh pool (its one
  connect and its launch probe included) vs `wp --ssh=user@127.0.0.1:PORT/path option get blogname`
  20 times — WP-CLI's own transport, one OpenSSH `ssh` process and connection per command, running
  the remote `wp` as it is, as people use it today.
- concurrent vs wp --ssh: 10 independent reads, ours over concurrent channels of one connection (its
  connect included) vs `wp --ssh` one after another.
- overhead: the wall time of a command through SshWpCli (warm connection) minus that of the same
  command started the same way (the same PHP, flags and cache directory: SshWpCli.php_launch) run
  directly on the host as the same user, back to back; the median of those differences.

Our executor starts PHP with the opcache file cache on the host (executors/php_launch.py);
`WP_AGENT_OPCACHE=false python bench/real_wordpress.py` measures it running `wp` as it is. Every
figure is measured side by side in this run (rounds alternate, medians reported). Details go to stderr.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.timing import check, log, timed
from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import TestWordPress, running_wordpress
from wp_agent.executors.ssh import SshConnectionPool, SshWpCli
from wp_agent.sandbox.wp_cli import php_command, verified_phar

BLOGNAME = ["option", "get", "blogname"]
# Ten independent reads, as an agent issues them to look at a site before acting.
READS = [
    ["option", "get", "blogname"],
    ["post", "list", "--post_status=draft", "--format=json", "--fields=ID,post_title"],
    ["post", "list", "--post_type=page", "--format=json"],
    ["post", "get", "45", "--format=json"],
    ["term", "list", "category", "--format=json"],
    ["user", "list", "--format=json", "--fields=ID,user_login,roles"],
    ["comment", "list", "--format=json"],
    ["menu", "list", "--format=json"],
    ["site", "list", "--format=json"],
    ["post", "meta", "list", "45", "--format=json"],
]


class WpCliSsh:
    """`wp --ssh=…` on this host: WP-CLI's own transport, with the rig's key and pinned host key given
    to OpenSSH by an `ssh` wrapper first on PATH (what ~/.ssh/config does for a person)."""

    def __init__(self, rig: SshdRig, scratch: Path) -> None:
        self.target = f"--ssh={rig.user}@{rig.host}:{rig.port}{rig.wp_path}"
        # This side's own `wp` gets an opcache of its own (in its favour); the remote `wp` runs as it is.
        self.wp = php_command(verified_phar(), scratch / "opcache")
        (scratch / "opcache").mkdir(mode=0o700)
        bin_dir = scratch / "bin"
        bin_dir.mkdir()
        options = [
            "-i", str(rig.client_key_path), "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={rig.known_hosts_path}",
            "-o", "GlobalKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
        ]  # fmt: skip
        wrapper = bin_dir / "ssh"
        wrapper.write_text(f'#!/bin/sh\nexec /usr/bin/ssh {shlex.join(options)} "$@"\n')
        wrapper.chmod(0o755)
        self.env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "WP_CLI_ALLOW_ROOT": "1"}

    def run_all(self, commands: Sequence[Sequence[str]]) -> None:
        """One after another, each its own `wp --ssh` process (and ssh connection)."""
        for argv in commands:
            self.run(argv)

    def run(self, argv: Sequence[str]) -> None:
        done = subprocess.run(
            [*self.wp, self.target, *argv],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=120,
            check=False,
        )
        check(done.returncode == 0 and done.stdout.strip() != "", "wp --ssh " + " ".join(argv), done.stderr)


def _ours_sequential(rig: SshdRig, count: int) -> None:
    pool = SshConnectionPool()
    try:
        wp = SshWpCli(rig.settings(), pool=pool)
        for _ in range(count):
            result = wp.run(BLOGNAME)
            check(result.ok, "pooled", result.stderr)
    finally:
        pool.close_all()


def _ours_concurrent(rig: SshdRig) -> None:
    pool = SshConnectionPool()
    try:
        wp = SshWpCli(rig.settings(), pool=pool)
        with ThreadPoolExecutor(max_workers=len(READS)) as workers:
            results = list(workers.map(wp.run, READS))
        for argv, result in zip(READS, results, strict=True):
            check(result.ok, " ".join(argv), result.stderr)
    finally:
        pool.close_all()


def bench_pooled(rig: SshdRig, wpcli: WpCliSsh, rounds: int, count: int = 20) -> float:
    ours, theirs = [], []
    for _ in range(rounds):  # alternate so drift affects both sides alike
        theirs.append(timed(lambda: wpcli.run_all([BLOGNAME] * count)))
        ours.append(timed(lambda: _ours_sequential(rig, count)))
    mine, other = statistics.median(ours), statistics.median(theirs)
    log(
        f"{count} x `option get blogname`: wp --ssh {other:.3f}s ({other / count * 1000:.0f} ms each), "
        f"pooled SshWpCli {mine:.3f}s ({mine / count * 1000:.0f} ms each); median of {rounds} rounds"
    )
    return other / mine


def bench_concurrent(rig: SshdRig, wpcli: WpCliSsh, rounds: int) -> float:
    ours, theirs = [], []
    for _ in range(rounds):
        theirs.append(timed(lambda: wpcli.run_all(READS)))
        ours.append(timed(lambda: _ours_concurrent(rig)))
    mine, other = statistics.median(ours), statistics.median(theirs)
    log(
        f"{len(READS)} independent reads: wp --ssh one after another {other:.3f}s, ours over "
        f"{SshWpCli(rig.settings()).max_concurrency} concurrent channels {mine:.3f}s; median of {rounds} rounds"
    )
    return other / mine


def bench_overhead(rig: SshdRig, wordpress: TestWordPress, samples: int = 40) -> float:
    """Median of paired differences: each sample runs both sides back to back, so a burst of load on
    this shared machine shifts both alike instead of one side's median."""
    pool = SshConnectionPool()
    ours, theirs = [], []
    try:
        wp = SshWpCli(rig.settings(), pool=pool)
        wp.run(BLOGNAME)  # connect (and probe) outside the measurement
        launch = wp.php_launch()
        log(
            f"our executor starts WP-CLI: {launch.reason.value} {shlex.join(launch.php_argv()) if launch.cached else ''}"
        )
        start = launch.php_argv() if launch.cached else [str(rig.bin_dir / "wp")]
        direct = [*start, f"--path={wordpress.path}", *BLOGNAME]
        for index in range(samples):
            pair = [
                lambda: check(wp.run(BLOGNAME).ok, "ssh", ""),
                lambda: _direct(direct, rig),
            ]
            first, second = pair if index % 2 == 0 else pair[::-1]  # alternate which side goes first
            times = (timed(first), timed(second))
            ours.append(times[0] if index % 2 == 0 else times[1])
            theirs.append(times[1] if index % 2 == 0 else times[0])
    finally:
        pool.close_all()
    difference = statistics.median(a - b for a, b in zip(ours, theirs, strict=True))
    log(
        f"`option get blogname`: through SshWpCli {statistics.median(ours) * 1000:.1f} ms, the same PHP "
        f"command directly {statistics.median(theirs) * 1000:.1f} ms (medians of {samples}); median "
        f"difference {difference * 1000:.1f} ms"
    )
    return difference * 1000


def _direct(command: list[str], rig: SshdRig) -> None:
    """As the rig's login user, with its session's HOME and PATH (so the same opcache directory)."""
    user = rig.user if os.geteuid() == 0 and rig.user != "root" else None
    env = {
        "PATH": f"{rig.bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(rig.home_dir),
        "LANG": "C.UTF-8",
    }
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, user=user, timeout=60, check=False
    )
    check(done.returncode == 0, "the same command on the host", done.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3, help="measurements per side (median is reported)")
    args = parser.parse_args(argv)
    with (
        running_wordpress() as wordpress,
        SshdRig(wordpress) as rig,
        tempfile.TemporaryDirectory(prefix="wp-agent-bench-") as scratch,
    ):
        log(f"WordPress {wordpress.path} (user {wordpress.owner}); sshd on {rig.host}:{rig.port}")
        wpcli = WpCliSsh(rig, Path(scratch))
        wpcli.run(BLOGNAME)  # warm-up: PHP's opcache, the OS caches
        _ours_sequential(rig, 2)
        pooled = bench_pooled(rig, wpcli, args.rounds)
        concurrent = bench_concurrent(rig, wpcli, args.rounds)
        overhead = bench_overhead(rig, wordpress)
    print(f"BENCH real_wp_pooled_vs_wpcli_ssh {pooled:.2f} x goal=>=4")
    print(f"BENCH real_wp_concurrent_vs_wpcli_ssh {concurrent:.2f} x goal=>=6")
    print(f"BENCH real_wp_command_overhead_ms {overhead:.1f} ms goal=<=5")
    return 0


if __name__ == "__main__":
    sys.exit(main())
