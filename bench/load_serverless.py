"""Load pass on the serverless stack (the synthesized state machine executed in moto, real handlers in
containers of their own, real sshd + WP-CLI on a real WordPress, the scripted model): 40 sessions from
8 users over 4 targets, every approval clicked twice at once, the last user at the rate limit.

Run from the repository root:  python bench/load_serverless.py [--sessions 40 --users 8 --targets 4]

It runs tests/integration/test_load_serverless.py (whose fixtures build the stack) at that size and
prints its figures, one a line:
  BENCH load_sessions_completed <n>/<m> runs goal=all
  BENCH load_5xx <n> answers goal=0
  BENCH load_commands_run_twice <n> commands goal=0
  BENCH load_executed_records_missing_or_doubled <n> commands goal=0
  BENCH load_decision_records_missing_or_doubled <n> approvals goal=0
  BENCH load_refusals_not_audited_once <n> refusals goal=0
  BENCH load_slot_leases_left <n> leases goal=0
The exit code is the test's: non-zero when any figure misses its goal.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--targets", type=int, default=4)
    args = parser.parse_args()
    env = {
        **os.environ,
        "WP_AGENT_LOAD_SESSIONS": str(args.sessions),
        "WP_AGENT_LOAD_USERS": str(args.users),
        "WP_AGENT_LOAD_TARGETS": str(args.targets),
    }
    test = "tests/integration/test_load_serverless.py"
    # 40 sessions outlast the suite's per-test timeout (pytest-timeout, 300 s) on a shared machine.
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-s",
        "-p",
        "no:randomly",
        "-n",
        "0",
        "--timeout=1800",
        test,
    ]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    lines = done.stdout.splitlines()
    for line in lines:
        if line.startswith("BENCH "):
            print(line)
    if done.returncode != 0:
        sys.stderr.write("\n".join(lines[-40:]) + "\n" + done.stderr[-4000:])
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
