"""README's command-table block is the table's own account of itself (policy/table_text.py): a row added,
moved between categories or blocked changes the README in the same commit, or this fails."""

from __future__ import annotations

from pathlib import Path

from wp_agent.policy.command_table import HARD_BLOCKS
from wp_agent.policy.table_text import END, START, readme_block

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_tells_the_command_table_as_it_is() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.count(START) == 1
    assert text.count(END) == 1
    shown = START + text.split(START, 1)[1].split(END, 1)[0] + END
    assert shown == readme_block(), "README is behind the table: run scripts/refresh_policy_readme.py"


def test_every_family_nothing_can_allow_is_named_with_its_rule() -> None:
    block = readme_block()
    for hard in HARD_BLOCKS:
        assert f"| `{' '.join(hard.path)}` | `{hard.rule}` |" in block
