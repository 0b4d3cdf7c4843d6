"""The command table as README tells it: the block between README's `policy-table` markers is this
module's output, so the README cannot drift from the table (tests/unit/test_policy_readme.py compares
them; `scripts/refresh_policy_readme.py` writes it)."""

from __future__ import annotations

from collections import Counter

from wp_agent.command_line.code_changes import CODE_CHANGES
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.command_table import ALLOWED_COMMANDS, HARD_BLOCKS, NEWER_THAN_PINNED, SPELLED_OUT

START = "<!-- policy-table: generated from policy/command_table.py by scripts/refresh_policy_readme.py -->"
END = "<!-- /policy-table -->"


def readme_block() -> str:
    """The table at a glance (Markdown): what it allows by category, what waits as written, the families
    nothing can allow, and the changes that run guarded."""
    counts = Counter(entry.category for entry in ALLOWED_COMMANDS.values())
    lines = [
        START,
        f"The table lists {len(ALLOWED_COMMANDS)} command paths: {counts[PolicyCategory.READ]} read, "
        f"{counts[PolicyCategory.WRITE]} write (each with its declared effect), "
        f"{counts[PolicyCategory.DESTRUCTIVE]} that always wait for approval — {len(SPELLED_OUT)} of them "
        f"spelled out argument by argument in the approval, {len(NEWER_THAN_PINNED)} known only from WP-CLI's "
        "reference (newer than the pinned phar). Anything else is refused.",
        "",
        "| Never allowed | Rule | Why (as the requester reads it) |",
        "|---|---|---|",
        *(f"| `{' '.join(block.path)}` | `{block.rule}` | {block.reason_ja} |" for block in HARD_BLOCKS),
        "",
        "Guarded changes of code (probed, taken back when the site got worse): "
        + ", ".join(f"`{' '.join(path)}`" for path in sorted(CODE_CHANGES))
        + ".",
        END,
    ]
    return "\n".join(lines)
