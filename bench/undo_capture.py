"""Undo benchmark: extra wall time per write command for capturing its before-image, on a real
WordPress over the real-sshd rig (tests/fakes/wordpress.py, sshd.py).

Run from the repository root:  python bench/undo_capture.py

Prints, on stdout, exactly:
  BENCH undo_capture_overhead_ms <ms> ms goal=<=150

Each sample runs one write command twice back to back through SshWpCli on a warm connection — once
alone, once after `capture_before` (its read-only commands, policy-checked, run concurrently over
channels of the same connection) — alternating which goes first; the figure is the median of the
paired differences over a mix of write commands (posts, meta, options, terms, users,
plugins). The after-image (read once the command ran, for conflict checks at undo time) is timed on
its own, outside the pairs, and reported on stderr: per write, undo costs the before-image (the
figure) plus the after-image.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.timing import check, log, timed
from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import running_wordpress
from wp_agent.executors.port import CommandResult
from wp_agent.executors.ssh import SshConnectionPool, SshWpCli
from wp_agent.models.undo import UndoCapture
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.undo.capture import capture_before, record_after

POLICY = CommandPolicy()


def writes(index: int) -> list[str]:
    """The mix of write commands, with values that change every round."""
    return [
        f"post update 45 --post_title=題名{index}",
        f"post meta update 10 views {index}",
        f"option update blogdescription 説明{index}",
        f"term update category 2 --description=説明{index}",
        f"user update 3 --display_name=太郎{index}",
        "plugin toggle akismet",
    ]


def policy_reader(wp: SshWpCli) -> Callable[[list[str]], CommandResult]:
    def read(argv: list[str]) -> CommandResult:
        decision = POLICY.classify_argv(argv)
        check(decision.category is PolicyCategory.READ, "capture read is a read", " ".join(argv))
        return wp.run(list(decision.argv))

    return read


def bench(rig: SshdRig, samples: int) -> tuple[float, float, int]:
    pool = SshConnectionPool()
    before_diffs: list[float] = []
    after_times: list[float] = []
    alone_times: list[float] = []
    captures: list[tuple[Sequence[str], list[str], UndoCapture, str]] = []
    count = 0
    try:
        wp = SshWpCli(rig.settings(), pool=pool)
        read = policy_reader(wp)
        wp.run(["option", "get", "blogname"])  # connect outside the measurement
        for index in range(samples):
            for command in writes(index):
                decision = POLICY.classify(command)
                path, argv = decision.command_path, list(decision.argv)

                def plain(argv: list[str] = argv) -> None:
                    check(wp.run(argv).ok, "write", " ".join(argv))

                def captured(path: Sequence[str] = path, argv: list[str] = argv) -> None:
                    capture = capture_before(path, argv, read, workers=wp.max_concurrency)
                    check(capture.revertible, "before-image", capture.reason_ja)
                    result = wp.run(argv)
                    check(result.ok, "write " + " ".join(argv), result.stderr)
                    captures.append((path, argv, capture, result.stdout))

                def after() -> None:
                    # Outside the paired timing: the after-image is its own figure (stderr).
                    path, argv, capture, stdout = captures.pop()
                    after_times.append(
                        timed(
                            lambda: record_after(
                                path, argv, capture, stdout, read, workers=wp.max_concurrency
                            )
                        )
                    )

                if index % 2 == 0:
                    alone, with_capture = timed(plain), timed(captured)
                else:
                    with_capture, alone = timed(captured), timed(plain)
                after()
                before_diffs.append(with_capture - alone)
                alone_times.append(alone)
                count += 1
    finally:
        pool.close_all()
    log(
        f"a write command alone takes {statistics.median(alone_times) * 1000:.0f} ms (median) on this machine now"
    )
    return statistics.median(before_diffs) * 1000, statistics.median(after_times) * 1000, count


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=4, help="rounds over the mix of write commands")
    args = parser.parse_args(argv)
    with running_wordpress() as wordpress, SshdRig(wordpress) as rig:
        log(f"WordPress {wordpress.path} (user {wordpress.owner}); sshd on {rig.host}:{rig.port}")
        overhead, after, count = bench(rig, args.samples)
    log(
        f"{count} write commands: before-image capture adds {overhead:.0f} ms (median of paired differences); "
        f"recording the after-image takes {after:.0f} ms more after the command (median)"
    )
    print(f"BENCH undo_capture_overhead_ms {overhead:.0f} ms goal=<=150")
    return 0


if __name__ == "__main__":
    sys.exit(main())
