"""Guards of the suite's time budget (a fresh clone's `make test` in 10 minutes on two cores), by counts
rather than timings: the parts that cost most stay split, shared or out of every worker's collection."""

from __future__ import annotations

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
