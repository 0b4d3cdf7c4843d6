"""Write layers/core/wp_agent/policy/synopses.json from the pinned WP-CLI's own `wp cli cmd-dump`.

Run after a change of the allow-list or of the pinned phar:
    .venv/bin/python scripts/refresh_synopses.py [path/to/wp-cli.phar]
tests/integration/test_wp_cli_aliases.py fails while the checked-in file and the phar disagree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "core"))

from wp_agent.cli.terminal import out  # noqa: E402
from wp_agent.policy.command_grammar import SYNOPSES_FILE, synopsis_document  # noqa: E402
from wp_agent.policy.command_table import ALLOWED_COMMANDS  # noqa: E402


def dumped(phar: Path) -> dict[tuple[str, ...], str]:
    with tempfile.TemporaryDirectory() as home:
        done = subprocess.run(  # noqa: S603 - the pinned phar, run by the developer who asked
            ["php", str(phar), "cli", "cmd-dump", "--allow-root"],  # noqa: S607 - php from PATH
            capture_output=True, text=True, check=True,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home},
        )  # fmt: skip
    found: dict[tuple[str, ...], str] = {}

    def walk(node: dict[str, Any], path: tuple[str, ...]) -> None:
        for sub in node.get("subcommands") or []:
            here = (*path, sub["name"])
            found[here] = str(sub.get("synopsis") or "")
            walk(sub, here)

    walk(json.loads(done.stdout), ())
    return found


def main() -> None:
    phar = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT.parent / "shared" / "wp-cli" / "wp-cli.phar")
    document = synopsis_document(dumped(phar), ALLOWED_COMMANDS)
    SYNOPSES_FILE.write_text(json.dumps(document, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
    out.line(f"{len(document['commands'])} synopses written to {SYNOPSES_FILE}")


if __name__ == "__main__":
    main()
