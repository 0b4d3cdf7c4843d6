"""Every argument rule catches its own `match` examples and leaves its `not_match` ones alone."""

from __future__ import annotations

import pytest

from wp_agent.policy import CommandPolicy
from wp_agent.policy.argument_rules import ARGUMENT_RULES, ArgumentRule

POLICY = CommandPolicy()
CASES = [
    pytest.param(rule, command, expected, id=f"{rule.name}:{'match' if expected else 'not'}:{command}")
    for rule in ARGUMENT_RULES
    for expected, commands in ((True, rule.match), (False, rule.not_match))
    for command in commands
]


@pytest.mark.parametrize(("rule", "command", "expected"), CASES)
def test_rule_examples(rule: ArgumentRule, command: str, expected: bool) -> None:
    resolved = POLICY.resolve(command)
    assert resolved is not None, f"{command!r} is not an allowed command path"
    parsed, path = resolved
    verdict = rule(parsed, path)
    assert (verdict is not None) is expected, verdict


def test_a_match_example_is_decided_at_least_as_strictly_as_its_rule() -> None:
    for rule in ARGUMENT_RULES:
        for command in rule.match:
            resolved = POLICY.resolve(command)
            assert resolved is not None
            verdict = rule(*resolved)
            assert verdict is not None
            assert POLICY.classify(command).category.rank >= verdict.category.rank, command
