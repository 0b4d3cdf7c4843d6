"""Usefulness, measured: what WP-CLI's own documentation shows people doing, through the policy.

The corpus (wpcli_examples.json) is every `$ wp …` example of the READMEs of WP-CLI's command
repositories (scripts/wpcli_reference.py; repository and commit recorded per example), each labelled by
what it does to a site — judged by effect from the commands' sources, committed before the policy was
changed to meet these figures:

- read: changes nothing and shows no secret      → not refused (it runs, or waits)   ≥ 90 %
- write: an ordinary change of content or settings → runnable (now or once approved) ≥ 80 %
- secret, oracle: shows a credential, or probes for one → never shown (refused, or its secret masked)
- code, language: changes which PHP runs (extensions, core, translations) → never without the person
- by-design: db writes and queries, wp-config writes, file import/export, eval → refused, and the one
  Japanese line says why
- composition: a shell pipeline, not one command → refused

The README states the figures; a test keeps them equal to what this computes.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from wp_agent.cli.check import command_from_words
from wp_agent.masking import mask_command_output
from wp_agent.policy import CommandPolicy, PolicyDecision

CORPUS = Path(__file__).with_name("wpcli_examples.json")
README = Path(__file__).resolve().parents[2] / "README.md"
LABELS = frozenset({"read", "write", "secret", "oracle", "code", "language", "by-design", "composition"})
# Host names resolve here as on a server on the internet (this machine has no DNS): a public address.
POLICY = CommandPolicy(resolver=lambda host: ("93.184.216.34",))
# Secret-bearing reads the policy lets run because the masker hides the secret before anyone sees it:
# the example, and output of the shape WP-CLI prints for it (the secret must not survive masking).
MASKED_READS = {
    "user session list admin@example.com --format=csv": (
        "token,login_time,expiration_time,ip,ua\n"
        "4a1f0c9e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f,2026-12-05 09:00:00,"
        "2026-12-19 09:00:00,203.0.113.5,Mozilla/5.0\n",
        "4a1f0c9e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f",
    ),
}
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@dataclass(frozen=True)
class Example:
    command: str
    label: str
    why: str
    source: str

    def decided(self) -> PolicyDecision | None:
        """The policy's decision as `wp-agent check` makes it (None: the shell could not split it)."""
        try:
            words = shlex.split(self.command)
        except ValueError:
            return None
        return POLICY.classify(command_from_words(words))


EXAMPLES = [
    Example(row["command"], row["label"], row["why"], row["source"])
    for row in json.loads(CORPUS.read_text(encoding="utf-8"))["examples"]
]


@dataclass(frozen=True)
class Figures:
    reads_not_refused: float
    reads_unattended: float
    writes_runnable: float
    writes_unattended: float
    secrets_shown: int
    code_unattended: int
    by_design_run: int
    counts: Counter[str]


def figures() -> Figures:
    decisions = {e.command: e.decided() for e in EXAMPLES}
    counts: Counter[str] = Counter(e.label for e in EXAMPLES)

    def share(label: str, ok: set[str]) -> float:
        of = [e for e in EXAMPLES if e.label == label]
        hits = sum(1 for e in of if (d := decisions[e.command]) is not None and d.decision in ok)
        return 100 * hits / len(of)

    def count(labels: set[str], ok: set[str], but: frozenset[str] = frozenset()) -> int:
        return sum(
            1
            for e in EXAMPLES
            if e.label in labels
            and e.command not in but
            and (d := decisions[e.command]) is not None
            and d.decision in ok
        )

    return Figures(
        reads_not_refused=share("read", {"allow", "confirm"}),
        reads_unattended=share("read", {"allow"}),
        writes_runnable=share("write", {"allow", "confirm"}),
        writes_unattended=share("write", {"allow"}),
        secrets_shown=count({"secret", "oracle"}, {"allow", "confirm"}, frozenset(MASKED_READS)),
        code_unattended=count({"code", "language"}, {"allow"}),
        by_design_run=count({"by-design", "composition"}, {"allow", "confirm"}),
        counts=counts,
    )


def test_every_example_is_labelled_once_by_effect() -> None:
    assert len(EXAMPLES) == len({e.command for e in EXAMPLES}) > 700
    assert [e.command for e in EXAMPLES if e.label not in LABELS or not e.why.strip()] == []
    assert all(re.fullmatch(r"wp-cli/[a-z-]+@[0-9a-f]{12}", e.source) for e in EXAMPLES)


def test_harmless_reads_are_not_refused() -> None:
    assert figures().reads_not_refused >= 90


def test_ordinary_writes_can_run() -> None:
    assert figures().writes_runnable >= 80


def test_no_secret_is_shown_and_no_oracle_answers() -> None:
    assert figures().secrets_shown == 0


@pytest.mark.parametrize("command", sorted(MASKED_READS))
def test_a_secret_read_that_runs_shows_its_secret_masked(command: str) -> None:
    example = next(e for e in EXAMPLES if e.command == command)
    assert example.label == "secret"
    decision = example.decided()
    assert decision is not None
    assert decision.decision == "allow"
    output, secret = MASKED_READS[command]
    assert secret in output
    assert secret not in mask_command_output(output)


def test_code_and_language_changes_always_wait_for_the_person() -> None:
    assert figures().code_unattended == 0


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.label in {"by-design", "composition"}], ids=str)
def test_what_stays_refused_by_design_says_why_in_one_japanese_line(example: Example) -> None:
    decision = example.decided()
    if decision is None:
        return  # the shell itself could not split it: nothing would run
    assert decision.blocked, example.command
    assert "\n" not in decision.reason_ja
    assert JAPANESE.search(decision.reason_ja), decision.reason_ja


def test_the_readme_states_the_figures() -> None:
    found = figures()
    stated = README.read_text(encoding="utf-8")
    line = (
        f"読み取り {found.counts['read']} 件のうち拒否されない {found.reads_not_refused:.1f}%"
        f"（承認なしで実行 {found.reads_unattended:.1f}%）、"
        f"書き込み {found.counts['write']} 件のうち実行できる {found.writes_runnable:.1f}%"
        f"（承認なしで実行 {found.writes_unattended:.1f}%）、"
        f"認証情報の表示・照合 {found.counts['secret'] + found.counts['oracle']} 件のうち表示 {found.secrets_shown} 件、"
        f"コード・言語の変更 {found.counts['code'] + found.counts['language']} 件のうち承認なし {found.code_unattended} 件"
    )
    assert line in stated, line
