"""Every command of the table reads as one row (policy/command_spec.py), and each row's examples are
decided as the row says: what runs without approval is allowed, what it holds waits for approval (or is
refused for a reason outside the row: the whole policy is only ever stricter), what it refuses is refused;
and what deciding a command reads of the site first is on its row."""

from __future__ import annotations

import json

import pytest

from wp_agent.cli.main import main
from wp_agent.models.target import Role
from wp_agent.policy import CommandPolicy
from wp_agent.policy import decide as decide_module
from wp_agent.policy.approval_summary import summaries_of
from wp_agent.policy.command_policy import RULE_FAILED
from wp_agent.policy.command_spec import spec_of
from wp_agent.policy.command_table import ALLOWED_COMMANDS
from wp_agent.policy.decide import READS_FIRST, decide_steps, reads_first
from wp_agent.policy.site_reads import ReadsFirst, SiteReads
from wp_agent.policy.site_scope import SiteScope

POLICY = CommandPolicy()
EDITOR = SiteScope("https://example.test/", False, Role.EDITOR)


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
        for example in row.held_examples:
            assert POLICY.classify(example).decision in {"confirm", "block"}, (path, example)
            checked += 1
        for example in row.refused_examples:
            assert POLICY.classify(example).decision == "block", (path, example)
            checked += 1
    assert checked > 250  # (293 when written)
    assert spec_of(("not", "a", "command")) is None


def test_a_row_names_its_own_rules_and_examples_only() -> None:
    row = spec_of(("config", "get"))
    assert row is not None
    assert row.rules == ("other_config_file", "secret_config_read")
    assert row.refused_examples
    assert not row.held_examples
    assert all(example.startswith("config get ") for example in row.refused_examples)
    assert row.least_role.value == "viewer"
    assert row.site_reads == ()


def _examples() -> list[tuple[tuple[str, ...], str]]:
    found = []
    for path in ALLOWED_COMMANDS:
        row = spec_of(path)
        assert row is not None
        for example in (*row.allowed_examples, *row.held_examples, *row.refused_examples):
            found.append((path, example))
    return found


def test_what_a_decision_reads_of_the_site_is_on_its_row_and_every_declared_read_is_made() -> None:
    """For an editor (who is read for most): each step that asks the site is one the row lists — and
    each read a row may list is asked for some example, so no declaration is dead."""
    made: set[str] = set()
    for path, example in _examples():
        listed = {read.step for read in reads_first(path)}
        for step in decide_steps(POLICY, example, EDITOR, SiteReads()):
            if step.asked:
                assert step.name in listed, (example, step.name)
                made |= {read.reads_ja for read in reads_first(path) if read.step == step.name}
    for extra in (
        "menu item delete 12",
        "post create --from-post=9 --post_title=x",
        "post meta update 10 Views 9",
    ):
        for step in decide_steps(POLICY, extra, EDITOR, SiteReads()):
            reads = reads_first(POLICY.classify(extra).command_path)
            if step.asked:
                made |= {read.reads_ja for read in reads if read.step == step.name}
    assert {read.reads_ja for read in READS_FIRST} == made


def test_a_step_the_row_does_not_list_is_not_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The row is what decides which steps read: without its meta spelling entry, a meta write is not read
    for its spelling (and with it, it is)."""
    command = "post meta update 10 Views 99"
    asked = {s.name for s in decide_steps(POLICY, command, EDITOR, SiteReads()) if s.asked}
    assert "meta_spelling" in asked
    without = tuple(read for read in READS_FIRST if read.step != "meta_spelling")
    monkeypatch.setattr(decide_module, "READS_FIRST", without)
    asked = {s.name for s in decide_steps(POLICY, command, EDITOR, SiteReads()) if s.asked}
    assert "meta_spelling" not in asked


def test_check_explain_shows_the_row(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--explain", "--json", "--", "post update 5 --post_title=x"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["row"]["command"] == "post update"
    assert shown["row"]["leastRole"] == "editor"
    assert "internal_post_types" in shown["row"]["rules"]
    assert shown["row"]["effectJa"]
    assert any("カスタマイザーの変更セット" in read for read in shown["row"]["siteReads"])


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
    assert [h.__name__ for h, _ in summaries_of(("comment", "meta", "delete"))] == [
        "spelled_out",
        "meta_delete",
    ]


def test_a_declared_site_read_about_no_command_does_not_load(monkeypatch: pytest.MonkeyPatch) -> None:
    dead = ReadsFirst(
        "meta_spelling", "どのコマンドにも関わらない読み取り", lambda path: path == ("no", "such")
    )
    monkeypatch.setattr(decide_module, "READS_FIRST", (*READS_FIRST, dead))
    with pytest.raises(ValueError, match="about no command of the table"):
        decide_module._reads_are_about_known_commands()
    unnamed = ReadsFirst("not_a_step", "手順にない読み取り", lambda path: path == ("post", "update"))
    monkeypatch.setattr(decide_module, "READS_FIRST", (*READS_FIRST, unnamed))
    with pytest.raises(ValueError, match="names no step"):
        decide_module._reads_are_about_known_commands()
    monkeypatch.setattr(decide_module, "READS_FIRST", READS_FIRST)
    decide_module._reads_are_about_known_commands()


def test_a_site_reading_step_that_fails_refuses_the_command(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """As a failing argument rule does: the request is not ended by a fault of ours, the command is
    refused (and the fault logged)."""

    def fails(*args: object, **kwargs: object) -> None:
        raise KeyError("a fault of ours")

    monkeypatch.setattr(decide_module, "guard_meta_spelling", fails)
    decided = decide_module.decide(POLICY, "post meta update 10 views 99", EDITOR, lambda argv: "post")
    assert isinstance(decided, decide_module.Decided)
    assert decided.decision.blocked
    assert decided.decision.rule == RULE_FAILED
    assert any(r.levelname == "ERROR" and getattr(r, "step", None) == "meta_spelling" for r in caplog.records)


def test_check_explain_shows_what_the_approval_reads(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--explain", "--", "post delete 5"]) == 0
    shown = capsys.readouterr().out
    assert "承認の説明: post_delete" in shown
    assert "承認の説明のためにサイトで確認: 投稿の種類と状態（ゴミ箱にあるかどうか）" in shown
