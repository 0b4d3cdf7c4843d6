"""Every command of the table reads as one row (policy/command_spec.py), and each row's examples are
decided as the row says: what runs without approval is allowed; its near misses are held or refused."""

from __future__ import annotations

import json

import pytest

from wp_agent.cli.main import main
from wp_agent.policy import CommandPolicy
from wp_agent.policy.approval_summary import summaries_of
from wp_agent.policy.command_spec import spec_of
from wp_agent.policy.command_table import ALLOWED_COMMANDS

POLICY = CommandPolicy()


def test_every_row_reads_and_its_examples_are_decided_as_it_says() -> None:
    checked = 0
    for path in ALLOWED_COMMANDS:
        row = spec_of(path)
        assert row is not None
        assert row.grammar_source in {"phar", "reference"}, path  # every built-in command has its grammar
        assert (row.summary is None) == (row.category.value == "read"), path
        for example in row.allowed_examples:
            assert POLICY.classify(example).decision == "allow", (path, example)
            checked += 1
        for example in row.other_examples:
            assert POLICY.classify(example).decision != "allow", (path, example)
            checked += 1
    assert checked > 200  # (239 when written)
    assert spec_of(("not", "a", "command")) is None


def test_a_row_names_its_own_rules_and_examples_only() -> None:
    row = spec_of(("config", "get"))
    assert row is not None
    assert row.rules == ("secret_config_read",)
    assert row.other_examples
    assert all(example.startswith("config get ") for example in row.other_examples)
    assert row.least_role.value == "viewer"


def test_check_explain_shows_the_row(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--explain", "--json", "--", "post update 5 --post_title=x"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["row"]["command"] == "post update"
    assert shown["row"]["leastRole"] == "editor"
    assert "internal_post_types" in shown["row"]["rules"]
    assert shown["row"]["effectJa"]


def test_a_row_tells_its_approval_with_its_own_summaries_in_order() -> None:
    comment_meta = spec_of(("comment", "meta", "delete"))
    post_meta = spec_of(("post", "meta", "delete"))
    install = spec_of(("theme", "install"))
    assert comment_meta is not None
    assert post_meta is not None
    assert install is not None
    assert (
        comment_meta.summary == "spelled_out"
    )  # spelled out first; its meta summary only if that says nothing
    assert post_meta.summary == "meta_delete"
    assert install.summary == "theme_switch"  # (an install without --activate is told as any install)
    assert [h.__name__ for h in summaries_of(("comment", "meta", "delete"))] == [
        "_spelled_out",
        "_meta_delete",
    ]
