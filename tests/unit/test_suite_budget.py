"""Guards of the suite's time budget (a fresh clone's `make test` in 10 minutes on two cores), by counts
rather than timings: the parts that cost most stay split, shared or out of every worker's collection."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.integration import test_undo_corpus
from tests.integration.undo_corpus import SCENARIOS

ROOT = Path(__file__).resolve().parents[2]


def test_the_undo_corpus_runs_in_chunks_the_workers_share_evenly() -> None:
    """A chunk of about 16 scenarios is 15 s on the sandbox: no worker is left running a long tail."""
    assert len(SCENARIOS) / test_undo_corpus.CHUNKS <= 16


def test_schemathesis_cases_are_not_collected_by_every_worker(pytestconfig: pytest.Config) -> None:
    """Schemathesis generates its cases while pytest collects the module (about 20 s of CPU): the module
    is not named like a test module, so only test_api_contract.py's own pytest process collects it."""
    cases = ROOT / "tests" / "integration" / "api_contract_cases.py"
    assert cases.exists()
    patterns = pytestconfig.getini("python_files")
    assert not any(Path(cases.name).match(pattern) for pattern in patterns), patterns


def test_the_type_check_reuses_the_machines_mypy_cache() -> None:
    """A full mypy run is about 70 s of one core; with the cache of the last check on this machine it is
    about one second. The cache lives outside the checkout (a fresh clone has none of its own), and mypy
    re-checks every file whose hash or options differ, so nothing stale passes."""
    environment = {k: v for k, v in os.environ.items() if k not in {"MYPY_CACHE_DIR", "XDG_CACHE_HOME"}}
    shown = subprocess.run(
        ["make", "--no-print-directory", "-s", "--eval", "shown: ; @echo $(MYPY_CACHE_DIR)", "shown"],
        cwd=ROOT, capture_output=True, text=True, check=True, env={**environment, "HOME": "/home/someone"},
    )  # fmt: skip
    assert shown.stdout.strip() == "/home/someone/.cache/wp-agent/mypy"
