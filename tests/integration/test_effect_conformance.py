"""Issue 24, deliverable 5: effect conformance on the real WordPress.

Every command the policy lets run without approval must change only what its declared effect says
(layers/core/wp_agent/policy/effects): the rows of the tables it names, owned by the objects the
command names or creates, under the keys it declares; files only below the paths it names; never a
canary file outside the WordPress tree and its uploads. Commands come from the command table's own
grammar (tests/integration/conformance/command_grammar.py): every write path with its declared fields
and arguments, flags WP-CLI offers that the declarations leave out, protected, public, plugin and
file-path meta keys, WordPress's own option names and plugins' ones, and hostile values. A command
the policy holds or refuses does not run; one that runs is compared, then the site goes back to the
seed (only what changed). The bounded sample runs here; scripts/effect_conformance.py is the long run.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fakes.wordpress import TestWordPress
from tests.integration.conformance.effect_check import EffectCheck
from tests.integration.conformance.runner import ConformanceRun
from wp_agent.policy import PolicyCategory
from wp_agent.policy.effects.declaration import Effect, Rows
from wp_agent.policy.effects.table import WRITE_EFFECTS
from wp_agent.policy.parsed_command import ParsedCommand

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def conformance(wordpress: TestWordPress) -> Iterator[ConformanceRun]:
    run = ConformanceRun(wordpress)
    yield run
    wordpress.dirty = True


EXAMPLES = sorted((path, example) for path, effect in WRITE_EFFECTS.items() for example in effect.match)


def test_every_declared_example_changes_only_what_its_effect_declares(conformance: ConformanceRun) -> None:
    """The declarations' own `match` examples — at least one per write path — on the real site."""
    violations = []
    for _path, example in EXAMPLES:
        decision = conformance.decide(example)
        assert decision.category is PolicyCategory.WRITE, (example, decision.rule, decision.reason_ja)
        violation = conformance.run(example)
        if violation is not None:
            violations.append(str(violation))
    assert violations == []
    assert {tuple(p.split()) for p in conformance.tally.paths} == set(WRITE_EFFECTS)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=False,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rng=st.randoms(use_true_random=False))
def test_generated_unapproved_writes_change_only_what_they_declare(
    conformance: ConformanceRun, rng: random.Random
) -> None:
    command = conformance.grammar.command(rng)
    violation = conformance.run(command)
    assert violation is None, str(violation)


def test_the_check_sees_what_a_declaration_leaves_out(conformance: ConformanceRun) -> None:
    """The harness can fail: a real title change checked against a declaration without the posts
    table, and a canary changed behind the site's back, are both reported."""
    baseline = conformance.baseline
    argv = ("post", "update", "45", "--post_title=harness self-test")
    done = conformance.wordpress.wp(*argv)
    assert done.returncode == 0, done.stderr
    baseline.canary.write_text("touched\n", encoding="utf-8")
    change = baseline.changes()
    narrow = Effect(summary_ja="test", changes=(Rows("postmeta"),), match=("x",), not_match=("y",))
    problems = EffectCheck(baseline, narrow, ParsedCommand.from_argv(argv), argv[:2]).violations(change)
    baseline.restore(change)
    assert any("wp_posts" in p for p in problems), problems
    assert "file changed: canary" in problems
    assert baseline.changes().empty
