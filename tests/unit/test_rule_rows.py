"""The argument rules as fields of the table's rows: a rule names the commands it is about (`paths`), a
command's row lists the rules that apply to it (`rules_for`), and a rule naming a command the table lacks
does not load."""

from __future__ import annotations

import shlex

import pytest

from wp_agent.command_line.shell_syntax import split_words
from wp_agent.policy import CommandPolicy, argument_rules
from wp_agent.policy.argument_rules import ARGUMENT_RULES, rules_for
from wp_agent.policy.command_policy import RULE_FAILED
from wp_agent.policy.command_table import ALLOWED_COMMANDS
from wp_agent.policy.custom_rules import CustomRules
from wp_agent.policy.rule import Verdict, argument_rule

POLICY = CommandPolicy()


def test_a_rule_naming_a_group_applies_to_its_commands_and_to_no_other() -> None:
    [config_rule] = [r for r in ARGUMENT_RULES if r.name == "other_config_file"]  # (paths: "config")
    assert config_rule.applies_to(("config", "get"))
    assert config_rule.applies_to(("config", "path"))
    assert not config_rule.applies_to(("option", "get"))
    assert config_rule in rules_for(("config", "get"))
    assert config_rule not in rules_for(("post", "create"))


def test_every_rule_applies_where_its_own_examples_are() -> None:
    for rule in ARGUMENT_RULES:
        for command in (*rule.match, *rule.not_match):
            resolved = POLICY.resolve(command)
            assert resolved is not None, command
            if command in rule.match:
                assert rule in rules_for(resolved[1]), (rule.name, command)


def test_every_named_command_is_in_the_table() -> None:
    named = {path for rule in ARGUMENT_RULES for path in rule.paths or ()}
    assert named, "some rules name their commands"
    assert all(any(k[: len(p)] == p for k in ALLOWED_COMMANDS) for p in named)


def test_a_rule_naming_a_command_the_table_lacks_does_not_load(monkeypatch: pytest.MonkeyPatch) -> None:
    @argument_rule(match=("plugin frobnicate x",), not_match=("plugin list",), paths=("plugin frobnicate",))
    def _made_up(cmd: object, path: tuple[str, ...]) -> Verdict | None:
        return None

    monkeypatch.setattr(argument_rules, "ARGUMENT_RULES", (*ARGUMENT_RULES, _made_up))
    with pytest.raises(ValueError, match="plugin frobnicate"):
        argument_rules._rules_name_known_commands()


def test_a_rule_whose_examples_do_not_hold_does_not_load(monkeypatch: pytest.MonkeyPatch) -> None:
    @argument_rule(match=("plugin list --status=active",), not_match=("plugin list",), paths=("plugin list",))
    def _catches_nothing(cmd: object, path: tuple[str, ...]) -> Verdict | None:
        return None

    monkeypatch.setattr(argument_rules, "ARGUMENT_RULES", (*ARGUMENT_RULES, _catches_nothing))
    with pytest.raises(ValueError, match="plugin list --status=active"):
        argument_rules._rules_hold_their_examples()
    argument_rules._rules_name_known_commands()  # (its command is the table's)


def _with_a_word_after_its_command(example: str) -> tuple[tuple[str, ...], str] | None:
    """`example` as the command of an operator's allow rule one word longer than the table's command it
    names (`site activate 3` -> the custom command `site activate x`, asked as `site activate x 3`)."""
    resolved = POLICY.resolve(example)
    if resolved is None:
        return None
    _, path = resolved
    words = split_words(example)
    custom = (*path, "x")
    return custom, shlex.join([*custom, *words[len(path) :]])


def test_every_rule_decides_a_custom_command_that_begins_with_a_command_it_names() -> None:
    """A rule names its commands by their first words, so it is asked about an operator's longer custom
    command too (`site activate x` when `site activate` is named): it must decide, never fail — a rule
    that read its own table by the exact path failed there (KeyError), found by a second pair of eyes."""
    cases = [
        case
        for rule in ARGUMENT_RULES
        if rule.paths is not None
        for example in (*rule.match, *rule.not_match)
        if (case := _with_a_word_after_its_command(example)) is not None
    ]
    customs = sorted({custom for custom, _ in cases})
    for category in ("read", "write", "destructive"):
        policy = CommandPolicy(
            CustomRules.model_validate(
                {"allow": [{"command": " ".join(c), "category": category} for c in customs]}
            )
        )
        for _, command in cases:
            assert policy.classify(command).rule != RULE_FAILED, (category, command)
    assert len(cases) > 200  # (242 when written: every example of the rules that name their commands)


def test_a_rule_that_fails_refuses_the_command_instead_of_ending_the_request(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    @argument_rule(match=("plugin list --status=active",), not_match=("plugin list",), paths=("plugin list",))
    def _faulty(cmd: object, path: tuple[str, ...]) -> Verdict | None:
        raise KeyError(path)

    monkeypatch.setattr(argument_rules, "ARGUMENT_RULES", (*ARGUMENT_RULES, _faulty))
    argument_rules.rules_for.cache_clear()
    try:
        decision = CommandPolicy().classify("plugin list --status=active")
    finally:
        monkeypatch.undo()
        argument_rules.rules_for.cache_clear()
    assert decision.blocked
    assert decision.rule == RULE_FAILED
    assert "判定できなかった" in decision.reason_ja
    assert any(
        record.levelname == "ERROR" and "_faulty" in str(record.__dict__.get("rule"))
        for record in caplog.records
    )
