"""The command table covers WP-CLI's current command reference, and what it cannot prove waits.

Every command of the reference (policy/reference_synopses.json: the READMEs of WP-CLI's bundled command
repositories) is a row of the table or refused as a family by design; a command the pinned phar lacks is
read by the reference's synopsis and never writes without the person (no newer WP-CLI runs here to prove
an effect); a held command the table has no summary for shows every argument and option as WP-CLI reads
them.
"""

from __future__ import annotations

import json

import pytest

from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.approval_summary import describe
from wp_agent.policy.command_grammar import REFERENCE_FILE, synopses
from wp_agent.policy.command_table import ALLOWED_COMMANDS, HARD_BLOCKS, NEWER_THAN_PINNED, SPELLED_OUT
from wp_agent.policy.read_only_flags import read_only_alternative

REFERENCE = json.loads(REFERENCE_FILE.read_text(encoding="utf-8"))["commands"]
# The reference's leaves: a command with subcommands of its own (`post block`) is only their parent.
LEAVES = sorted(
    tuple(name.split()) for name in REFERENCE if not any(other.startswith(f"{name} ") for other in REFERENCE)
)
POLICY = CommandPolicy(resolver=lambda host: ("93.184.216.34",))
# Options other rules decide (selectors, output, server files, TLS off), not the spelled-out summary.
OTHER_RULES = frozenset(
    {"yes", "url", "all", "slug", "format", "porcelain", "field", "fields", "file", "target-path", "insecure"}
)


def _refused_by_design(path: tuple[str, ...]) -> bool:
    return any(path[: len(block.path)] == block.path for block in HARD_BLOCKS)


def test_every_command_of_the_reference_is_a_row_or_refused_by_design() -> None:
    assert len(LEAVES) > 300
    assert [" ".join(p) for p in LEAVES if p not in ALLOWED_COMMANDS and not _refused_by_design(p)] == []


def test_what_the_pinned_phar_lacks_never_writes_unattended() -> None:
    assert NEWER_THAN_PINNED
    assert [p for p in NEWER_THAN_PINNED if ALLOWED_COMMANDS[p].category is PolicyCategory.WRITE] == []
    assert all(not synopses()[p].source.startswith("WP-CLI 2.10.0") for p in NEWER_THAN_PINNED)


@pytest.mark.parametrize("path", sorted(SPELLED_OUT), ids=" ".join)
def test_a_spelled_out_approval_names_every_argument_and_option(path: tuple[str, ...]) -> None:
    synopsis = synopses()[path]
    only_looks = read_only_alternative(path)  # that flag makes it a read (tested with the reads)
    words = [f"w{n}" if not a.is_reference else str(10 + n) for n, a in enumerate(synopsis.arguments)]
    if "url" in {a.name for a in synopsis.arguments} or "file" in {a.name for a in synopsis.arguments}:
        words = [w if a.name not in {"url", "file"} else "https://example.com/a.png"
                 for w, a in zip(words, synopsis.arguments, strict=True)]  # fmt: skip
    options = [
        f"--{o.name}=v{n}" if o.takes_value else f"--{o.name}"
        for n, o in enumerate(synopsis.options.values())
        if o.name not in OTHER_RULES and not (only_looks and o.name == only_looks.flag)
    ]
    if path == ("font", "face", "install"):
        options = [o if not o.startswith("--src=") else "--src=https://example.com/a.woff2" for o in options]
    decision = POLICY.classify_argv([*path, *words, *options])
    assert decision.needs_approval, (decision.rule, decision.reason_ja)
    summary, impact = describe(decision)
    for word in [*words, *options]:
        assert word in summary, (word, summary)
    assert "そのまま示しています" in impact


def test_a_patch_shows_its_value_apart_from_its_path_and_masks_a_secret() -> None:
    summary, _ = describe(POLICY.classify("transient patch update my_cache a b value1"))
    assert "key-path「a > b」" in summary
    assert "value「value1」" in summary
    summary, _ = describe(POLICY.classify("transient patch update my_cache api_key s3cr3t-Value-99"))
    assert "s3cr3t-Value-99" not in summary


def test_the_reason_another_rule_held_a_spelled_out_command_comes_first() -> None:
    decision = POLICY.classify("site option update default_role administrator")
    assert decision.rule == "confirm.option.important_key"
    _, impact = describe(decision)
    assert impact.startswith(decision.reason_ja)
    assert "ネットワーク設定「default_role」" in impact
