"""Roles on the real sandbox through `wp-agent api serve` (issue 27): the owner gives a viewer and an
editor their roles over the API; each asks the agent (a scripted model) for content edits, a plugin
change and a user change; only what the role allows reaches the site, the rest changes nothing."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest

from tests.e2e.test_api_serve import LocalApi, local_api  # noqa: F401 - the fixture
from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_text, reply_tool_use
from wp_agent.sandbox import SandboxSite

pytestmark = pytest.mark.slow
TITLE = ("post", "get", "45", "--field=post_title")
AKISMET = ("plugin", "is-active", "akismet")
DISPLAY_NAME = ("user", "get", "1", "--field=display_name")
_SESSIONS = itertools.count(1)


def ask(api: LocalApi, anthropic: ScriptedAnthropicServer, user: str, command: str) -> dict[str, Any]:
    """`user` asks for `command` (the scripted model's one tool call) in a new session; its end."""
    anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": command, "reason": "依頼された操作"})]),
        reply_text("終わりました"),
    )
    session = f"ses_roles_{next(_SESSIONS):04d}"
    status, accepted = api.call(
        "POST", f"/v1/sessions/{session}/messages", {"message": command, "targetId": "sandbox"}, user=user
    )
    assert status == 202, accepted
    deadline = time.monotonic() + 120
    approved: set[str] = set()
    while time.monotonic() < deadline:
        code, view = api.call("GET", f"/v1/sessions/{session}", user=user)
        if code == 200 and view["status"] in {"Completed", "Failed", "AwaitingApproval"}:
            approval = str((view.get("pendingApproval") or {}).get("approvalId"))
            if view["status"] == "AwaitingApproval" and approval not in approved:
                path = f"/v1/sessions/{session}/approvals/{approval}"
                decided = api.call("POST", path, {"decision": "approve"}, user=user)
                assert decided[0] == 200, decided
                approved.add(approval)
            if view["status"] == "AwaitingApproval":
                time.sleep(0.3)
                continue
            return dict(view)
        time.sleep(0.3)
    raise AssertionError(f"session {session} did not end")


def site(sandbox: SandboxSite, *args: str) -> str:
    return sandbox.wp(*args, check=False).stdout.strip()


def test_each_role_reaches_the_site_only_inside_it(
    local_api: LocalApi,  # noqa: F811 - the fixture
    scripted_anthropic: ScriptedAnthropicServer,
    cli_sandbox: SandboxSite,
) -> None:
    api = local_api
    for user, role in (("view-1", "viewer"), ("ed-1", "editor")):
        status, body = api.call("PUT", f"/v1/targets/sandbox/members/{user}", {"role": role})
        assert status == 200, body
    status, members = api.call("GET", "/v1/targets/sandbox/members", user="ed-1")
    assert (status, members["error"]["code"]) == (403, "MEMBER_ADMIN_REQUIRED")
    title = site(cli_sandbox, *TITLE)

    # a viewer reads, and changes nothing
    before = cli_sandbox.table_state()
    assert ask(api, scripted_anthropic, "view-1", "post list --format=ids")["status"] == "Completed"
    refused = ask(api, scripted_anthropic, "view-1", "post update 45 --post_title=閲覧者が変更")
    assert refused["status"] == "Failed"
    assert refused["result"]["error"]["code"] == "COMMAND_BLOCKED"
    assert cli_sandbox.table_state() == before
    assert site(cli_sandbox, *TITLE) == title

    # an editor edits content, and cannot change a plugin or a user
    assert (
        ask(api, scripted_anthropic, "ed-1", "post update 45 --post_title=編集者が変更")["status"]
        == "Completed"
    )
    assert site(cli_sandbox, *TITLE) == "編集者が変更"
    before = cli_sandbox.table_state()
    for command in ("plugin deactivate akismet", "user update 1 --display_name=編集者"):
        assert ask(api, scripted_anthropic, "ed-1", command)["status"] == "Failed"
    assert cli_sandbox.table_state() == before
    assert cli_sandbox.wp(*AKISMET, check=False).returncode == 0  # still active
    # nor, by its ID, a post that is not content: a menu item (an admin's update would wait for
    # approval, which `ask` gives at once: the editor's is refused before it could be approved)
    menu_item = site(cli_sandbox, "post", "list", "--post_type=nav_menu_item", "--format=ids").split()[0]
    not_content = (
        f"post update {menu_item} --post_title=編集者が変更",
        f"post meta update {menu_item} _menu_item_url https://evil.example/",
    )
    for command in not_content:
        assert ask(api, scripted_anthropic, "ed-1", command)["status"] == "Failed"
    assert cli_sandbox.table_state() == before

    # the owner (an admin) may: the plugin change after its approval, the profile change at once
    assert (
        ask(api, scripted_anthropic, "dev-1", "user update 1 --display_name=管理者")["status"] == "Completed"
    )
    assert site(cli_sandbox, *DISPLAY_NAME) == "管理者"
    assert ask(api, scripted_anthropic, "dev-1", "plugin deactivate akismet")["status"] == "Completed"
    assert cli_sandbox.wp(*AKISMET, check=False).returncode == 1

    status, trail = api.call("GET", "/v1/targets/sandbox/activity?type=command_blocked")
    assert status == 200
    rules = {(r["command"], r["rule"]) for r in trail["records"]}
    assert rules == {
        ("post update 45 --post_title=閲覧者が変更", "role.insufficient"),
        ("plugin deactivate akismet", "role.insufficient"),
        ("user update 1 --display_name=編集者", "role.insufficient"),
        *((command, "role.insufficient") for command in not_content),
    }
