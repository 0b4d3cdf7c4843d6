"""A fleet's sessions in the agent turn: the canary's planning run records its writes as the plan's steps
(none runs; lookups are policy-checked reads), and a site's run of the approved plan runs it without the
model when the approval text read on that site is the approved one — otherwise it asks for its own."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fakes.agent_doubles import RecordingWpCli, ScriptedModel, make_deps, text_reply
from wp_agent.agent import approval_steps
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.model_client import ModelReply
from wp_agent.agent.ports import AgentDeps, MemoryAuditLog, NoApprovals
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.session_state import ApprovalStatus, SessionState, SessionStatus
from wp_agent.executors.port import CommandResult
from wp_agent.fleet import runs
from wp_agent.fleet.opening import FleetRunOpening, PlannedOpenings
from wp_agent.fleet.runs import SiteAccess
from wp_agent.models.fleet import FleetStep
from wp_agent.models.target import Role
from wp_agent.policy import PolicyDecision, approval_summary
from wp_agent.policy.command_policy import RULE_FAILED

ADMIN = SiteAccess(role=Role.ADMIN)


def plan_reply(*steps: tuple[str, dict[str, str]]) -> ModelReply:
    content: list[dict[str, Any]] = [
        {"type": "tool_use", "id": f"toolu_plan_{n}", "name": "wp_cli",
         "input": {"command": command, "reason": "計画", **({"lookups": lookups} if lookups else {})}}
        for n, (command, lookups) in enumerate(steps)
    ]  # fmt: skip
    return ModelReply(content=content, stop_reason="tool_use", model="scripted")


def site_with_post(post_id: int, status: str = "publish") -> RecordingWpCli:
    """A site whose post titled お知らせ has `post_id` (in `status`)."""

    def answer(argv: list[str]) -> CommandResult:
        if argv[:2] == ["post", "list"] and any(a.startswith("--title=") for a in argv):
            return CommandResult(f"{post_id}\n", "", 0, 1)
        if argv[:2] == ["post", "list"] and any(a.startswith("--post__in=") for a in argv):
            return CommandResult(
                json.dumps([{"ID": post_id, "post_status": status, "post_type": "post"}]), "", 0, 1
            )
        return CommandResult("Success: ok.\n", "", 0, 1)

    return RecordingWpCli(handler=answer)


def _deps(model: ScriptedModel, wp: RecordingWpCli) -> AgentDeps:
    deps = make_deps(model, wp)
    deps.opening = PlannedOpenings(FleetRunOpening(deps.policy, deps.wp_cli, deps.limiter))
    return deps


def _plan(wp: RecordingWpCli, *replies: ModelReply) -> SessionState:
    deps = _deps(ScriptedModel([*replies, text_reply("計画ができました")]), wp)
    state = runs.planning_session("flt_0123456789abcdef0123", "お知らせを削除して", 3, session_id="ses_plan0001",
                                  user_id="u1", target_id="local:a", access=ADMIN)  # fmt: skip
    AgentRunner(deps, NoApprovals()).resume(state)
    return state


LOOKUP = "post list --title=お知らせ --post_type=post --field=ID"


def test_planning_records_writes_as_steps_and_runs_only_reads() -> None:
    wp = site_with_post(45)
    state = _plan(wp, plan_reply(("post list --format=ids", {}), ("post delete {post}", {"post": LOOKUP})))
    assert state.status is SessionStatus.COMPLETED
    assert ["post", "delete", "45"] not in wp.calls  # nothing changed on the canary
    assert ["post", "list", "--format=ids"] in wp.calls
    assert ["post", "list", "--title=お知らせ", "--post_type=post", "--field=ID"] in wp.calls
    assert state.fleet is not None
    [step] = state.fleet.steps
    assert (step.command, step.lookups) == ("post delete {post}", {"post": LOOKUP})
    assert step.summary_ja == "投稿（ID: {post}）をゴミ箱へ移動します"
    told = json.dumps(state.messages, ensure_ascii=False)
    assert "計画の手順1として記録しました" in told


def test_a_lookup_that_is_not_a_read_or_names_two_reads_is_refused() -> None:
    wp = site_with_post(45)
    state = _plan(
        wp,
        plan_reply(("post delete {post}", {"post": "post update 3 --post_status=draft"})),
        plan_reply(("post delete {post}", {"post": LOOKUP})),
        plan_reply(("post update {post} --post_title=x", {"post": "post list --field=ID --post_type=page"})),
        plan_reply(("post update 45 --{field}=x", {"field": LOOKUP})),
    )
    assert state.fleet is not None
    assert [s.command for s in state.fleet.steps] == ["post delete {post}"]
    assert not [c for c in wp.calls if c[:2] == ["post", "update"]]
    told = json.dumps(state.messages, ensure_ascii=False)
    assert "読み取りコマンドにしてください" in told
    assert "別の読み取り" in told
    assert "それだけで書いてください" in told  # a site's answer never chooses an option's name


def _apply(wp: RecordingWpCli, steps: list[FleetStep]) -> tuple[SessionState, AgentDeps]:
    deps = _deps(ScriptedModel([]), wp)  # the model is never asked
    state = runs.site_session("flt_0123456789abcdef0123", "お知らせを削除して", steps, "u1", session_id="ses_site0001",
                              user_id="u1", target_id="local:b", access=ADMIN)  # fmt: skip
    AgentRunner(deps, NoApprovals()).resume(state)
    return state, deps


def test_a_site_runs_the_approved_plan_with_its_own_values_and_no_model() -> None:
    canary = _plan(site_with_post(45), plan_reply(("post delete {post}", {"post": LOOKUP})))
    assert canary.fleet is not None
    wp = site_with_post(77)
    state, deps = _apply(wp, canary.fleet.steps)
    assert state.status is SessionStatus.COMPLETED, state.result
    assert ["post", "delete", "77"] in wp.calls
    assert isinstance(deps.audit, MemoryAuditLog)
    [approved] = [e for e in deps.audit.events if e.type is AuditEventType.APPROVAL_APPROVED]
    assert approved.approver == "fleet:flt_0123456789abcdef0123:u1"
    assert not [e for e in deps.audit.events if e.type is AuditEventType.APPROVAL_REQUESTED]


def test_a_site_whose_approval_text_differs_waits_for_its_own_approval() -> None:
    canary = _plan(site_with_post(45), plan_reply(("post delete {post}", {"post": LOOKUP})))
    assert canary.fleet is not None
    wp = site_with_post(77, status="trash")  # deleting it here is final: not what was approved
    state, _ = _apply(wp, canary.fleet.steps)
    assert state.status is SessionStatus.AWAITING_APPROVAL
    assert state.pending_approval is not None
    assert state.pending_approval.status is ApprovalStatus.PENDING
    assert "完全に削除" in state.pending_approval.items[0].summary_ja
    assert ["post", "delete", "77"] not in wp.calls


def test_a_site_without_what_the_plan_names_has_nothing_to_do() -> None:
    canary = _plan(site_with_post(45), plan_reply(("post delete {post}", {"post": LOOKUP})))
    assert canary.fleet is not None
    wp = RecordingWpCli(handler=lambda argv: CommandResult("", "", 0, 1))
    state, _ = _apply(wp, canary.fleet.steps)
    assert state.status is SessionStatus.COMPLETED
    assert state.fleet is not None
    assert state.fleet.skipped_ja is not None
    assert runs.site_result("b", state).status.value == "skipped"
    assert not [c for c in wp.calls if c[:2] == ["post", "delete"]]


def test_a_lookup_answer_that_is_not_one_word_fails_the_site_and_runs_nothing() -> None:
    canary = _plan(site_with_post(45), plan_reply(("post delete {post}", {"post": LOOKUP})))
    assert canary.fleet is not None

    def noisy(argv: list[str]) -> CommandResult:  # a plugin that prints while WordPress loads
        return CommandResult("PHP Notice: something\n77\n", "", 0, 1)

    wp = RecordingWpCli(handler=noisy)
    state, _ = _apply(wp, canary.fleet.steps)
    assert runs.site_result("b", state).status.value == "failed"
    assert not [c for c in wp.calls if c[:2] == ["post", "delete"]]


def test_a_follow_up_message_in_a_sites_session_is_a_run_of_its_own_not_the_plan_again() -> None:
    """The fleet's approval covered that site's run of the plan once: a later message in the same session
    (over the API) asks the model, and a held command waits for its own approval."""
    from tests.fakes.agent_doubles import tool_reply
    from wp_agent.agent.lifecycle import continue_session
    from wp_agent.models.agent_io import AgentInput

    canary = _plan(site_with_post(45), plan_reply(("post delete {post}", {"post": LOOKUP})))
    assert canary.fleet is not None
    wp = site_with_post(77)
    state, deps = _apply(wp, canary.fleet.steps)
    assert state.status is SessionStatus.COMPLETED
    deps.model = ScriptedModel([tool_reply("post delete 77"), text_reply("終わりました")])
    continue_session(state, AgentInput(message="もう一度同じことをして"))
    AgentRunner(deps, NoApprovals()).resume(state)
    assert state.fleet is None
    assert state.pending_approval is not None  # no fleet approval covers it now: it waits for its own
    assert sum(1 for c in wp.calls if c[:2] == ["post", "delete"]) == 1  # only the fleet run's


def test_a_step_whose_approval_text_fails_is_neither_planned_nor_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault in an approval summary: on the canary the step is not planned (the model is told); on a
    site whose plan was approved, that site runs nothing of it and is not asked either."""
    real = approval_summary.describe
    failing = {"on": False}

    def describe(decision: PolicyDecision, site: Any = None) -> tuple[str, str]:
        if failing["on"] and decision.argv[:2] == ("post", "delete"):
            raise KeyError("a summary's own mistake")
        return real(decision, site)

    monkeypatch.setattr(approval_summary, "describe", describe)
    canary = _plan(site_with_post(45), plan_reply(("post delete {post}", {"post": LOOKUP})))
    assert canary.fleet is not None
    assert len(canary.fleet.steps) == 1
    failing["on"] = True
    unplanned = _plan(site_with_post(45), plan_reply(("post delete {post}", {"post": LOOKUP})))
    assert unplanned.fleet is not None
    assert unplanned.fleet.steps == []
    assert approval_steps.UNWORDED_JA in json.dumps(unplanned.messages, ensure_ascii=False)
    wp = site_with_post(77)
    state, deps = _apply(wp, canary.fleet.steps)
    assert ["post", "delete", "77"] not in wp.calls
    assert state.pending_approval is None
    assert isinstance(deps.audit, MemoryAuditLog)
    blocked = [e for e in deps.audit.events if e.type is AuditEventType.COMMAND_BLOCKED]
    assert [(e.command, e.rule) for e in blocked] == [("post delete 77", RULE_FAILED)]
