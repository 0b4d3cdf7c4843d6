"""The real WP-CLI 2.10 phar for tests that check our tables against WP-CLI itself.

Found at WP_CLI_PHAR, else ../shared/wp-cli/wp-cli.phar beside the main checkout (worktrees share
its git directory); its SHA-512 is checked against SHA512SUMS beside it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def _candidates() -> list[Path]:
    found = [Path(os.environ["WP_CLI_PHAR"])] if os.environ.get("WP_CLI_PHAR") else []
    common = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    roots = [Path(common).parent] if common else []
    roots.append(REPO_ROOT)
    found += [root.parent / "shared" / "wp-cli" / "wp-cli.phar" for root in roots]
    return found


@cache
def wp_cli_phar() -> Path:
    """The verified phar; the test fails (never skips) when it or PHP is missing."""
    if shutil.which("php") is None:
        pytest.fail("php is not installed: run ./scripts/setup.sh (it installs php-cli)")
    for phar in _candidates():
        if phar.is_file():
            sums = phar.parent / "SHA512SUMS"
            digest = hashlib.sha512(phar.read_bytes()).hexdigest()
            if sums.is_file() and digest not in sums.read_text():
                pytest.fail(f"{phar} does not match {sums}")
            return phar
    pytest.fail("WP-CLI phar not found: set WP_CLI_PHAR or provide ../shared/wp-cli/wp-cli.phar")


def extract_phar(phar: Path, into: Path) -> Path:
    """Unpack the phar with PHP's own Phar class; returns the directory."""
    script = "$p = new Phar($argv[1]); $p->extractTo($argv[2], null, true);"
    subprocess.run(["php", "-d", "phar.readonly=1", "-r", script, str(phar), str(into)], check=True)
    return into


def command_tree(phar: Path, home: Path) -> dict[str, object]:
    """`wp cli cmd-dump`: every bundled command with its subcommands (no WordPress needed)."""
    result = subprocess.run(
        ["php", str(phar), "cli", "cmd-dump", "--allow-root"],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)},
    )
    tree: dict[str, object] = json.loads(result.stdout)
    return tree
