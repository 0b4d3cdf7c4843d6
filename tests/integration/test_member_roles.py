"""Roles through the service (issue 27): a member's run gets only what their role allows, the role is
read from the registry at every turn, and an approval is re-checked against the role as it is now."""

from __future__ import annotations

import json

import pytest

from tests.fakes.agent_doubles import RecordingWpCli, ScriptedModel, text_reply, tool_reply
from tests.fakes.service_runtime import TARGET, RecordedRuntime
from tests.integration.test_session_races import APPROVE, holding_delete_45
from tests.integration.test_session_races import SESSION as HELD_SESSION
from wp_agent.executors.port import CommandResult
from wp_agent.models.api import ArticlePublishRequest, RunAccepted, SessionMessageRequest
from wp_agent.models.target import Role
from wp_agent.service import workflow_tasks
from wp_agent.service.api_errors import ApiError
from wp_agent.service.articles import ArticleService
from wp_agent.service.sessions import SessionService

pytestmark = pytest.mark.usefixtures("aws")

SESSION = "ses_roles_0001"
EDITOR = "editor-1"
TEAM = TARGET.model_copy(update={"members": {EDITOR: Role.EDITOR, "viewer-1": Role.VIEWER}})


def start(rt: RecordedRuntime, user_id: str, session_id: str = SESSION) -> str:
    body = SessionMessageRequest.model_validate({"message": "x", "targetId": "site-a"})
    return SessionService(rt).post_message(session_id, user_id, body).run_id


def refusals(rt: RecordedRuntime, session_id: str = SESSION) -> list[tuple[str, str]]:
    return [
        (r["command"], r["rule"]) for r in rt.audit.for_session(session_id) if r["type"] == "command_blocked"
    ]


def test_an_editors_plugin_activation_is_refused_and_audited() -> None:
    model = ScriptedModel([tool_reply("plugin activate akismet"), text_reply("管理者に依頼してください")])
    rt = RecordedRuntime(model)
    rt.registry.put(TEAM, replace=True)
    run_id = start(rt, EDITOR)
    state = rt.sessions.load(SESSION)
    assert state is not None
    assert state.role is Role.EDITOR
    assert workflow_tasks.run_turn(rt, SESSION, run_id)["route"] == "CONTINUE"
    assert rt.recording_wp.commands() == []
    assert refusals(rt) == [("plugin activate akismet", "role.insufficient")]
    blocked = next(r for r in rt.audit.for_session(SESSION) if r["type"] == "command_blocked")
    assert "管理者（admin）" in blocked["policy_reason"]
    assert "編集者（editor）" in blocked["policy_reason"]
    # the model is told, answers; a run whose every command was refused ends failed (COMMAND_BLOCKED)
    assert workflow_tasks.run_turn(rt, SESSION, run_id)["route"] == "FAILED"
    assert "管理者（admin）" in str(model.last_tool_results()[0]["content"])


def test_a_member_demoted_between_turns_gets_the_new_role() -> None:
    model = ScriptedModel(
        [tool_reply("post list --format=ids"), tool_reply("post create --post_title=x"), text_reply("x")]
    )
    rt = RecordedRuntime(model)
    rt.registry.put(TEAM, replace=True)
    run_id = start(rt, EDITOR)
    assert workflow_tasks.run_turn(rt, SESSION, run_id)["route"] == "CONTINUE"
    rt.registry.put(TEAM.model_copy(update={"members": {EDITOR: Role.VIEWER}}), replace=True)
    assert workflow_tasks.run_turn(rt, SESSION, run_id)["route"] == "CONTINUE"
    state = rt.sessions.load(SESSION)
    assert state is not None
    assert state.role is Role.VIEWER
    assert [c[:2] for c in rt.recording_wp.commands()] == [["post", "list"]]
    assert refusals(rt) == [("post create --post_title=x", "role.insufficient")]


def test_a_removed_member_ends_the_run_and_a_stranger_cannot_start() -> None:
    rt = RecordedRuntime(ScriptedModel([tool_reply("post list --format=ids"), text_reply("x")]))
    rt.registry.put(TEAM, replace=True)
    run_id = start(rt, EDITOR)
    rt.registry.put(TEAM.model_copy(update={"members": {}}), replace=True)
    assert workflow_tasks.run_turn(rt, SESSION, run_id)["route"] == "FAILED"
    assert rt.recording_wp.commands() == []
    with pytest.raises(ApiError) as refused:
        start(rt, "stranger-1", "ses_roles_0002")
    assert refused.value.code == "TARGET_NOT_FOUND"


def test_an_approved_delete_of_a_requester_now_a_viewer_is_refused_on_record() -> None:
    """Approved by its requester, who is a viewer by the time the run resumes: the delete never runs
    and the audit names the role."""
    rt, state, approval_id = holding_delete_45()
    SessionService(rt).decide(HELD_SESSION, approval_id, "u1", APPROVE)
    rt.registry.put(
        TARGET.model_copy(update={"owners": ["someone-else"], "members": {"u1": Role.VIEWER}}), replace=True
    )
    with pytest.raises(AssertionError, match="script exhausted"):  # the model is asked next, told why
        workflow_tasks.run_turn(rt, HELD_SESSION, state.run_id)
    told = rt.scripted_model.last_tool_results()[0]["content"]
    assert "閲覧者（viewer）" in str(told)
    assert ["post", "delete", "45"] not in [c[:3] for c in rt.recording_wp.commands()]
    assert refusals(rt, HELD_SESSION) == [("post delete 45", "role.insufficient")]


def scheduled(owner_id: str) -> dict[str, object]:
    return {
        "scheduleId": "sch_eeeeeeeeeeeeeeeeeeee",
        "ownerId": owner_id,
        "targetId": "site-a",
        "agentInput": {"message": "プラグインを有効にして"},
        "scheduledTime": "2026-11-23T00:00:00Z",
    }


def test_a_scheduled_run_goes_with_its_creators_role_at_every_firing() -> None:
    rt = RecordedRuntime(ScriptedModel([tool_reply("plugin activate akismet"), text_reply("x")]))
    rt.registry.put(TEAM, replace=True)
    started = workflow_tasks.start_scheduled_run(rt, scheduled(EDITOR))
    state = rt.sessions.load(str(started["sessionId"]))
    assert state is not None
    assert state.role is Role.EDITOR
    workflow_tasks.run_turn(rt, state.session_id, state.run_id)
    assert rt.recording_wp.commands() == []
    assert refusals(rt, state.session_id) == [("plugin activate akismet", "role.insufficient")]
    # no longer a member: the next firing starts nothing
    rt.registry.put(TEAM.model_copy(update={"members": {}}), replace=True)
    payload = scheduled(EDITOR) | {"scheduledTime": "2026-11-30T00:00:00Z"}
    with pytest.raises(workflow_tasks.WorkflowTaskError):
        workflow_tasks.start_scheduled_run(rt, payload)


def test_an_undo_is_checked_against_the_role_like_any_run() -> None:
    """A title the requester changed while an editor; a viewer now: the undo run refuses its revert."""
    from tests.integration.test_undo_refusals import CHANGED, undo
    from tests.integration.test_undo_refusals import SESSION as UNDO_SESSION
    from tests.integration.test_undo_refusals import session as changed_session
    from wp_agent.models.undo import EntityRef, UndoCapture, UndoItem
    from wp_agent.undo.content_kinds import POST_FIELDS

    fields = dict.fromkeys(POST_FIELDS, "") | {"post_type": "post", "post_title": "新"}

    def site(argv: list[str]) -> CommandResult:
        if argv[:2] == ["post", "get"]:
            return CommandResult(json.dumps(fields), "", 0, 3)
        return CommandResult("[]", "", 0, 3)

    rt = RecordedRuntime(ScriptedModel([text_reply("元に戻せませんでした")]), wp=RecordingWpCli(handler=site))
    state = changed_session(rt)
    item = UndoItem(
        entity=EntityRef(kind="post", key=["45"], parts=["fields"]),
        before={"fields": fields | {"post_title": "旧"}},
        after={"fields": fields},
        after_recorded=True,
    )
    state.commands[0].undo = UndoCapture(revertible=True, items=[item])
    rt.sessions.save(state)
    member = {"owners": ["someone-else"], "members": {"u1": Role.VIEWER}}
    rt.registry.put(TARGET.model_copy(update=member), replace=True)
    accepted = undo(rt, CHANGED)
    assert isinstance(accepted, RunAccepted)
    workflow_tasks.run_turn(rt, UNDO_SESSION, accepted.run_id)
    assert [c for c in rt.recording_wp.commands() if c[:2] == ["post", "update"]] == []
    ended = rt.sessions.load(UNDO_SESSION)
    assert ended is not None
    assert ended.result is not None
    # the undo run answers why nothing was put back (as for any refused revert)
    assert "元に戻せませんでした" in ended.result.response
    assert (
        "この操作には編集者（editor）の権限が必要です。あなたの権限は閲覧者（viewer）です。"
        in ended.result.response
    )


def test_an_article_is_an_editors_to_publish_not_a_viewers() -> None:
    """publishArticle is content (a post, its media, categories and tags): owners, admins and editors
    start a job; a viewer is told why (403); someone of no role is told the target does not exist."""
    rt = RecordedRuntime(ScriptedModel([]))
    rt.registry.put(TEAM, replace=True)
    articles = ArticleService(rt)
    request = ArticlePublishRequest(
        title="お知らせ", content="<p>本文</p>", status="publish", target_id="site-a"
    )
    assert articles.submit(EDITOR, request).status == "Queued"
    for user, (status, code) in {
        "viewer-1": (403, "EDITOR_REQUIRED"),
        "stranger": (404, "TARGET_NOT_FOUND"),
    }.items():
        with pytest.raises(ApiError) as refused:
            articles.submit(user, request)
        assert (refused.value.status, refused.value.code) == (status, code)
    assert len(rt.recording_workflow.started) == 1
