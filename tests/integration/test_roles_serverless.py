"""Roles through the serverless stack on the real WordPress behind the sshd rig (issue 27, item 4): the
owner gives a viewer and an editor their roles over the API; for each role a run that stays inside it
works, and one that leaves it changes nothing on the site (every table's checksum, the plugin still
active) and is audited as refused for the role."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest

from tests.fakes.anthropic_server import reply_text, reply_tool_use
from tests.fakes.serverless import OWNER, TARGET_ID, ServerlessStack

pytestmark = pytest.mark.sshd
VIEWER, EDITOR = "viewer-1", "editor-1"
_SESSIONS = itertools.count(1)


def ask(stack: ServerlessStack, user: str, command: str) -> tuple[str, dict[str, Any]]:
    """`user` asks for `command` (the scripted model's one call) in a new session; approves what is
    held as that user (a requester approves their own); the session's end."""
    stack.model.enqueue(
        reply_tool_use([("wp_cli", {"command": command, "reason": "依頼された操作"})]),
        reply_text("終わりました"),
    )
    session = f"ses_roles_sls_{next(_SESSIONS):03d}"
    body = {"message": command, "targetId": TARGET_ID}
    status, accepted = stack.api("POST", f"/v1/sessions/{session}/messages", body=body, user=user)
    assert status == 202, accepted
    view = stack.wait_for(session, "Completed", "Failed", "AwaitingApproval", user=user)
    if view["status"] == "AwaitingApproval":
        path = f"/v1/sessions/{session}/approvals/{view['pendingApproval']['approvalId']}"
        decided = stack.api("POST", path, body={"decision": "approve"}, user=user)
        assert decided[0] == 200, decided
        view = stack.wait_for(session, "Completed", "Failed", user=user)
    return session, view


def refused_for_role(stack: ServerlessStack, session: str) -> list[str]:
    return [r["command"] for r in stack.audit(session) if r.get("rule") == "role.insufficient"]


def test_each_role_changes_the_site_only_inside_it(serverless: ServerlessStack) -> None:
    stack = serverless
    site = stack.site
    for user, role in ((VIEWER, "viewer"), (EDITOR, "editor")):
        status, body = stack.api("PUT", f"/v1/targets/{TARGET_ID}/members/{user}", body={"role": role})
        assert status == 200, body
    assert site.wp("plugin", "is-active", "akismet").returncode == 0

    # a viewer: a read works, a content edit changes nothing
    _, view = ask(stack, VIEWER, "post get 45 --field=post_title")
    assert view["status"] == "Completed", view
    before = site.table_checksums()
    session, view = ask(stack, VIEWER, "post update 45 --post_title=閲覧者の変更")
    assert view["status"] == "Failed"
    assert refused_for_role(stack, session) == ["post update 45 --post_title=閲覧者の変更"]
    assert site.table_checksums() == before

    # an editor: a content edit works; a plugin and a user change nothing
    _, view = ask(stack, EDITOR, "post update 45 --post_title=編集者の変更")
    assert view["status"] == "Completed", view
    assert site.wp("post", "get", "45", "--field=post_title").stdout.strip() == "編集者の変更"
    before = site.table_checksums()
    for command in ("plugin deactivate akismet", "user update 1 --display_name=編集者"):
        session, view = ask(stack, EDITOR, command)
        assert view["status"] == "Failed", view
        assert refused_for_role(stack, session) == [command]
    assert site.table_checksums() == before
    assert site.wp("plugin", "is-active", "akismet").returncode == 0

    # the owner (an admin): the plugin change, after its approval
    _, view = ask(stack, OWNER, "plugin deactivate akismet")
    assert view["status"] == "Completed", view
    assert site.wp("plugin", "is-active", "akismet").returncode == 1


def test_an_approved_delete_is_decided_again_on_the_site_as_it_is_when_it_runs(
    serverless: ServerlessStack,
) -> None:
    """An editor's delete of post 45 waits for approval; meanwhile the post becomes a template (not
    content: not the editor's). However often the person approves, the delete never runs: the approved
    command is decided again by the whole policy on the site as it is then, and refused for the role.
    (Decided again by the table and the scope alone, it ran and deleted the template.)"""
    stack = serverless
    site = stack.site
    status, body = stack.api("PUT", f"/v1/targets/{TARGET_ID}/members/{EDITOR}", body={"role": "editor"})
    assert status == 200, body
    stack.model.enqueue(
        reply_tool_use([("wp_cli", {"command": "post delete 45 --force", "reason": "依頼された削除"})]),
        reply_text("終わりました"),
    )
    session = "ses_roles_sls_recheck"
    body = {"message": "ID 45 を完全に削除して", "targetId": TARGET_ID}
    status, accepted = stack.api("POST", f"/v1/sessions/{session}/messages", body=body, user=EDITOR)
    assert status == 202, accepted
    view = stack.wait_for(session, "AwaitingApproval", user=EDITOR)
    site.sql("UPDATE wp_posts SET post_type = 'wp_template' WHERE ID = 45")
    for _ in range(3):  # asked again when the summary read on the site changed
        asked = view["pendingApproval"]["approvalId"]
        path = f"/v1/sessions/{session}/approvals/{asked}"
        assert stack.api("POST", path, body={"decision": "approve"}, user=EDITOR)[0] == 200
        view = _next_view(stack, session, asked)
        if view["status"] != "AwaitingApproval":
            break
    assert site.sql("SELECT post_type FROM wp_posts WHERE ID = 45") == [["wp_template"]]  # still there
    assert refused_for_role(stack, session) == ["post delete 45 --force"]


def _next_view(stack: ServerlessStack, session: str, answered: str) -> dict[str, Any]:
    """The session once the answered approval was acted on: ended, or waiting on a new approval."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status, view = stack.api("GET", f"/v1/sessions/{session}", user=EDITOR)
        waiting = view.get("pendingApproval") or {}
        if status == 200 and (
            view["status"] in {"Completed", "Failed"}
            or (view["status"] == "AwaitingApproval" and waiting.get("approvalId") != answered)
        ):
            return dict(view)
        time.sleep(0.1)
    raise AssertionError(f"session {session} was not acted on after {answered}")
