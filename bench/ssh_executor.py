"""SSH executor benchmark: pooled paramiko channels vs one `ssh` process per command, and concurrency.

Run from the repository root:  python bench/ssh_executor.py

Starts the real-sshd rig (tests/fakes/sshd.py, simulator as `wp`) and prints, on stdout, exactly:
  BENCH ssh_pooled_vs_process <ratio> x goal=>=2
  BENCH ssh_concurrent_vs_sequential <ratio> x goal=>=2.5
Details go to stderr. Both sides of each ratio are measured in this run, against the same sshd.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.sshd import SshdRig
from wp_agent.executors.ssh import SshConnectionPool, SshWpCli, build_remote_command

LIST_ARGV = ["post", "list", "--format=json"]
# Five independent read-only commands, as the agent issues them in one turn.
INDEPENDENT = [
    ["post", "list", "--format=json"],
    ["post", "list", "--post_type=page", "--format=json"],
    ["user", "list", "--format=json"],
    ["option", "get", "blogname"],
    ["term", "list", "category", "--format=json"],
]


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _timed(action: Callable[[], None]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _check(ok: bool, what: str, detail: str) -> None:
    if not ok:
        raise SystemExit(f"benchmark command failed ({what}): {detail[:500]}")


def pooled_run(rig: SshdRig, wp_bin: str, count: int) -> None:
    """`count` sequential commands through one SshWpCli on a fresh pool (the connect is included)."""
    pool = SshConnectionPool()
    try:
        wp = SshWpCli(rig.settings(wp_cli_bin=wp_bin), pool=pool)
        for _ in range(count):
            result = wp.run(LIST_ARGV)
            _check(result.ok, "pooled", result.stderr)
    finally:
        pool.close_all()


def process_run(rig: SshdRig, wp_bin: str, count: int) -> None:
    """`count` invocations of the OpenSSH client, one process and one connection per command."""
    remote = build_remote_command(wp_bin, rig.wp_path, LIST_ARGV, 60)
    for _ in range(count):
        done = subprocess.run(
            rig.ssh_client_argv(remote), capture_output=True, text=True, timeout=60, check=False
        )
        _check(done.returncode == 0, "ssh process", done.stderr)


def bench_pooled_vs_process(rig: SshdRig, wp_bin: str, rounds: int, count: int = 20) -> float:
    pooled_run(rig, wp_bin, 2)  # warm-up: seeds the site, fills OS caches
    process_run(rig, wp_bin, 2)
    pooled_times: list[float] = []
    process_times: list[float] = []
    for _ in range(rounds):  # alternate so drift affects both sides alike
        process_times.append(_timed(lambda: process_run(rig, wp_bin, count)))
        pooled_times.append(_timed(lambda: pooled_run(rig, wp_bin, count)))
    pooled, process = statistics.median(pooled_times), statistics.median(process_times)
    _log(
        f"{count} x `{' '.join(LIST_ARGV)}`: ssh process per command {process:.3f}s, "
        f"pooled SshWpCli {pooled:.3f}s (median of {rounds} rounds; per command "
        f"{process / count * 1000:.1f} ms vs {pooled / count * 1000:.1f} ms)"
    )
    return process / pooled


def bench_concurrent_vs_sequential(rig: SshdRig, wp_bin: str, rounds: int, bootstrap_ms: int = 300) -> float:
    rig.set_bootstrap_ms(bootstrap_ms)
    pool = SshConnectionPool()
    try:
        wp = SshWpCli(rig.settings(wp_cli_bin=wp_bin), pool=pool)
        wp.run(["option", "get", "blogname"])  # connect outside the measurement (same for both sides)

        def run_all(commands: Sequence[list[str]], concurrently: bool) -> None:
            if concurrently:
                with ThreadPoolExecutor(max_workers=len(commands)) as executor:
                    results = list(executor.map(wp.run, commands))
            else:
                results = [wp.run(argv) for argv in commands]
            for argv, result in zip(commands, results, strict=True):
                _check(result.ok, " ".join(argv), result.stderr)

        sequential_times: list[float] = []
        concurrent_times: list[float] = []
        for _ in range(rounds):
            sequential_times.append(_timed(lambda: run_all(INDEPENDENT, concurrently=False)))
            concurrent_times.append(_timed(lambda: run_all(INDEPENDENT, concurrently=True)))
    finally:
        pool.close_all()
        rig.set_bootstrap_ms(0)
    sequential, concurrent = statistics.median(sequential_times), statistics.median(concurrent_times)
    _log(
        f"{len(INDEPENDENT)} independent commands with {bootstrap_ms} ms bootstrap: sequential {sequential:.3f}s, "
        f"concurrent over one connection {concurrent:.3f}s (median of {rounds} rounds)"
    )
    return sequential / concurrent


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3, help="measurements per side (median is reported)")
    parser.add_argument("--wp-bin", default="wp", help="remote WP-CLI command (default: the simulator as wp)")
    args = parser.parse_args(argv)
    with SshdRig(bootstrap_ms=0) as rig:
        _log(f"sshd rig on {rig.host}:{rig.port} ({rig.dir})")
        pooled_ratio = bench_pooled_vs_process(rig, args.wp_bin, args.rounds)
        concurrent_ratio = bench_concurrent_vs_sequential(rig, args.wp_bin, args.rounds)
    print(f"BENCH ssh_pooled_vs_process {pooled_ratio:.2f} x goal=>=2")
    print(f"BENCH ssh_concurrent_vs_sequential {concurrent_ratio:.2f} x goal=>=2.5")
    return 0


if __name__ == "__main__":
    sys.exit(main())
