"""Roles through the serverless stack on the real WordPress behind the sshd rig (issue 27, item 4): the
owner gives a viewer and an editor their roles over the API; for each role a run that stays inside it
works, and one that leaves it changes nothing on the site (every table's checksum, the plugin still
active) and is audited as refused for the role."""

from __future__ import annotations

import itertools
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
