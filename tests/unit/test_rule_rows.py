"""The argument rules as fields of the table's rows: a rule names the commands it is about (`paths`), a
command's row lists the rules that apply to it (`rules_for`), and a rule naming a command the table lacks
does not load."""

from __future__ import annotations

import pytest

from wp_agent.policy import CommandPolicy, argument_rules
from wp_agent.policy.argument_rules import ARGUMENT_RULES, rules_for
from wp_agent.policy.command_table import ALLOWED_COMMANDS
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
