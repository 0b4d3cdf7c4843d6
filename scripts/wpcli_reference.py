"""Read WP-CLI's official command reference: the READMEs of its own command repositories.

Two things come from them, both checked in so tests never need the repositories:
- `synopses`: every documented command's synopsis (`~~~ wp post block list <id> … ~~~`), with the
  repository and commit it came from, written to layers/core/wp_agent/policy/reference_synopses.json.
  The policy reads a command the pinned phar does not have by this synopsis (command_grammar.py).
- `examples`: every `$ wp …` example, once each, with the README section it documents and the comment
  above it, merged into the usefulness corpus (tests/unit/wpcli_examples.json) keeping its labels: an
  example new to the corpus comes in unlabelled, and the corpus test fails until someone labels it.

Usage (the repositories as `fetch` mirrors them, or any directory of `wp-cli+<name>/repo` git dirs):
    python scripts/wpcli_reference.py synopses [--mirrors DIR]
    python scripts/wpcli_reference.py examples [--mirrors DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "core"))

from wp_agent.cli.terminal import out  # noqa: E402

REFERENCE_FILE = ROOT / "layers" / "core" / "wp_agent" / "policy" / "reference_synopses.json"
CORPUS_FILE = ROOT / "tests" / "unit" / "wpcli_examples.json"

# WP-CLI's bundled command packages (and the Abilities command, bundled from 2.13).
REPOSITORIES = (
    "ability-command", "cache-command", "checksum-command", "config-command", "core-command",
    "cron-command", "db-command", "embed-command", "entity-command", "export-command",
    "extension-command", "import-command", "language-command", "maintenance-mode-command",
    "media-command", "rewrite-command", "role-command", "search-replace-command",
    "super-admin-command", "widget-command",
)  # fmt: skip
# Developer tooling, not site work: left out of the usefulness measure, as the usefulness issue counts it.
DEVELOPER_TOOLING = (
    "cli",
    "package",
    "i18n",
    "scaffold",
    "shell",
    "server",
    "eval",
    "eval-file",
    "profile",
    "doctor",
)

EXAMPLE = re.compile(r"^\s*\$ wp (?P<command>.+?)\s*$")
SECTION = re.compile(r"^### wp (?P<section>.+?)\s*$")
COMMENT = re.compile(r"^\s*# (?P<comment>.+?)\s*$")
FENCE = "~~~"


def readmes(mirrors: Path) -> Iterator[tuple[str, str, str]]:
    """(repository, commit, README text) of each repository."""
    for repository in REPOSITORIES:
        git_dir = mirrors / f"wp-cli+{repository}" / "repo"
        commit = _git(git_dir, "rev-parse", "HEAD")
        yield repository, commit, _git(git_dir, "show", "HEAD:README.md")


def synopses_of(readme: str) -> Iterator[tuple[str, str]]:
    """(command path, synopsis) of each fenced `wp …` synopsis."""
    lines = readme.splitlines()
    for number, line in enumerate(lines[:-1]):
        if line.strip() != FENCE or not lines[number + 1].startswith("wp "):
            continue
        words = lines[number + 1].split()[1:]
        path = list(_leading_names(words))
        yield " ".join(path), " ".join(words[len(path) :])


def _leading_names(words: list[str]) -> Iterator[str]:
    for word in words:
        if word[:1] in "<[-":
            return
        yield word


def examples_of(readme: str, source: str) -> Iterator[dict[str, str]]:
    section = comment = ""
    for line in readme.splitlines():
        if heading := SECTION.match(line):
            section, comment = heading["section"], ""
        elif said := COMMENT.match(line):
            comment = said["comment"]
        elif (example := EXAMPLE.match(line)) and example["command"].split()[0] not in DEVELOPER_TOOLING:
            yield {"command": example["command"], "section": section, "comment": comment, "source": source}


def write_synopses(mirrors: Path) -> None:
    commands: dict[str, dict[str, str]] = {}
    for repository, commit, readme in readmes(mirrors):
        for path, synopsis in synopses_of(readme):
            source = f"wp-cli/{repository}@{commit[:12]} README"
            commands.setdefault(path, {"synopsis": synopsis, "source": source})
    document = {"commands": dict(sorted(commands.items()))}
    REFERENCE_FILE.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    out.line(f"{len(commands)} reference synopses written to {REFERENCE_FILE}")


def merge_examples(mirrors: Path) -> None:
    found: dict[str, dict[str, str]] = {}
    for repository, commit, readme in readmes(mirrors):
        for example in examples_of(readme, f"wp-cli/{repository}@{commit[:12]}"):
            found.setdefault(example["command"], example)
    document = (
        json.loads(CORPUS_FILE.read_text(encoding="utf-8")) if CORPUS_FILE.exists() else {"examples": []}
    )
    kept = {row["command"]: row for row in document["examples"]}
    document["examples"] = [
        kept.get(command, example | {"label": "", "why": ""}) for command, example in found.items()
    ]
    CORPUS_FILE.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    unlabelled = sum(1 for row in document["examples"] if not row["label"])
    out.line(f"{len(found)} examples in {CORPUS_FILE} ({unlabelled} unlabelled)")


def _git(git_dir: Path, *args: str) -> str:
    command = ["git", "--git-dir", str(git_dir), *args]  # the developer's own mirrors
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout  # noqa: S603


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("what", choices=("synopses", "examples"))
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    (write_synopses if args.what == "synopses" else merge_examples)(args.mirrors)


if __name__ == "__main__":
    main()
