"""Undo benchmark: extra wall time per write command for capturing before-images, on a real WordPress
over the real-sshd rig whose `wp` is the plain phar, as on a VPS (tests/fakes/wordpress.py, sshd.py).

Run from the repository root:  python bench/undo_capture.py

Prints, on stdout, exactly:
  BENCH undo_capture_overhead_ms <ms> ms goal=<=100

The agent captures per reply: the before-images of all the writes of one model reply are read
together before any of them runs (policy-checked reads over concurrent channels of the connection,
a read several images need made once), then the writes run side by side. Each sample runs one reply
twice back to back through SshWpCli on a warm connection — its writes alone, and after
`capture_before_all` — alternating which goes first; a write's figure is its reply's paired
difference divided by the reply's writes. The mix holds six single-write replies and four replies of
two or three writes (three post titles; two meta keys of one post; a post's title and a meta key; two
category descriptions); the figure is the median over every write of the mix. stderr gives the
single-write and the multi-write medians apart, and the after-image time (read once the writes ran,
for conflict checks at undo time). `WP_AGENT_OPCACHE=false` measures `wp` started as it is.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.timing import check, log, timed
from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import running_wordpress
from wp_agent.executors.port import CommandResult
from wp_agent.executors.ssh import SshConnectionPool, SshWpCli
from wp_agent.models.undo import UndoCapture
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.undo.capture import capture_before_all, record_after_all

POLICY = CommandPolicy()
Write = tuple[tuple[str, ...], list[str]]


def replies(index: int) -> list[list[str]]:
    """The mix of replies, with values that change every round."""
    return [
        [f"post update 45 --post_title=題名{index}"],
        [f"post meta update 10 views {index}"],
        [f"option update blogdescription 説明{index}"],
        [f"term update category 2 --description=説明{index}"],
        [f"user update 3 --display_name=太郎{index}"],
        ["plugin toggle akismet"],
        [f"post update {post} --post_title=題名{index}" for post in (45, 46, 40)],
        [f"post meta update 10 views {index}", f"post meta update 10 subtitle 副題{index}"],
        [f"post update 12 --post_title=題名{index}", f"post meta update 12 description 説明{index}"],
        [f"term update category {term} --description=説明{index}" for term in (3, 4)],
    ]


def policy_reader(wp: SshWpCli) -> Callable[[list[str]], CommandResult]:
    def read(argv: list[str]) -> CommandResult:
        decision = POLICY.classify_argv(argv)
        check(decision.category is PolicyCategory.READ, "capture read is a read", " ".join(argv))
        return wp.run(list(decision.argv))

    return read


def _run_side_by_side(wp: SshWpCli, writes: Sequence[Write]) -> list[str]:
    """The reply's writes as the agent runs them: side by side, up to the executor's channels."""
    with ThreadPoolExecutor(max_workers=max(1, min(len(writes), wp.max_concurrency))) as pool:
        results = list(pool.map(lambda write: wp.run(write[1]), writes))
    for (_path, argv), result in zip(writes, results, strict=True):
        check(result.ok, "write " + " ".join(argv), result.stderr)
    return [result.stdout for result in results]


def bench(rig: SshdRig, samples: int) -> tuple[list[float], list[float], list[float], list[float]]:
    """Per-write overheads of single-write replies and of multi-write replies, after-image times, and
    the times of single-write replies run alone (the scale of one command on this machine now)."""
    pool = SshConnectionPool()
    single: list[float] = []
    single_alone: list[float] = []
    multi: list[float] = []
    after_times: list[float] = []
    try:
        wp = SshWpCli(rig.settings(), pool=pool)
        read = policy_reader(wp)
        wp.run(["option", "get", "blogname"])  # connect (and probe how PHP starts) outside the measurement
        log(f"our executor starts WP-CLI: {wp.php_launch().describe_ja()}")
        for index in range(samples):
            for commands in replies(index):
                decisions = [POLICY.classify(command) for command in commands]
                writes: list[Write] = [(d.command_path, list(d.argv)) for d in decisions]
                done: list[tuple[list[UndoCapture], list[str]]] = []

                def plain(writes: list[Write] = writes) -> None:
                    _run_side_by_side(wp, writes)

                def captured(writes: list[Write] = writes, done: list[Any] = done) -> None:
                    captures = capture_before_all(writes, read, workers=wp.max_concurrency)
                    for capture in captures:
                        check(capture.revertible, "before-image", capture.reason_ja)
                    done.append((captures, _run_side_by_side(wp, writes)))

                if index % 2 == 0:
                    alone, with_capture = timed(plain), timed(captured)
                else:
                    with_capture, alone = timed(captured), timed(plain)
                captures, outputs = done.pop()
                ran: list[tuple[Sequence[str], Sequence[str], UndoCapture, str]] = [
                    (path, argv, capture, stdout)
                    for (path, argv), capture, stdout in zip(writes, captures, outputs, strict=True)
                ]

                def after(ran: list[tuple[Sequence[str], Sequence[str], UndoCapture, str]] = ran) -> None:
                    record_after_all(ran, read, workers=wp.max_concurrency)

                # Outside the paired timing: the after-image is its own figure (stderr).
                after_times.append(timed(after) / len(writes))
                per_write = (with_capture - alone) / len(writes)
                (single if len(writes) == 1 else multi).extend([per_write] * len(writes))
                if len(writes) == 1:
                    single_alone.append(alone)
    finally:
        pool.close_all()
    return single, multi, after_times, single_alone


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=4, help="rounds over the mix of replies")
    args = parser.parse_args(argv)
    with running_wordpress() as wordpress, SshdRig(wordpress) as rig:
        log(f"WordPress {wordpress.path} (user {wordpress.owner}); sshd on {rig.host}:{rig.port}")
        single, multi, after, alone = bench(rig, args.samples)
    overhead = statistics.median(single + multi) * 1000
    log(f"a single write alone takes {statistics.median(alone) * 1000:.0f} ms (median) on this machine now")
    log(
        f"{len(single) + len(multi)} write commands: before-images add {overhead:.0f} ms per write (median); "
        f"in single-write replies {statistics.median(single) * 1000:.0f} ms, in replies of several writes "
        f"{statistics.median(multi) * 1000:.0f} ms per write; the after-images take "
        f"{statistics.median(after) * 1000:.0f} ms per write more after the writes (median)"
    )
    print(f"BENCH undo_capture_overhead_ms {overhead:.0f} ms goal=<=100")
    return 0


if __name__ == "__main__":
    sys.exit(main())
