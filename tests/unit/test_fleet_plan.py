"""A fleet plan's per-site values (policy/fleet_plan.py): what a lookup's answer may be, how a step is
filled in, and how a site's approval text is compared with the approved one."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wp_agent.policy.fleet_plan import (
    PlanStepError,
    as_template,
    check_lookups,
    check_placement,
    fill,
    looked_up_value,
    step_index,
    step_tool_use_id,
)

VALUE_CHARS = st.text(alphabet="abcXYZ019_.@:/+=-", min_size=1, max_size=30)


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("", "ありません"),
        ("  \n", "ありません"),
        ("12\n13\n", "1つに決まりません"),
        ("--url=https://evil.test/", "値として使えません"),  # never read as an option
        ("-1", "値として使えません"),
        ("a;b", "値として使えません"),
        ("x'y", "値として使えません"),
        ("１２", "値として使えません"),  # other scripts' digits
    ],
)
def test_a_lookup_answer_that_is_not_one_plain_word_is_refused(answer: str, why: str) -> None:
    with pytest.raises(PlanStepError) as refused:
        looked_up_value("post", answer)
    assert why in refused.value.message_ja


def test_a_lookup_answer_of_one_word_is_the_value() -> None:
    assert looked_up_value("post", "45\n") == "45"
    assert looked_up_value("url", "https://example.test/shop/") == "https://example.test/shop/"


@pytest.mark.parametrize(
    ("command", "lookups", "why"),
    [
        ("post delete {post}", {}, "{post} に対応する lookups がありません"),
        ("post delete 4", {"post": "post list --field=ID"}, "使われていません"),
        ("post delete {Post}", {"Post": "post list --field=ID"}, "名前"),
        ("post delete {post}", {"post": "post list --name={slug} --field=ID"}, "{名前} を含んで"),
        ("post delete {post}", {"post": " "}, "空"),
    ],
)
def test_lookups_must_match_the_names_the_command_uses(
    command: str, lookups: dict[str, str], why: str
) -> None:
    with pytest.raises(PlanStepError) as refused:
        check_lookups(command, lookups)
    assert why in refused.value.message_ja


@given(VALUE_CHARS.filter(lambda v: v[0] not in "-+=.@:/"))
def test_a_filled_in_value_is_one_word_of_the_command_and_never_an_option(value: str) -> None:
    answer = looked_up_value("v", value)
    words = shlex.split(fill("post meta update {v} key {v}", {"v": answer}))
    assert words == ["post", "meta", "update", answer, "key", answer]
    assert not answer.startswith("-")


def test_approval_text_takes_the_value_back_only_as_a_whole_word() -> None:
    text = "投稿（ID: 45）を削除します。ID 145 と 45a は別です。45"
    assert (
        as_template(text, {"post": "45"}) == "投稿（ID: {post}）を削除します。ID 145 と 45a は別です。{post}"
    )
    assert as_template("A 12 B 1", {"a": "1", "b": "12"}) == "A {b} B {a}"  # the longer value first


def test_a_step_is_known_by_its_tool_call_id_in_its_run_only() -> None:
    run = "run_0123456789abcdef0123"
    assert step_index(run, step_tool_use_id(run, 3)) == 3
    assert step_index("run_ffffffffffffffffffff", step_tool_use_id(run, 3)) is None
    assert step_index(run, "toolu_model_1") is None
    assert step_index(run, step_tool_use_id(run, 3) + "x") is None


def test_a_sites_status_is_the_run_status_vocabulary_and_two_more_and_events_say_the_same() -> None:
    from typing import get_args

    from wp_agent.models.events import FleetSiteStatusName, FleetStatusName
    from wp_agent.models.fleet import FleetStatus, SiteStatus
    from wp_agent.models.run_status import RunStatus

    assert {s.value for s in SiteStatus} == {s.value for s in RunStatus} | {"rolledBack", "skipped"}
    assert set(get_args(FleetSiteStatusName)) == {s.value for s in SiteStatus}
    assert set(get_args(FleetStatusName)) == {s.value for s in FleetStatus}


@pytest.mark.parametrize(
    "command",
    [
        "post delete {post}",
        "wp post delete {post} --force",
        "post update 3 --post_parent={parent}",
        "post meta get {post} color",
    ],
)
def test_a_per_site_value_may_stand_where_a_value_goes(command: str) -> None:
    check_placement(command, path_length=2)


@pytest.mark.parametrize(
    "command",
    [
        "post update 3 --{field}=x",  # an option's name chosen by the site
        "post {action} 3",  # a command word
        "post delete x{post}",  # part of a word
        "post update 3 --post_title=a{post}",  # part of a value
        "post delete {a}{b}",
        "plugin {action} akismet",
    ],
)
def test_a_per_site_value_never_chooses_what_the_command_does(command: str) -> None:
    with pytest.raises(PlanStepError) as refused:
        check_placement(command, path_length=2)
    assert "それだけで書いてください" in refused.value.message_ja
