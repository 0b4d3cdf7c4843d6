"""The session's WordPress is shared by the tests of a worker: a test or fixture asks for it as
`seeded_wordpress` (it only reads: restored first if an earlier test wrote) or `fresh_wordpress` (it may
write: restored before the next test needs it) — never as `wordpress`, which is the site as the last test
left it (a core update another test kept made the kses test read WordPress 7.1.5 where 7.1.4 runs)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "fakes" / "wordpress_fixtures.py"  # where the two are made from it
# Module-wide harnesses that cannot take a per-test fixture, and why the site's state is theirs to set.
OWN_STATE = {
    "integration/test_effect_conformance.py conformance": "ConformanceRun resets the site before its run",
    "integration/test_summary_conformance.py approvals": "ApprovalConformance resets the site before its run",
    "integration/test_ssh_php_launch.py rig": "an sshd in front of it; every test takes seeded_wordpress",
}


def _is_fixture(node: ast.FunctionDef) -> bool:
    return any("fixture" in ast.unparse(d) for d in node.decorator_list)


def test_no_test_or_fixture_takes_the_shared_site_as_the_last_test_left_it() -> None:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == FIXTURES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef) or not (
                node.name.startswith("test_") or _is_fixture(node)
            ):
                continue
            if "wordpress" in [
                a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            ]:
                found.append(f"{path.relative_to(TESTS)} {node.name}")
    found = [f for f in found if f not in OWN_STATE]
    assert not found, "take seeded_wordpress or fresh_wordpress instead:\n" + "\n".join(found)
