"""`wp-agent check --explain`: the decision step by step, as policy/decide.py makes it for the agent — the
table, the role and site scope, then the checks that ask the site (shown with their reads, never read)."""

from __future__ import annotations

import json

import pytest

from wp_agent.cli.main import main
from wp_agent.models.target import Role
from wp_agent.policy import CommandPolicy
from wp_agent.policy.decide import STEPS_JA, Decided, decide, decide_steps
from wp_agent.policy.site_reads import SiteReads
from wp_agent.policy.site_scope import SiteScope


def explained(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    assert main(["check", "--explain", "--json", *args]) == 0
    steps: list[dict[str, object]] = json.loads(capsys.readouterr().out)["explain"]
    return steps


def test_every_step_in_order_and_the_one_that_decided(capsys: pytest.CaptureFixture[str]) -> None:
    steps = explained(capsys, "--role", "viewer", "--", "post delete 77")
    assert [s["step"] for s in steps] == list(STEPS_JA)
    assert (steps[0]["decision"], steps[0]["rule"]) == ("confirm", "confirm.post.delete")
    assert (steps[1]["decision"], steps[1]["rule"], steps[1]["changed"]) == (
        "block",
        "role.insufficient",
        True,
    )
    assert not any(s["changed"] for s in steps[2:])


def test_a_step_that_asks_the_site_names_its_reads_and_decides_nothing_here(
    capsys: pytest.CaptureFixture[str],
) -> None:
    steps = explained(capsys, "--role", "editor", "--", "post delete 77 --force")
    role_step = next(s for s in steps if s["step"] == "role_targets")
    assert role_step["siteReads"] == [["post", "get", "77", "--field=post_type"]]
    assert role_step["waitsForSite"] is True
    assert all(not s["waitsForSite"] for s in steps[: steps.index(role_step)])


def test_the_steps_end_in_the_decision_the_agent_makes() -> None:
    policy, scope = CommandPolicy(), SiteScope(None, False, Role.EDITOR)
    answers = SiteReads({("post", "get", "77", "--field=post_type"): "shop_order\n"})
    steps = decide_steps(policy, "post delete 77 --force", scope, answers)
    decided = decide(policy, "post delete 77 --force", scope, answers)
    assert isinstance(decided, Decided)
    assert steps[-1].decision == decided.decision
    assert decided.rules == ("confirm.flag.force", "role.insufficient")  # the table's rule, then the role's
    assert steps[-1].decision.rule == "role.insufficient"
