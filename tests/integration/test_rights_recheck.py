"""Rights come from the registry as it is at every turn: a removed network administrator loses
network-level commands at the next turn, a removed owner's run ends."""

from __future__ import annotations

import pytest

from tests.fakes.agent_doubles import ScriptedModel, text_reply, tool_reply
from tests.fakes.service_runtime import TARGET, RecordedRuntime
from tests.integration.test_session_races import APPROVE, holding_delete_45
from tests.integration.test_session_races import SESSION as HELD_SESSION
from wp_agent.models.agent_io import MultisiteOptions
from wp_agent.models.api import SessionMessageRequest
from wp_agent.service import workflow_tasks
from wp_agent.service.sessions import SessionService

pytestmark = pytest.mark.usefixtures("aws")

SESSION = "ses_rights_0001"
NETWORK_TARGET = TARGET.model_copy(update={"multisite": True, "network_admins": ["u1"]})


def start(rt: RecordedRuntime, **body: object) -> str:
    accepted = SessionService(rt).post_message(
        SESSION, "u1", SessionMessageRequest.model_validate({"message": "x", "targetId": "site-a", **body})
    )
    return accepted.run_id


def test_a_removed_network_admin_loses_network_commands_at_the_next_turn() -> None:
    model = ScriptedModel(
        [
            tool_reply("site list --format=json"),
            tool_reply("site create --slug=tokyo --title=東京"),
            text_reply("x"),
        ]
    )
    rt = RecordedRuntime(model)
    rt.registry.put(NETWORK_TARGET, replace=True)
    run_id = start(rt, multisite=MultisiteOptions(network_wide=True).model_dump(by_alias=True))
    assert workflow_tasks.run_turn(rt, SESSION, run_id)["route"] == "CONTINUE"
    state = rt.sessions.load(SESSION)
    assert state is not None
    assert state.network_admin is True

    rt.registry.put(NETWORK_TARGET.model_copy(update={"network_admins": []}), replace=True)
    assert workflow_tasks.run_turn(rt, SESSION, run_id)["route"] == "CONTINUE"
    state = rt.sessions.load(SESSION)
    assert state is not None
    assert state.network_admin is False
    blocked = state.commands[-1]
    assert blocked.argv[:2] == ["site", "create"]
    assert blocked.rule == "scope.network_admin_required"
    assert ["site", "create", "--slug=tokyo", "--title=東京"] not in rt.recording_wp.calls
    refusals = [r for r in rt.audit.for_session(SESSION) if r["type"] == "command_blocked"]
    assert [(r["command"], r["rule"]) for r in refusals] == [
        ("site create --slug=tokyo --title=東京", "scope.network_admin_required")
    ]
    assert "ネットワーク管理者" in refusals[0]["policy_reason"]


def test_a_removed_owner_ends_the_run() -> None:
    rt = RecordedRuntime(ScriptedModel([tool_reply("post list --format=ids"), text_reply("x")]))
    rt.register_target()
    run_id = start(rt)
    rt.registry.put(TARGET.model_copy(update={"owners": ["someone-else"]}), replace=True)
    assert workflow_tasks.run_turn(rt, SESSION, run_id)["route"] == "FAILED"
    state = rt.sessions.load(SESSION)
    assert state is not None
    assert state.result is not None
    assert state.result.error is not None
    assert state.result.error.code == "COMMAND_BLOCKED"
    assert rt.recording_wp.calls == []
    assert rt.scripted_model.calls == []
    refusals = [r for r in rt.audit.for_session(SESSION) if r["type"] in {"run_refused", "command_blocked"}]
    assert [(r["type"], r["rule"], r["error"]) for r in refusals] == [
        ("run_refused", "role.owner_removed", "COMMAND_BLOCKED")
    ]
    assert "権限" in refusals[0]["policy_reason"]


def test_an_approved_command_of_a_removed_owner_is_refused_on_record() -> None:
    """Approved, then the owner is removed before the run resumes: the delete never runs and the
    audit says why right after the approval (not "approved" and then nothing)."""
    rt, state, approval_id = holding_delete_45()
    SessionService(rt).decide(HELD_SESSION, approval_id, "u1", APPROVE)
    rt.registry.put(TARGET.model_copy(update={"owners": ["someone-else"]}), replace=True)
    assert workflow_tasks.run_turn(rt, HELD_SESSION, state.run_id)["route"] == "FAILED"
    assert (
        workflow_tasks.run_turn(rt, HELD_SESSION, state.run_id)["route"] == "FAILED"
    )  # a retry adds nothing
    ended = rt.sessions.load(HELD_SESSION)
    assert ended is not None
    assert ended.result is not None
    assert ended.result.error is not None
    assert (ended.status.value, ended.result.success) == ("Failed", False)
    assert ended.result.error.code == "COMMAND_BLOCKED"
    assert ["post", "delete", "45"] not in [c[:3] for c in rt.recording_wp.calls]
    audit = rt.audit.for_session(HELD_SESSION)
    types = [r["type"] for r in audit]
    # The audit orders records to the millisecond: records of one millisecond come back in any order.
    assert sorted(types[-3:]) == ["approval_approved", "command_blocked", "run_summary"]
    assert [(r["command"], r["rule"]) for r in audit if r["type"] == "command_blocked"] == [
        ("post delete 45", "role.owner_removed")
    ]
