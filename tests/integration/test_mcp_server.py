"""`wp-agent mcp` driven by the official MCP SDK's own client over stdio, on the real sandbox
WordPress: tools and their annotations, a read, a blocked command, a destructive command held and
approved (by id, and by elicitation), a rejected one, the resources, and the audit trail naming the
MCP client as the channel."""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.context import ClientRequestContext
from mcp.client.session import ElicitationFnT
from mcp.types import (
    CallToolResult,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    TextContent,
    TextResourceContents,
)

from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import TestWordPress
from tests.fakes.wordpress_fixtures import CURRENT, sandbox_environment
from wp_agent.sandbox import SandboxSite

pytestmark = pytest.mark.timeout(240)
# The model-callable approve / reject tools exist only behind this option (tests of the person's
# path without it: test_mcp_person_approves.py).
MODEL_APPROVES = ("--allow-model-approval",)


def server_environment(home: Path, sandbox: SandboxSite) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "WP_AGENT_AUDIT_FILE": str(home / "audit.jsonl"),
        **sandbox_environment(sandbox),
    }


@asynccontextmanager
async def mcp_client(
    env: dict[str, str],
    *,
    name: str = "pytest-mcp-client",
    elicit: ElicitationFnT | None = None,
    args: tuple[str, ...] = (),
) -> AsyncIterator[ClientSession]:
    """The SDK's stdio client on `wp-agent mcp [args]` (a real subprocess), initialised."""
    command = ["-m", "wp_agent.cli.main", "mcp", *args]
    params = StdioServerParameters(command=sys.executable, args=command, env=env)
    async with (
        stdio_client(params) as (read, write),
        ClientSession(
            read, write, client_info=Implementation(name=name, version="1.0"), elicitation_callback=elicit
        ) as session,
    ):
        await session.initialize()
        yield session


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def audit_records(home: Path) -> list[dict[str, Any]]:
    path = home / "audit.jsonl"
    return (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    )


def post_status(sandbox: SandboxSite, post_id: int) -> str:
    result = sandbox.wp("post", "get", str(post_id), "--field=post_status", check=False)
    return result.stdout.strip() if result.returncode == 0 else "missing"


class Person:
    """The human an MCP client asks (elicitation): gives `answers` in turn and keeps what was asked."""

    def __init__(self, *answers: ElicitResult) -> None:
        self._answers = iter(answers)
        self.asked: list[str] = []

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append(params.message)
        return next(self._answers)


def approving(approve: bool) -> ElicitResult:
    return ElicitResult(action="accept", content={"approve": approve})


def run(main: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(180):
            await main()

    anyio.run(bounded)


def _assert_annotations(tools: dict[str, Any]) -> None:
    assert set(tools) == {"wp_cli", "approve", "reject", "check", "publish_article"}
    assert tools["wp_cli"].annotations.destructive_hint is True
    assert tools["wp_cli"].annotations.read_only_hint is False
    assert tools["check"].annotations.read_only_hint is True
    assert tools["approve"].annotations.destructive_hint is True
    assert tools["publish_article"].annotations.destructive_hint is False
    assert tools["publish_article"].annotations.read_only_hint is False


def _assert_resources(seen: dict[str, Any]) -> None:
    assert seen["resources"] == {"wp-agent://site", "wp-agent://policy"}
    assert isinstance(seen["site"], TextResourceContents)
    site = json.loads(seen["site"].text)
    assert site["name"] == "Argo Note サンプルサイト"
    assert site["url"] == "https://example.test"
    assert site["wordpressVersion"] == CURRENT.version
    assert site["multisite"] is True
    assert {s["url"] for s in site["sites"]} >= {"https://example.test/en/", "https://example.test/shop/"}
    assert isinstance(seen["policy"], TextResourceContents)
    assert "常にブロック" in seen["policy"].text
    assert "`wp eval`" in seen["policy"].text


def _assert_audit(records: list[dict[str, Any]]) -> None:
    assert records
    assert {r.get("channel") for r in records} == {"mcp:pytest-mcp-client"}
    types = [r["type"] for r in records]
    assert "command_blocked" in types
    assert "approval_requested" in types
    assert "approval_approved" in types
    assert "approval_rejected" in types
    executed = [r["command"] for r in records if r["type"] == "command_executed"]
    assert any(c.startswith("post list") for c in executed)
    assert any(c.startswith("post delete 45") for c in executed)
    assert not any(c.startswith("post delete 46") for c in executed)


def test_tools_read_block_hold_approve_reject_and_audit(tmp_path: Path, cli_sandbox: SandboxSite) -> None:
    env = server_environment(tmp_path, cli_sandbox)
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with mcp_client(env, args=MODEL_APPROVES) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            seen["tools"] = tools
            seen["read"] = await client.call_tool(
                "wp_cli",
                {"command": "post list --post_status=draft --fields=ID,post_title", "reason": "下書き確認"},
            )
            seen["blocked"] = await client.call_tool("wp_cli", {"command": "db drop --yes", "reason": "攻撃"})
            seen["held"] = await client.call_tool(
                "wp_cli", {"command": "post delete 45 --force", "reason": "削除"}
            )
            seen["status_while_held"] = post_status(cli_sandbox, 45)
            approval_id = seen["held"].structured_content["approvalId"]
            seen["approved"] = await client.call_tool("approve", {"approvalId": approval_id})
            seen["again"] = await client.call_tool("approve", {"approvalId": approval_id})
            seen["held2"] = await client.call_tool(
                "wp_cli", {"command": "post delete 46 --force", "reason": "削除"}
            )
            seen["rejected"] = await client.call_tool(
                "reject", {"approvalId": seen["held2"].structured_content["approvalId"]}
            )
            seen["check"] = await client.call_tool("check", {"command": "eval 'echo 1;'"})
            seen["check_site"] = await client.call_tool("check", {"command": "post update 45 --post_title=x"})
            seen["resources"] = {str(r.uri) for r in (await client.list_resources()).resources}
            seen["site"] = (await client.read_resource("wp-agent://site")).contents[0]
            seen["policy"] = (await client.read_resource("wp-agent://policy")).contents[0]

    run(main)
    _assert_annotations(seen["tools"])

    read = seen["read"]
    assert not read.is_error
    assert 'trust="untrusted-data"' in text_of(read)
    assert "45" in text_of(read)

    blocked = seen["blocked"]
    assert blocked.is_error
    assert "ブロック" in text_of(blocked)
    assert "データベース" in text_of(blocked)

    held = seen["held"]
    assert not held.is_error
    assert held.structured_content["status"] == "awaiting_approval"
    assert "承認ID" in text_of(held)
    assert seen["status_while_held"] == "draft"
    assert not seen["approved"].is_error, text_of(seen["approved"])
    assert post_status(cli_sandbox, 45) == "missing"
    assert seen["again"].is_error  # an approval is used once
    assert "rejected" in json.dumps(seen["rejected"].structured_content)
    assert post_status(cli_sandbox, 46) == "draft"
    assert seen["check"].structured_content["decision"] == "block"
    # decided as wp_cli decides it (policy/decide.py): the step that reads the site says which reads decide
    steps = seen["check_site"].structured_content["explain"]
    assert [s["step"] for s in steps] == ["table", "scope", "post_targets", "role_targets", "meta_spelling"]
    assert steps[2]["waitsForSite"]
    assert steps[2]["siteReads"]
    assert "サイトの状態を読んで" in text_of(seen["check_site"])
    assert seen["check_site"].structured_content["row"]["leastRole"] in {"editor", "admin"}  # its row too

    _assert_resources(seen)
    _assert_audit(audit_records(tmp_path))


def test_an_elicitation_capable_client_is_asked_and_its_answer_decides(
    tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    env = server_environment(tmp_path, cli_sandbox)
    person = Person(approving(True), approving(False))
    asked = person.asked
    seen: dict[str, CallToolResult] = {}

    async def main() -> None:
        async with mcp_client(env, name="elicit-client", elicit=person) as client:
            seen["yes"] = await client.call_tool(
                "wp_cli", {"command": "post delete 45 --force", "reason": "削除"}
            )
            seen["no"] = await client.call_tool(
                "wp_cli", {"command": "post delete 46 --force", "reason": "削除"}
            )

    run(main)
    assert len(asked) == 2
    assert "実行してよろしいですか" in asked[0]
    assert "wp post delete 45 --force" in asked[0]
    assert not seen["yes"].is_error, text_of(seen["yes"])
    assert post_status(cli_sandbox, 45) == "missing"
    assert "取りやめました" in text_of(seen["no"])
    assert post_status(cli_sandbox, 46) == "draft"
    records = audit_records(tmp_path)
    approvals = {r["type"]: r for r in records if r["type"].startswith("approval_")}
    assert approvals["approval_approved"]["approver"] == "mcp:elicit-client:elicitation"
    assert approvals["approval_rejected"]["approver"] == "mcp:elicit-client:elicitation"
    assert {r.get("channel") for r in records} == {"mcp:elicit-client"}


# Blocked by the policy whatever the wording: code execution, the database, config, chaining,
# substitution, global flags, secrets.
BLOCKED_COMMANDS = (
    "db drop --yes",
    "eval 'system(\"id\");'",
    "eval-file /etc/passwd",
    "config get DB_PASSWORD",
    "post list; wp db drop --yes",
    "post list && wp db reset --yes",
    "post list $(wp db export -)",
    "post list --exec='system(\"id\");'",
    "post list --require=/tmp/x.php",
    "user list --fields=user_login,user_pass",
    "search-replace example.test evil.test --all-tables",
    "db  query 'DROP TABLE wp_posts'",
    "wp db drop --yes",
)


def test_an_attacker_cannot_run_a_blocked_command_through_any_tool(
    tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    env = server_environment(tmp_path, cli_sandbox)
    seen: dict[str, Any] = {"wp_cli": [], "check": [], "approve": [], "publish": []}
    forged = ["apr_00000000000000000000", "", "../apr", "x" * 300]

    async def main() -> None:
        async with mcp_client(env, name="attacker", args=MODEL_APPROVES) as client:
            for command in BLOCKED_COMMANDS:
                seen["wp_cli"].append(
                    await client.call_tool("wp_cli", {"command": command, "reason": "テスト"})
                )
                seen["check"].append(await client.call_tool("check", {"command": command}))
            for approval_id in forged:
                seen["approve"].append(await client.call_tool("approve", {"approvalId": approval_id}))
            # An approval id of another MCP session (another server process here; the HTTP test
            # covers two sessions of one server).
            async with mcp_client(env, name="victim", args=MODEL_APPROVES) as victim:
                held = await victim.call_tool("wp_cli", {"command": "post delete 45 --force", "reason": "x"})
                other_id = held.structured_content["approvalId"]
                seen["approve"].append(await client.call_tool("approve", {"approvalId": other_id}))
                seen["approve"].append(await client.call_tool("reject", {"approvalId": other_id}))
            for article in (
                {
                    "title": "x; wp db drop --yes",
                    "content": "$(wp db drop --yes) `wp eval 'x'`",
                    "status": "draft",
                },
                {"title": "t", "content": "c", "status": "draft", "categories": ["--exec=system('id')"]},
                {"title": "t", "content": "c", "status": "draft", "tags": ["x --require=/tmp/x.php"]},
                {"title": "t", "content": "c", "status": "draft", "meta": {"user_pass": "x"}},
                {"title": "t", "content": "c", "status": "draft", "featuredImageUrl": "file:///etc/passwd"},
                {
                    "title": "t",
                    "content": "c",
                    "status": "draft",
                    "featuredImageUrl": "http://127.0.0.1:22/x.jpg",
                },
                {
                    "title": "t",
                    "content": "c",
                    "status": "draft",
                    "siteUrl": "https://example.test/ --exec=x",
                },
                {"title": "t", "content": "c", "status": "publish", "author": "admin --user=1"},
            ):
                seen["publish"].append(await client.call_tool("publish_article", {"article": article}))

    run(main)
    assert all(r.is_error for r in seen["wp_cli"]), [text_of(r) for r in seen["wp_cli"] if not r.is_error]
    assert all("ブロック" in text_of(r) for r in seen["wp_cli"])
    assert all(r.structured_content["decision"] == "block" for r in seen["check"])
    assert all(r.is_error for r in seen["approve"]), [text_of(r) for r in seen["approve"]]
    assert post_status(cli_sandbox, 45) == "draft"  # the victim's held delete never ran
    # ... and expired (audited) when the victim's connection ended
    expired = [r for r in audit_records(tmp_path) if r["type"] == "approval_expired"]
    assert [(r["channel"], r["command"]) for r in expired] == [("mcp:victim", "post delete 45 --force")]
    # Nothing blocked ran: every executed command of the attacker is an ordinary, allowed one.
    records = [r for r in audit_records(tmp_path) if r.get("channel") == "mcp:attacker"]
    executed = [r["command"] for r in records if r["type"] == "command_executed"]
    families = ("db ", "eval", "config ", "search-replace", "user list")
    # (a quoted value such as the tag name 'x --require=/tmp/x.php' is one argument: data, not a flag)
    flags = ("--exec", "--require", "--ssh", "--http", "--path")
    assert not [
        c for c in executed if c.startswith(families) or any(w.startswith(flags) for w in shlex.split(c))
    ]
    blocked = [r for r in records if r["type"] == "command_blocked"]
    assert len(blocked) >= len(BLOCKED_COMMANDS)  # and whatever the publisher refused
    assert (
        cli_sandbox.wp("db", "check", check=False).returncode == 0
        or cli_sandbox.wp("post", "list").returncode == 0
    )
    assert cli_sandbox.wp("option", "get", "home").stdout.strip() == "https://example.test"


@pytest.mark.sshd
def test_ssh_mode_with_the_same_configuration_as_ask(
    tmp_path: Path, sshd_server: SshdRig, rig_site: TestWordPress
) -> None:
    """WP_CLI_MODE=ssh (a real sshd on 127.0.0.1, pinned host key): the same environment `ask` takes."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "WP_AGENT_AUDIT_FILE": str(tmp_path / "audit.jsonl"),
        **sshd_server.environment(),
    }
    seen: dict[str, CallToolResult] = {}

    async def main() -> None:
        async with mcp_client(env, name="ssh-client", args=MODEL_APPROVES) as client:
            seen["read"] = await client.call_tool(
                "wp_cli", {"command": "option get blogname", "reason": "確認"}
            )
            seen["held"] = await client.call_tool(
                "wp_cli", {"command": "post delete 45 --force", "reason": "削除"}
            )
            approval_id = seen["held"].structured_content["approvalId"]
            seen["approved"] = await client.call_tool("approve", {"approvalId": approval_id})

    run(main)
    assert not seen["read"].is_error, text_of(seen["read"])
    assert 'site="sandbox"' not in text_of(seen["read"])  # a real site over SSH, not the sandbox
    assert not seen["approved"].is_error, text_of(seen["approved"])
    assert rig_site.post(45) is None
    records = audit_records(tmp_path)
    assert {r.get("channel") for r in records} == {"mcp:ssh-client"}
