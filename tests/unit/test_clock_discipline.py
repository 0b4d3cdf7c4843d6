"""No test depends on the day it runs, unless it says so and is run on other days too.

The date-sensitive part of the suite is every test marked `pytest.mark.clock`: a test whose outcome could
change with the date or the time of day of its own process's clock (what wp_agent.clock returns). This
lint finds the tests that read or set that clock — directly, through a helper or fixture of their
module, or through a helper of tests/fakes — and fails for each one not marked, so a new test of that
kind joins the faketime runs (tests/integration/test_any_date.py) by default. A real site's clock (PHP,
MariaDB) is read with tests/fakes/clock.py's `site_now`/`site_clock`, which is not our clock.

The product side: only wp_agent/clock.py reads the calendar clock, so a test sets it in one place.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
PRODUCT = [ROOT / "layers" / "core" / "wp_agent", ROOT / "functions"]
THE_CLOCK = ROOT / "layers" / "core" / "wp_agent" / "clock.py"
# The faketime runs themselves: they set the clock of the pytest process they start, not their own.
RUNNER = TESTS / "integration" / "test_any_date.py"
# Reads (or settings) of the process's calendar clock. time.monotonic and perf_counter measure elapsed
# time and are not in it.
CLOCK_READ = re.compile(
    r"\b(?:datetime\.now|datetime\.utcnow|date\.today|time\.time(?:_ns)?|time\.localtime|time\.gmtime"
    r"|time_machine|faketime_argv|site_today|utc_now_iso)\b|\bclock\.(?:now|today|now_iso|epoch_seconds)\("
)
# Product files that may read the calendar clock themselves, and why.
PRODUCT_EXCEPTIONS = {
    "sandbox/seed_cache.py": "compares with a file's modification time, which the file system stamps",
}
MARK = "clock"
# A test that reads "now" only to line up with the product's clock in the same process (the rate
# limiter's windows of this minute, an idempotency record's expiry from now) says so, with the reason:
# its outcome is the same on any date, so the faketime runs leave it out.
RELATIVE = "now_relative"


def _source(node: ast.stmt, lines: list[str]) -> str:
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)])
    return "\n".join(lines[first - 1 : node.end_lineno])


def _marked(decorators: list[ast.expr]) -> bool:
    return any(
        (isinstance(d, ast.Attribute) and d.attr == MARK)
        or (
            isinstance(d, ast.Call)
            and isinstance(d.func, ast.Attribute)
            and d.func.attr == RELATIVE
            and any(isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value for a in d.args)
        )
        or (isinstance(d, ast.Call) and _marked([d.func]))
        for d in decorators
    )


def _module_marked(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            values = node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else [node.value]
            if _marked(list(values)):
                return True
    return False


def _reads_the_clock(node: ast.stmt, lines: list[str]) -> bool:
    return bool(CLOCK_READ.search(_source(node, lines)))


def _names_used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(node) if isinstance(a, ast.arg)
    }


@cache
def _readers(path: Path) -> frozenset[str]:
    """The module-level functions of `path` that read the clock, through each other and through the
    readers they import from tests/fakes."""
    text = path.read_text(encoding="utf-8")
    tree, lines = ast.parse(text), text.splitlines()
    imported = _imported_readers(tree)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    readers = {
        name
        for name, node in functions.items()
        if _reads_the_clock(node, lines) or _names_used(node) & imported
    }
    while True:
        more = {
            name for name, node in functions.items() if name not in readers and _names_used(node) & readers
        }
        if not more:
            return frozenset(readers | imported)
        readers |= more


def _imported_readers(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tests.fakes."):
            module = TESTS / "fakes" / f"{node.module.split('.')[-1]}.py"
            if module.exists():
                found |= {a.asname or a.name for a in node.names} & _readers(module)
    return found


def _tests_of(tree: ast.Module) -> list[tuple[ast.FunctionDef, bool]]:
    """Each test function with whether a class around it is marked."""
    found: list[tuple[ast.FunctionDef, bool]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            found.append((node, False))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            found += [
                (m, _marked(node.decorator_list))
                for m in node.body
                if isinstance(m, ast.FunctionDef) and m.name.startswith("test")
            ]
    return found


def unmarked_clock_tests(path: Path) -> list[str]:
    """The names of the tests of `path` that read the clock and are not marked."""
    text = path.read_text(encoding="utf-8")
    tree, lines = ast.parse(text), text.splitlines()
    if _module_marked(tree):
        return []
    readers = _readers(path)
    return [
        test.name
        for test, class_marked in _tests_of(tree)
        if not class_marked
        and not _marked(test.decorator_list)
        and (_reads_the_clock(test, lines) or _names_used(test) & readers)
    ]


def test_every_test_that_reads_the_clock_is_marked() -> None:
    unmarked = [
        f"{path.relative_to(ROOT)}::{name}"
        for path in sorted(TESTS.rglob("test_*.py"))
        if path != RUNNER
        for name in unmarked_clock_tests(path)
    ]
    assert unmarked == [], (
        "these tests read or set the clock of their process; mark them @pytest.mark.clock so the "
        f"faketime runs include them (or compare with the site's clock): {unmarked}"
    )


def test_only_the_clock_module_reads_the_calendar_in_the_product() -> None:
    direct = re.compile(r"\b(?:datetime\.now|datetime\.utcnow|date\.today|time\.time(?:_ns)?)\b")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in PRODUCT
        for path in sorted(folder.rglob("*.py"))
        if path != THE_CLOCK and path.relative_to(folder).as_posix() not in PRODUCT_EXCEPTIONS
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if direct.search(line)
    ]
    assert found == [], f"read the clock through wp_agent.clock (one clock the tests can set): {found}"


def test_the_lint_finds_a_read_through_a_helper_and_accepts_the_mark(tmp_path: Path) -> None:
    """The lint itself: a read two helpers away is found; a marked test or module passes, and so does a
    test that says why it reads 'now' only relatively."""
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "import pytest, time\n"
        "def _window():\n    return int(time." + "time() // 60)\n"  # (not a read of this test's)
        "def _quota():\n    return _window() + 1\n"
        "def test_unmarked():\n    assert _quota()\n"
        "@pytest.mark.clock\ndef test_marked():\n    assert _quota()\n"
        "def test_pure():\n    assert 1\n"
        "@pytest.mark.now_relative('fills this minute')\ndef test_relative():\n    assert _quota()\n"
        "@pytest.mark.now_relative()\ndef test_no_reason():\n    assert _quota()\n",
        encoding="utf-8",
    )
    assert unmarked_clock_tests(sample) == ["test_unmarked", "test_no_reason"]
    sample.write_text(
        "import pytest\npytestmark = [pytest.mark.clock]\n" + sample.read_text(), encoding="utf-8"
    )
    _readers.cache_clear()
    assert unmarked_clock_tests(sample) == []
