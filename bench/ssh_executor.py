"""SSH executor benchmark: pooled paramiko channels vs one `ssh` process per command, and concurrency.

Run from the repository root:  python bench/ssh_executor.py

Starts a real WordPress and the real-sshd rig in front of it (tests/fakes/wordpress.py, sshd.py) and
prints, on stdout, exactly:
  BENCH ssh_pooled_vs_process <ratio> x goal=>=2
  BENCH ssh_concurrent_vs_sequential <ratio> x goal=>=2.5
Details go to stderr. Both sides of each ratio are measured in this run, against the same sshd.

Both figures measure the SSH executor itself, so the remote command is tests/fakes/wp_stub.py: it
answers at once (pooled vs process) or waits 300 ms on the server (concurrency). With WordPress as
the remote command its bootstrap dominates, and it is CPU-bound: this 2-core machine cannot run five
at once. The figures on a real site, against WP-CLI's own `--ssh`, are bench/real_wordpress.py's
(`--wp-bin wp` runs the pooled figure with the real WP-CLI here too).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.timing import check, log, timed
from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import running_wordpress
from wp_agent.executors.ssh import SshConnectionPool, SshWpCli
from wp_agent.executors.ssh_command import build_remote_command

LIST_ARGV = ["post", "list", "--format=json"]
# Five independent commands, as the agent issues them in one turn, each waiting on the server.
INDEPENDENT = [["--stub-sleep=0.3", f"--stub-marker=bench-{n}"] for n in range(5)]


def pooled_run(rig: SshdRig, wp_bin: str, count: int) -> None:
    """`count` sequential commands through one SshWpCli on a fresh pool (the connect is included)."""
    pool = SshConnectionPool()
    try:
        wp = SshWpCli(rig.settings(wp_cli_bin=wp_bin), pool=pool)
        for _ in range(count):
            result = wp.run(LIST_ARGV)
            check(result.ok, "pooled", result.stderr)
    finally:
        pool.close_all()


def process_run(rig: SshdRig, wp_bin: str, count: int) -> None:
    """`count` invocations of the OpenSSH client, one process and one connection per command."""
    remote = build_remote_command(wp_bin, rig.wp_path, LIST_ARGV, 60)
    for _ in range(count):
        done = subprocess.run(
            rig.ssh_client_argv(remote), capture_output=True, text=True, timeout=60, check=False
        )
        check(done.returncode == 0, "ssh process", done.stderr)


def bench_pooled_vs_process(rig: SshdRig, wp_bin: str, rounds: int, count: int = 20) -> float:
    pooled_run(rig, wp_bin, 2)  # warm-up: fills the OS caches (and PHP's opcache with --wp-bin wp)
    process_run(rig, wp_bin, 2)
    pooled_times: list[float] = []
    process_times: list[float] = []
    for _ in range(rounds):  # alternate so drift affects both sides alike
        process_times.append(timed(lambda: process_run(rig, wp_bin, count)))
        pooled_times.append(timed(lambda: pooled_run(rig, wp_bin, count)))
    pooled, process = statistics.median(pooled_times), statistics.median(process_times)
    log(
        f"{count} x `{' '.join(LIST_ARGV)}`: ssh process per command {process:.3f}s, "
        f"pooled SshWpCli {pooled:.3f}s (median of {rounds} rounds; per command "
        f"{process / count * 1000:.1f} ms vs {pooled / count * 1000:.1f} ms)"
    )
    return process / pooled


def bench_concurrent_vs_sequential(rig: SshdRig, rounds: int) -> float:
    pool = SshConnectionPool()
    try:
        wp = SshWpCli(rig.settings(wp_cli_bin="wp-stub"), pool=pool)
        wp.run(["--stub-exit=0"])  # connect outside the measurement (same for both sides)

        def run_all(commands: Sequence[list[str]], concurrently: bool) -> None:
            if concurrently:
                with ThreadPoolExecutor(max_workers=len(commands)) as executor:
                    results = list(executor.map(wp.run, commands))
            else:
                results = [wp.run(argv) for argv in commands]
            for argv, result in zip(commands, results, strict=True):
                check(result.ok, " ".join(argv), result.stderr)

        sequential_times: list[float] = []
        concurrent_times: list[float] = []
        for _ in range(rounds):
            sequential_times.append(timed(lambda: run_all(INDEPENDENT, concurrently=False)))
            concurrent_times.append(timed(lambda: run_all(INDEPENDENT, concurrently=True)))
    finally:
        pool.close_all()
    sequential, concurrent = statistics.median(sequential_times), statistics.median(concurrent_times)
    log(
        f"{len(INDEPENDENT)} independent commands waiting 300 ms on the server: sequential {sequential:.3f}s, "
        f"concurrent over one connection {concurrent:.3f}s (median of {rounds} rounds)"
    )
    return sequential / concurrent


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3, help="measurements per side (median is reported)")
    parser.add_argument(
        "--wp-bin", default="wp", help="remote WP-CLI command (default: the rig's real WP-CLI)"
    )
    args = parser.parse_args(argv)
    with running_wordpress() as wordpress, SshdRig(wordpress) as rig:
        log(f"sshd rig on {rig.host}:{rig.port} ({rig.dir})")
        pooled_ratio = bench_pooled_vs_process(rig, args.wp_bin, args.rounds)
        concurrent_ratio = bench_concurrent_vs_sequential(rig, args.rounds)
    print(f"BENCH ssh_pooled_vs_process {pooled_ratio:.2f} x goal=>=2")
    print(f"BENCH ssh_concurrent_vs_sequential {concurrent_ratio:.2f} x goal=>=2.5")
    return 0


if __name__ == "__main__":
    sys.exit(main())
