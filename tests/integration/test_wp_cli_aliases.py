"""Our alias tables and allow-list against the real WP-CLI 2.10 phar, so they cannot drift."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.wp_cli_phar import command_tree, extract_phar, wp_cli_phar
from wp_agent.command_line.aliases import (
    FLAG_REWRITES,
    META_COMMAND_WORD,
    PATH_REWRITES,
    SUBCOMMAND_ALIASES,
    TOP_LEVEL_ALIASES,
)
from wp_agent.executors.ability_reads import ABILITY_READS
from wp_agent.policy.command_grammar import REFERENCE_FILE, synopses
from wp_agent.policy.command_table import ALLOWED_COMMANDS, HARD_BLOCKS, NEWER_THAN_PINNED

# A docblock carrying `@alias`, and the method it documents.
_ALIASED_METHOD = re.compile(
    r"/\*\*((?:(?!\*/).)*?@alias\s+(\S+)(?:(?!\*/).)*)\*/\s*(?:public\s+)?(?:static\s+)?function\s+(\w+)",
    re.S,
)


@pytest.fixture(scope="module")
def phar_sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_phar(wp_cli_phar(), tmp_path_factory.mktemp("wp-cli-phar"))


@pytest.fixture(scope="module")
def wp_cli_tree(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, ...], dict[str, Any]]:
    """Every command path WP-CLI has, with its dump (description, synopsis of leaf commands)."""
    paths: dict[tuple[str, ...], dict[str, Any]] = {}

    def walk(node: dict[str, Any], prefix: tuple[str, ...]) -> None:
        for sub in node.get("subcommands") or []:
            path = (*prefix, sub["name"])
            paths[path] = sub
            walk(sub, path)

    walk(command_tree(wp_cli_phar(), tmp_path_factory.mktemp("wp-cli-home")), ())
    return paths


@pytest.fixture(scope="module")
def wp_cli_paths(wp_cli_tree: dict[tuple[str, ...], dict[str, Any]]) -> dict[tuple[str, ...], str]:
    """Every command path WP-CLI has, with its short description."""
    return {path: str(node["description"]) for path, node in wp_cli_tree.items()}


def _php_sources(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.php") if "/tests/" not in str(p) and "wp-cli-tests" not in str(p)]


def test_subcommand_aliases_match_the_alias_tags_of_the_bundled_commands(
    phar_sources: Path, wp_cli_paths: dict[tuple[str, ...], str]
) -> None:
    found: dict[tuple[str, ...], dict[str, str]] = {}
    for source in _php_sources(phar_sources):
        for match in _ALIASED_METHOD.finditer(source.read_text(errors="replace")):
            doc, alias, method = match.groups()
            lines = [line.strip().lstrip("*").strip() for line in doc.splitlines()]
            shortdesc = next(line for line in lines if line)
            tag = re.search(r"@subcommand\s+(\S+)", doc)
            name = tag.group(1) if tag else method.replace("_", "-")
            # The method is inherited by several commands (CommandWithMeta): find each by its docs.
            owners = [p[:-1] for p, desc in wp_cli_paths.items() if p[-1] == name and desc == shortdesc]
            assert owners, f"@alias {alias} of {name} in {source.name}: no command found"
            for owner in owners:
                found.setdefault(owner, {})[alias] = name
    assert found == SUBCOMMAND_ALIASES


def test_runner_conversions_match(phar_sources: Path) -> None:
    runner = next(p for p in _php_sources(phar_sources) if p.name == "Runner.php").read_text()
    body = runner[runner.index("function back_compat_conversions") :]
    body = body[: body.index("\n\t}\n")]
    top = re.search(r"\$top_level_aliases = \[(.*?)\];", body, re.S)
    assert top is not None
    assert dict(re.findall(r"'([\w-]+)'\s*=>\s*'([\w-]+)'", top.group(1))) == TOP_LEVEL_ALIASES
    meta = re.search(r"preg_match\( '/(.*?)/', \$args\[0\]", body)
    assert meta is not None
    assert meta.group(1) == META_COMMAND_WORD.pattern
    rewrites: dict[tuple[str, str], tuple[str, ...]] = {}
    for first, second, target in re.findall(
        r"\[ '([\w-]+)', '([\w-]+)' \] === array_slice\( \$args, 0, 2 \) \) \{\s*list\([^)]*\) = \[([^\]]*)\]",
        body,
    ):
        words = tuple(re.findall(r"'([\w-]+)'", target)) or (second, first)  # `[ $args[1], $args[0] ]`
        rewrites[(first, second)] = words
    assert rewrites == PATH_REWRITES
    flagged = {
        (command, old): ((command, new), f"--{flag}")
        for old, new, flag in re.findall(
            r"'([\w-]+)' === \$args\[1\]\s*\)\s*\{\s*\$args\[1\]\s*= '([\w-]+)';\s*\$assoc_args\['(\w+)'\]",
            body,
        )
        for command in (["plugin", "theme"] if old == "update-all" else ["transient"])
    }
    assert flagged == FLAG_REWRITES


def test_every_allowed_and_hard_blocked_path_is_a_real_wp_cli_command(
    wp_cli_paths: dict[tuple[str, ...], str],
) -> None:
    # `help` is WP-CLI's own; the Abilities reads are answered by our reader where WP-CLI lacks them
    # (tests/integration/test_ability_reads.py). What else the pinned phar lacks is read by the command
    # reference's synopsis, its source recorded; a hard block of a newer command is a command of it.
    newer = {p for p in ALLOWED_COMMANDS if p not in wp_cli_paths and p != ("help",)}
    assert newer == NEWER_THAN_PINNED | ABILITY_READS
    assert all(
        re.fullmatch(r"wp-cli/[a-z-]+-command@[0-9a-f]{12} README", synopses()[p].source) for p in newer
    )
    reference = json.loads(REFERENCE_FILE.read_text(encoding="utf-8"))["commands"]
    blocked = [b.path for b in HARD_BLOCKS if b.path not in wp_cli_paths]
    assert [p for p in blocked if " ".join(p) not in reference] == []


def test_aliases_resolve_to_real_commands(wp_cli_paths: dict[tuple[str, ...], str]) -> None:
    for owner, aliases in SUBCOMMAND_ALIASES.items():
        for name in aliases.values():
            assert (*owner, name) in wp_cli_paths
    for words in [*PATH_REWRITES.values(), *(path for path, _flag in FLAG_REWRITES.values())]:
        assert tuple(words) in wp_cli_paths


def test_the_checked_in_synopses_are_the_pinned_wp_clis(
    wp_cli_tree: dict[tuple[str, ...], dict[str, Any]],
) -> None:
    """policy/synopses.json (what the policy reads every command by) is the phar's own dump for every
    allowed path: scripts/refresh_synopses.py writes it again after a change."""
    assert set(synopses()) == set(ALLOWED_COMMANDS)
    for path, synopsis in synopses().items():
        if synopsis.source.startswith("WP-CLI 2.10.0"):
            assert synopsis.text == str(wp_cli_tree[path].get("synopsis") or ""), path
