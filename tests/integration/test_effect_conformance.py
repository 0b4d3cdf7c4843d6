"""Issue 24, deliverable 5: effect conformance on the real WordPress.

Every command the policy lets run without approval must change only what its declared effect says
(layers/core/wp_agent/policy/effects): the rows of the tables it names, owned by the objects the
command names or creates, under the keys it declares; files only below the paths it names; never a
canary file outside the WordPress tree and its uploads. Commands come from the command table's own
grammar (tests/integration/conformance/command_grammar.py): every write path with its declared fields
and arguments, flags WP-CLI offers that the declarations leave out, protected, public, plugin and
file-path meta keys, WordPress's own option names and plugins' ones, and hostile values. A command
the policy holds or refuses does not run; one that runs is compared, then the site goes back to the
seed (only what changed). A bounded sample runs here; scripts/effect_conformance.py is the long run
(every declared example, then thousands of generated commands).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fakes.wordpress import TestWordPress
from tests.fakes.wordpress_fixtures import OLDER_GROUP
from tests.integration.conformance.effect_check import EffectCheck
from tests.integration.conformance.runner import ConformanceRun
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy import PolicyCategory
from wp_agent.policy.effects.declaration import Effect, Rows
from wp_agent.policy.effects.table import WRITE_EFFECTS

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def conformance(wordpress: TestWordPress) -> Iterator[ConformanceRun]:
    run = ConformanceRun(wordpress)
    yield run
    wordpress.dirty = True


@pytest.fixture(scope="module")
def older_conformance(older_wordpress: TestWordPress) -> Iterator[ConformanceRun]:
    """The same run on the older release of the version matrix (tests/fakes/wordpress_fixtures.py)."""
    run = ConformanceRun(older_wordpress)
    yield run
    older_wordpress.dirty = True


# The bounded sample of `make test` (about half a minute): a declaration's own first example of the
# writes a red team went for (meta and featured images, options, media files, users, new sites,
# menus, widgets, comments), then commands generated from the grammar. Every example of every path,
# and thousands of generated commands, are the long run's (scripts/effect_conformance.py).
SAMPLED_PATHS = (
    ("post", "create"), ("post", "update"), ("post", "meta", "update"), ("option", "update"),
    ("media", "regenerate"), ("user", "meta", "update"), ("user", "update"), ("site", "create"),
    ("theme", "mod", "set"), ("menu", "item", "add-custom"), ("menu", "item", "update"), ("widget", "add"),
    ("comment", "create"),
)  # fmt: skip
GENERATED = 30


def test_declared_examples_change_only_what_their_effect_declares(conformance: ConformanceRun) -> None:
    _declared_examples_conform(conformance)


@pytest.mark.xdist_group(OLDER_GROUP)
def test_declared_examples_conform_on_the_older_release(older_conformance: ConformanceRun) -> None:
    _declared_examples_conform(older_conformance)


def _declared_examples_conform(conformance: ConformanceRun) -> None:
    ran_before = Counter(conformance.tally.paths)  # the module's other tests share the run, in any order
    violations = []
    for path in SAMPLED_PATHS:
        example = WRITE_EFFECTS[path].match[0]
        decision = conformance.decide(example)
        assert decision.category is PolicyCategory.WRITE, (example, decision.rule, decision.reason_ja)
        violation = conformance.run(example)
        if violation is not None:
            violations.append(str(violation))
    assert violations == []
    ran_here = Counter(conformance.tally.paths) - ran_before
    assert {tuple(p.split()) for p in ran_here} == set(SAMPLED_PATHS)


@settings(
    max_examples=GENERATED,
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


def test_a_meta_write_naming_a_revision_waits_for_approval(conformance: ConformanceRun) -> None:
    """Found by the long run (seed 2402): WordPress writes a revision's meta to the post it belongs to,
    outside what the command names. The agent now reads the type first; the harness sees the class."""
    revision = conformance.wordpress.wp(
        "post", "list", "--post_type=revision", "--format=ids"
    ).stdout.split()[0]
    command = f"post meta update {revision} views 7"
    decision = conformance.decide(command)
    assert (decision.category, decision.rule) == (PolicyCategory.DESTRUCTIVE, "confirm.site_check")
    assert "リビジョン" in decision.reason_ja
    argv = tuple(command.split())
    assert conformance.wordpress.wp(*argv).returncode == 0  # run directly, past the agent
    change = conformance.baseline.changes()
    path = ("post", "meta", "update")
    problems = EffectCheck(
        conformance.baseline, WRITE_EFFECTS[path], ParsedCommand.from_argv(argv), path
    ).violations(change)
    conformance.baseline.restore(change)
    assert any("not named by the command" in p for p in problems), problems
