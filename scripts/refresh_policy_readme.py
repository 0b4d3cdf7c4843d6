"""Write README.md's command-table block (between its `policy-table` markers) from the table itself.

Run after a change of policy/command_table.py or command_line/code_changes.py:
    .venv/bin/python scripts/refresh_policy_readme.py
tests/unit/test_policy_readme.py fails while README and the table disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "core"))

from wp_agent.policy.table_text import END, START, readme_block  # noqa: E402


def main() -> None:
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    before, _, rest = text.partition(START)
    _, _, after = rest.partition(END)
    if not rest:
        raise SystemExit(f"README.md has no {START!r} marker")
    readme.write_text(before + readme_block() + after, encoding="utf-8")


if __name__ == "__main__":
    main()
