"""The role layer in the agent (issue 27): a command outside the requester's role is refused before
anything runs, audited, and told to the model; the approval re-check and every turn's refresh use the
role as the registry says now."""

from __future__ import annotations

from typing import Any

from tests.fakes.agent_doubles import (
    RecordingWpCli,
    ScriptedModel,
    make_deps,
    text_reply,
    tool_reply,
)
from wp_agent.agent import lifecycle
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.lifecycle import new_session
from wp_agent.agent.ports import AgentDeps, ApprovalDecision, AutoApprove, MemoryAuditLog, NoApprovals
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.session_state import CommandStatus, SessionState, SessionStatus
from wp_agent.executors.port import CommandResult
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.target import Role
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.roles import ROLE_RULE
from wp_agent.policy.site_scope import apply_site_scope

POLICY = CommandPolicy()
EDITOR_REFUSAL = "この操作には管理者（admin）の権限が必要です。あなたの権限は編集者（editor）です。"


def session(role: Role | None, message: str = "テスト") -> SessionState:
    state = new_session(AgentInput(message=message), session_id="ses_roles", user_id="u", target_id="t")
    state.role = role
    return state


def audit_of(deps: AgentDeps) -> MemoryAuditLog:
    assert isinstance(deps.audit, MemoryAuditLog)
    return deps.audit


def test_an_editor_cannot_activate_a_plugin_and_the_model_is_told() -> None:
    wp = RecordingWpCli()
    model = ScriptedModel(
        [tool_reply("plugin activate akismet"), text_reply("プラグインの有効化は管理者に依頼してください")]
    )
    deps = make_deps(model, wp)
    output = AgentRunner(deps, AutoApprove("u")).resume(session(Role.EDITOR))
    assert wp.commands() == []  # never reached the executor (nor an approval)
    result = model.last_tool_results()[0]
    assert result["is_error"] is True
    assert EDITOR_REFUSAL in result["content"]
    blocked = [e for e in audit_of(deps).events if e.type is AuditEventType.COMMAND_BLOCKED]
    assert [(e.rule, e.command) for e in blocked] == [(ROLE_RULE, "plugin activate akismet")]
    assert AuditEventType.APPROVAL_REQUESTED not in [e.type for e in audit_of(deps).events]
    assert output.success is False


def _a_post(argv: list[str]) -> CommandResult:
    """The site as the write's checks read it: post 45 is a post (no internal type among the IDs)."""
    return CommandResult("post\n" if argv[:2] == ["post", "get"] else "", "", 0, 3)


def test_an_editor_edits_content() -> None:
    wp = RecordingWpCli(handler=_a_post)
    model = ScriptedModel([tool_reply("post update 45 --post_title=秋の特集"), text_reply("更新しました")])
    output = AgentRunner(make_deps(model, wp), NoApprovals()).resume(session(Role.EDITOR))
    assert ["post", "update", "45", "--post_title=秋の特集"] in wp.calls
    assert output.success


def test_a_viewer_reads_but_never_writes() -> None:
    wp = RecordingWpCli()
    model = ScriptedModel(
        [tool_reply("post list --format=json", "post update 45 --post_title=x"), text_reply("一覧です")]
    )
    deps = make_deps(model, wp)
    AgentRunner(deps, AutoApprove("u")).resume(session(Role.VIEWER))
    assert wp.commands() == [["post", "list", "--format=json"]]
    results = model.last_tool_results()
    assert "閲覧者（viewer）" in results[1]["content"]
    assert "編集者（editor）" in results[1]["content"]


def test_a_non_member_session_runs_nothing() -> None:
    wp = RecordingWpCli()
    model = ScriptedModel([tool_reply("post list"), text_reply("x")])
    AgentRunner(make_deps(model, wp), NoApprovals()).resume(session(None))
    assert wp.commands() == []
    assert "メンバーではありません" in model.last_tool_results()[0]["content"]


def test_a_lowered_role_refuses_the_approved_command() -> None:
    """Held while an editor; the role became viewer before the decision: the re-check refuses it."""

    class ApproveAfterDemotion:
        def decide(self, pending: Any, state: SessionState) -> ApprovalDecision:
            state.role = Role.VIEWER  # as refresh_rights does at the next turn
            return ApprovalDecision(approved=True, decided_by="u")

    wp = RecordingWpCli()
    model = ScriptedModel([tool_reply("post delete 45"), text_reply("削除できませんでした")])
    deps = make_deps(model, wp)
    runner = AgentRunner(deps, ApproveAfterDemotion())
    runner.resume(session(Role.EDITOR))
    assert wp.changes() == []
    state = runner.last_state
    assert state is not None
    record = state.commands[0]
    assert (record.status, record.rule) == (CommandStatus.BLOCKED, ROLE_RULE)
    blocked = [e for e in audit_of(deps).events if e.type is AuditEventType.COMMAND_BLOCKED]
    assert [e.rule for e in blocked] == [ROLE_RULE]


def test_refresh_rights_follows_the_registry() -> None:
    state = session(Role.ADMIN)
    state.status = SessionStatus.PLANNING
    assert lifecycle.refresh_rights(state, role=Role.EDITOR, network_admin=False)
    assert state.role is Role.EDITOR
    assert apply_site_scope(POLICY.classify("option update posts_per_page 10"), state.site_scope()).rule == (
        ROLE_RULE
    )
    assert not lifecycle.refresh_rights(state, role=None, network_admin=False)  # removed: the run ends
    assert state.status is SessionStatus.FAILED


def test_network_commands_still_need_a_network_admin() -> None:
    state = session(Role.ADMIN)
    decided = apply_site_scope(POLICY.classify("site create --slug=tokyo"), state.site_scope())
    assert decided.rule == "scope.network_admin_required"
    state.network_admin = True
    decided = apply_site_scope(POLICY.classify("site create --slug=tokyo"), state.site_scope())
    assert decided.category is not PolicyCategory.BLOCKED
    state.role = Role.EDITOR  # a network administrator who is an editor of this target: the role first
    decided = apply_site_scope(POLICY.classify("site create --slug=tokyo"), state.site_scope())
    assert decided.rule == ROLE_RULE
