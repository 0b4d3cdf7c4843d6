"""Guards of the suite's time budget (a fresh clone's `make test` in 10 minutes on two cores), by counts
rather than timings: the parts that cost most stay split, shared or out of every worker's collection."""

from __future__ import annotations

import hashlib
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
    """A full mypy run is about 70 s of one core; with the cache of the last check at this checkout path
    it is about one second. The cache lives outside the checkout (a fresh clone has none of its own), one
    per checkout path (mypy's cache records the virtualenv's absolute paths: checkouts sharing one would
    each find it stale and check everything again), and mypy re-checks every file whose hash or options
    differ, so nothing stale passes."""
    environment = {k: v for k, v in os.environ.items() if k not in {"MYPY_CACHE_DIR", "XDG_CACHE_HOME"}}
    shown = subprocess.run(
        ["make", "--no-print-directory", "-s", "--eval", "shown: ; @echo $(MYPY_CACHE_DIR)", "shown"],
        cwd=ROOT, capture_output=True, text=True, check=True, env={**environment, "HOME": "/home/someone"},
    )  # fmt: skip
    expected = hashlib.sha256(str(ROOT).encode()).hexdigest()[:16]
    assert shown.stdout.strip() == f"/home/someone/.cache/wp-agent/mypy/{expected}"


def test_make_test_keeps_compiled_modules(tmp_path: Path) -> None:
    """Where the environment says not to write bytecode (PYTHONDONTWRITEBYTECODE=1 on CI's machine), every
    process of the run compiled the package, the tests and the third-party modules again (about 5 s of
    CPU for each pytest process's collection alone): the Makefile's recipes run without it."""
    probe = tmp_path / "probe.mk"
    probe.write_text('shown-env:\n\t@env | grep -c "^PYTHONDONTWRITEBYTECODE=" || true\n', encoding="utf-8")
    shown = subprocess.run(
        ["make", "--no-print-directory", "-s", "-f", "Makefile", "-f", str(probe), "shown-env"],
        cwd=ROOT, capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    assert shown.stdout.strip() == "0"


# Tests that start `python -m wp_agent.cli.main` themselves, each because the process is their subject.
_NEW_INTERPRETERS = {
    "tests/fakes/cli.py": "a real terminal (pty) for the prompts a person meets",
    "tests/fakes/cli_process.py": "the forked runner's own fallback (faketime, WP_AGENT_TESTS_NEW_INTERPRETER)",
    "tests/unit/test_cli_check.py": "the console entry point itself runs",
    "tests/integration/test_mcp_server.py": "the MCP SDK's client starts its server",
    "tests/integration/test_mcp_http.py": "the MCP server over HTTP, stopped by a signal",
    "tests/e2e/test_cli_named_sites.py": "Ctrl-C (SIGINT) while the model thinks",
    "tests/e2e/test_cli_interrupt.py": "Ctrl-C (SIGINT) while commands run",
    "tests/e2e/test_cli_history_truth.py": "Ctrl-C, and the MCP SDK's client starts its server",
}


def test_wp_agent_processes_are_forked_unless_the_process_is_the_subject() -> None:
    """A new interpreter is ~1.3 s of CPU before the CLI's first line: the suite's runs of `wp-agent`
    fork the worker (tests/fakes/cli_process.py), except where a test's subject is the process."""
    needle = '"wp_agent.cli' + '.main"'  # split, so this file does not name it
    starting = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("*.py")
        if "node_modules" not in path.parts and needle in path.read_text(encoding="utf-8")
    )
    assert starting == sorted(_NEW_INTERPRETERS)
