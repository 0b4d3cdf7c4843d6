"""Which undo steps run without the person's approval: only deletions of a value the reverted run
added (the key was absent before it), as the plan wrote them and the policy reads them — in the CLI's
plan and in the agent's undo run alike. (On the real WordPress: tests/integration/test_undo_cli.py.)"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wp_agent.agent.messages import ToolUseBlock
from wp_agent.agent.session_state import SessionState
from wp_agent.agent.site_commands import decided_after_reads
from wp_agent.agent.tool_pipeline import (
    PLAN_APPROVER,
    Hold,
    Run,
    RunSoFar,
    ToolCallPipeline,
    plan_may_approve,
)
from wp_agent.config import AgentSettings
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.target import Role
from wp_agent.policy import CommandPolicy
from wp_agent.undo.kind import CaptureError, meta_steps, value_args
from wp_agent.undo.revert_run import approved_by_plan

POLICY = CommandPolicy()
values = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["", "-", "--url=https://evil.example", "--all", "a b", "draft"]),
    st.integers(),
    st.lists(st.text(max_size=3), max_size=2),
)
meta = st.dictionaries(
    st.sampled_from(["_wp_trash_meta_time", "views", "likes"]), st.lists(values, max_size=3)
)


@given(meta, meta)
def test_a_step_approved_by_its_plan_deletes_only_a_key_the_run_added(
    before: dict[str, list[Any]], current: dict[str, list[Any]]
) -> None:
    for step in meta_steps("post", "45", before, current, "投稿 ID 45"):
        decision = POLICY.classify_argv(step.argv)
        if not step.takes_back_addition:
            assert not approved_by_plan(step, decision)
            continue
        assert step.argv[:4] == ["post", "meta", "delete", "45"]
        assert len(step.argv) == 5  # the key as a whole: no value WP-CLI could take for a flag
        key = step.argv[4]
        assert not before.get(key)  # nothing of it was there before the run
        assert current[key]  # and the run left something there
        assert decision.needs_approval
        assert approved_by_plan(step, decision)  # the policy reads it as the plan wrote it


def test_wordpress_trash_records_are_taken_back_and_older_keys_are_not() -> None:
    trashed: dict[str, list[Any]] = {
        "_wp_trash_meta_status": ["publish"], "_wp_trash_meta_time": ["1796494283"],
        "_wp_desired_post_slug": [""], "_wp_trash_meta_comments_status": [{"3": "1"}],
    }  # fmt: skip
    steps = meta_steps("post", "46", {}, trashed, "投稿 ID 46")
    assert sorted((s.argv[4], s.takes_back_addition) for s in steps) == sorted((k, True) for k in trashed)
    # A key that had values before the run is the person's to approve.
    steps = meta_steps("post", "46", {"views": ["1"], "likes": ["2"]}, {"views": [], "likes": ["3"]}, "投稿")
    assert steps
    assert not any(s.takes_back_addition for s in steps)


def _state(**fields: Any) -> SessionState:
    return SessionState(
        session_id="ses_1", run_id="run_2", user_id="u", target_id="t", input=AgentInput(message="x"),
        started_at="2026-12-05T00:00:00+00:00", role=Role.ADMIN, **fields,
    )  # fmt: skip


def _decide(state: SessionState, tool_use_id: str, command: str) -> object:
    pipeline = ToolCallPipeline(POLICY, AgentSettings())
    call = ToolUseBlock(tool_use_id, "wp_cli", {"command": command, "reason": "元に戻す"})
    run = RunSoFar.of(state, state.site_scope(), skip_allowed=False)
    kept = '[{"meta_key":"_wp_trash_meta_status"}]'  # the site's answer to the meta-spelling check's read
    return decided_after_reads(
        lambda site: pipeline.decide(call, 0, None, run, site), lambda reads: [kept for _ in reads]
    )


def test_the_agent_runs_a_plan_approved_step_only_as_planned_and_only_in_an_undo_run() -> None:
    planned = {
        "toolu_undo_1": ["post", "meta", "delete", "46", "_wp_trash_meta_status"],
        "toolu_undo_2": ["post", "meta", "delete", "46", "--all"],  # a stored key WP-CLI reads as an option
    }
    undo_run = _state(reverts_run_id="run_1", plan_approved_steps=planned)
    outcome = _decide(undo_run, "toolu_undo_1", "post meta delete 46 _wp_trash_meta_status")
    assert isinstance(outcome, Run)
    assert outcome.approved_by == PLAN_APPROVER
    # Any other step, id or reading waits for the person, as every destructive command does.
    for tool_use_id, command in [
        ("toolu_undo_1", "post meta delete 46 _wp_trash_meta_status publish"),
        ("toolu_undo_1", "post meta delete 47 _wp_trash_meta_status"),
        ("toolu_undo_3", "post meta delete 46 _wp_trash_meta_status"),
        ("toolu_undo_2", "post meta delete 46 --all"),  # planned so, but not a deletion of one key
    ]:
        assert isinstance(_decide(undo_run, tool_use_id, command), Hold), (tool_use_id, command)
    model_run = _state(plan_approved_steps=planned)  # left from an earlier undo run: not this run's plan
    outcome = _decide(model_run, "toolu_undo_1", "post meta delete 46 _wp_trash_meta_status")
    assert isinstance(outcome, Hold)


def test_a_stored_name_is_never_a_word_wp_cli_reads_as_an_option() -> None:
    with pytest.raises(CaptureError):
        meta_steps("post", "5", {}, {"--all": ["x"]}, "投稿 ID 5")
    assert value_args("--all") == ['"--all"', "--format=json"]  # a value that reads as a flag: JSON
    assert value_args("plain") == ["plain"]
    assert not plan_may_approve(["post", "meta", "delete", "5", "--all"])
    assert plan_may_approve(["post", "meta", "delete", "5", "color", "--url=https://example.test/en/"])
