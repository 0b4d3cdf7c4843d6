"""Cold-start benchmark: importing the turn handler vs importing its heavy dependencies eagerly.

Run from the repository root:  python bench/cold_start.py

Prints, on stdout, exactly:
  BENCH cold_import_ratio <r> x goal=<=0.5
Each side is a fresh interpreter, measured alternately RUNS times (median): the handler module
(`functions.turn.handler`, which defers anthropic, paramiko and boto3 until a turn needs them)
against `anthropic`, `paramiko`, `boto3` and Powertools' Logger/Tracer/Metrics imported up front
(what a handler that imported everything at module top would pay before its first line runs).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 7
HANDLER = "import functions.turn.handler"
EAGER = (
    "import anthropic, paramiko, boto3\n"
    "from aws_lambda_powertools import Logger, Metrics, Tracer\n"
    "from aws_lambda_powertools.utilities import parameters\n"
    "boto3.client('dynamodb', region_name='ap-northeast-1')\n"
)
TIMER = "import time\n_t = time.perf_counter()\n{body}\nprint(time.perf_counter() - _t)\n"


def _measure(body: str) -> float:
    # Bytecode is written (any value of PYTHONDONTWRITEBYTECODE, even "0", stops that), so the first
    # run of each side warms the caches and the measured runs compare imports, not compiling.
    env = {
        **{key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"},
        "PYTHONPATH": f"{ROOT}:{ROOT / 'layers' / 'core'}",
        "POWERTOOLS_SERVICE_NAME": "wp-agent",
        "AWS_DEFAULT_REGION": "ap-northeast-1",
    }
    completed = subprocess.run(
        [sys.executable, "-X", "frozen_modules=on", "-c", TIMER.format(body=body)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=True,
    )
    return float(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    _measure(HANDLER)  # warm the bytecode caches for both sides
    _measure(EAGER)
    handler_times: list[float] = []
    eager_times: list[float] = []
    for _ in range(RUNS):
        handler_times.append(_measure(HANDLER))
        eager_times.append(_measure(EAGER))
    handler = statistics.median(handler_times)
    eager = statistics.median(eager_times)
    print(
        f"turn handler import {handler * 1000:.0f} ms, eager dependencies {eager * 1000:.0f} ms",
        file=sys.stderr,
    )
    print(f"BENCH cold_import_ratio {handler / eager:.2f} x goal=<=0.5")


if __name__ == "__main__":
    main()
