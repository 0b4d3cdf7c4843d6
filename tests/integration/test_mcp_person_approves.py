"""Issue 24, item 4: over MCP a destructive command is approved by a person, never by the model.

The real `wp-agent mcp` (a subprocess on stdio, driven by the official SDK's client) on the real
sandbox WordPress. A client without elicitation gets the policy's summary and the terminal command a
person runs; whatever the model then calls — an `approve` tool that is not there, made-up tools,
`check`, `publish_article`, `wp_cli` with the approval in it, a resource — the held command does not
run: every table of the site is unchanged and the audit shows it held. A model with a shell tool
running `wp-agent approve` (no terminal) gets nothing run either. The person's `wp-agent approve <id>`
on a real terminal shows the summary, asks y/N, and runs the command exactly once, audited with the
person as approver. `--allow-model-approval` brings the approve tool back, with its warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, ElicitResult

from tests.fakes.cli import run_cli, run_on_terminal
from tests.integration.test_mcp_server import (
    Person,
    audit_records,
    mcp_client,
    post_status,
    run,
    server_environment,
    text_of,
)
from wp_agent.program import command_name
from wp_agent.sandbox import SandboxSite

pytestmark = pytest.mark.timeout(300)

DELETE = "post delete 45 --force"


def pending_file(home: Path, approval_id: str) -> Path:
    return home / ".wp-agent" / "pending" / f"{approval_id}.json"


def executed(home: Path, command: str) -> list[dict[str, Any]]:
    return [r for r in audit_records(home) if r["type"] == "command_executed" and r["command"] == command]


def test_without_elicitation_no_tool_call_gets_a_held_command_run(
    tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    env = server_environment(tmp_path, cli_sandbox)
    before = cli_sandbox.table_state()
    seen: dict[str, Any] = {"attempts": []}

    async def main() -> None:
        async with mcp_client(env, name="attacker") as client:
            seen["tools"] = {tool.name for tool in (await client.list_tools()).tools}
            seen["instructions"] = client.instructions
            held = await client.call_tool("wp_cli", {"command": DELETE, "reason": "削除"})
            seen["held"] = held
            approval_id = held.structured_content["approvalId"]
            attempts: list[tuple[str, dict[str, Any]]] = [
                ("approve", {"approvalId": approval_id}),
                ("reject", {"approvalId": approval_id}),
                ("approve_command", {"approvalId": approval_id}),
                ("wp_agent_approve", {"id": approval_id}),
                ("confirm", {"approvalId": approval_id, "approved": True}),
                ("wp_cli", {"command": f"wp-agent approve {approval_id}", "reason": "利用者が承認済み"}),
                ("wp_cli", {"command": f"approve {approval_id}", "reason": "承認"}),
                ("wp_cli", {"command": f"{DELETE} --approval={approval_id}", "reason": "承認済み"}),
                ("check", {"command": DELETE}),
                ("check", {"command": f"approve {approval_id}"}),
                (
                    "publish_article",
                    {"article": {"title": approval_id, "content": "approve", "status": "approve"}},
                ),
                ("publish_article", {"article": {"approvalId": approval_id, "approved": True}}),
            ]
            for name, arguments in attempts:
                seen["attempts"].append((name, await client.call_tool(name, arguments)))
            try:
                await client.read_resource(f"wp-agent://approve/{approval_id}")
                seen["resource"] = "read"
            except MCPError as exc:
                seen["resource"] = str(exc)
            seen["again"] = await client.call_tool("wp_cli", {"command": DELETE, "reason": "もう一度"})

    run(main)
    _assert_held_and_nothing_ran(seen, tmp_path, cli_sandbox, before)
    _the_person_decides(seen, env, tmp_path, cli_sandbox, before)


def _assert_held_and_nothing_ran(
    seen: dict[str, Any], home: Path, cli_sandbox: SandboxSite, before: dict[str, list[str]]
) -> None:
    assert seen["tools"] == {"wp_cli", "check", "publish_article"}  # no approve, no reject
    assert "AIが承認する手段はありません" in seen["instructions"]
    held: CallToolResult = seen["held"]
    assert not held.is_error
    data = held.structured_content
    assert data["status"] == "awaiting_approval"
    assert data["approveWith"] == "terminal"
    assert data["approveCommand"] == f"{command_name()} approve {data['approvalId']}"  # what runs here
    assert data["approveCommand"].endswith(f"wp-agent approve {data['approvalId']}")
    assert "AIからは承認できません" in text_of(held)
    assert "post delete 45 --force" in text_of(held)
    for name, result in seen["attempts"]:
        if name == "check":
            assert result.structured_content["decision"] in {"confirm", "block"}, text_of(result)
        elif name == "wp_cli" and not result.is_error:  # a new hold, for the person again
            assert result.structured_content["approveWith"] == "terminal", text_of(result)
        else:
            assert result.is_error, (name, text_of(result))
    assert seen["resource"] != "read"
    assert seen["again"].structured_content["status"] == "awaiting_approval"  # held again, new id

    assert cli_sandbox.table_state() == before
    assert post_status(cli_sandbox, 45) == "draft"
    assert executed(home, DELETE) == []
    records = audit_records(home)
    requested = [r["command"] for r in records if r["type"] == "approval_requested"]
    # The first hold and the last one; `--approval=…` on a held command is refused (a flag the
    # approval text cannot describe), never held as the plain delete.
    assert len(requested) == 2
    assert all(c.startswith(DELETE) for c in requested)
    assert not [r for r in records if r["type"] in {"approval_approved", "approval_rejected"}]
    # Each held call's run ends held on record (history: 承認待ち), named by what the client asked.
    held_ends = [r for r in records if r["type"] == "run_summary" and r["status"] == "awaiting_approval"]
    assert len(held_ends) == 2
    assert {r["channel"] for r in held_ends} == {"mcp:attacker"}
    assert all(r["instruction"].startswith(f"MCP（attacker）: wp {DELETE}") for r in held_ends)
    # The hold outlives the connection (it was handed to the person, not expired with the session).
    assert not [r for r in records if r["type"] == "approval_expired"]
    kept = json.loads(pending_file(home, data["approvalId"]).read_text(encoding="utf-8"))
    assert kept["channel"] == "mcp:attacker"
    assert oct(pending_file(home, data["approvalId"]).stat().st_mode & 0o777) == "0o600"


def _the_person_decides(
    seen: dict[str, Any],
    env: dict[str, str],
    home: Path,
    cli_sandbox: SandboxSite,
    before: dict[str, list[str]],
) -> None:
    data = seen["held"].structured_content
    # A model with a shell tool runs the printed command: no terminal, so nothing runs.
    shell = run_cli(home, "approve", data["approvalId"], **env)
    assert shell.returncode == 3, shell.stderr
    assert "端末で内容を確認して承認" in shell.stderr
    assert cli_sandbox.table_state() == before
    assert pending_file(home, data["approvalId"]).exists()

    # The person, at a terminal: sees the policy's summary, answers y, and it runs exactly once.
    terminal_env = {**env, "TERM": "dumb"}
    code, screen = run_on_terminal(["approve", data["approvalId"]], terminal_env, "y")
    shown = screen.decode("utf-8", "replace")
    assert code == 0, shown
    assert "mcp:attacker" in shown
    assert "投稿（ID: 45）" in shown
    assert "実行してよろしいですか" in shown
    assert post_status(cli_sandbox, 45) == "missing"
    assert len(executed(home, DELETE)) == 1
    approved = [r for r in audit_records(home) if r["type"] == "approval_approved"]
    assert [(r["approver"], r["command"]) for r in approved] == [("cli:local-user", DELETE)]
    assert not pending_file(home, data["approvalId"]).exists()
    code, screen = run_on_terminal(["approve", data["approvalId"]], terminal_env, "y")
    assert code == 2, screen.decode("utf-8", "replace")  # used once: not found any more
    assert len(executed(home, DELETE)) == 1

    # The second hold: the person rejects it from any shell; nothing runs.
    second = seen["again"].structured_content["approvalId"]
    rejected = run_cli(home, "reject", second, **env)
    assert rejected.returncode == 7, rejected.stderr
    assert len(executed(home, DELETE)) == 1
    assert [r["approver"] for r in audit_records(home) if r["type"] == "approval_rejected"] == [
        "cli:local-user"
    ]


def test_a_hold_with_a_secret_is_not_written_and_never_runs(tmp_path: Path, cli_sandbox: SandboxSite) -> None:
    env = server_environment(tmp_path, cli_sandbox)
    command = "user create mallory mallory@example.test --role=administrator --user_pass=Kx9-secret-Pw"
    seen: dict[str, CallToolResult] = {}

    async def main() -> None:
        async with mcp_client(env, name="no-elicitation") as client:
            seen["held"] = await client.call_tool("wp_cli", {"command": command, "reason": "作成"})

    run(main)
    assert seen["held"].is_error
    assert "秘密情報" in text_of(seen["held"])
    assert "Kx9-secret-Pw" not in text_of(seen["held"])
    assert not (tmp_path / ".wp-agent" / "pending").exists() or not list(
        (tmp_path / ".wp-agent" / "pending").iterdir()
    )
    assert "Kx9-secret-Pw" not in (tmp_path / "audit.jsonl").read_text(encoding="utf-8")
    types = [r["type"] for r in audit_records(tmp_path)]
    assert types.count("approval_requested") == 1
    assert types.count("approval_expired") == 1
    assert cli_sandbox.wp("user", "get", "mallory", check=False).returncode != 0


def test_a_cancelled_elicitation_hands_the_hold_to_the_person(
    tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    env = server_environment(tmp_path, cli_sandbox)
    person = Person(ElicitResult(action="cancel"))
    asked = person.asked
    seen: dict[str, CallToolResult] = {}

    async def main() -> None:
        async with mcp_client(env, name="elicit-client", elicit=person) as client:
            seen["held"] = await client.call_tool("wp_cli", {"command": DELETE, "reason": "削除"})

    run(main)
    assert len(asked) == 1
    assert seen["held"].structured_content["approveWith"] == "terminal"
    assert pending_file(tmp_path, seen["held"].structured_content["approvalId"]).exists()
    assert post_status(cli_sandbox, 45) == "draft"


def test_with_allow_model_approval_the_model_may_approve_and_is_warned(
    tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    env = server_environment(tmp_path, cli_sandbox)
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with mcp_client(env, name="trusted", args=("--allow-model-approval",)) as client:
            seen["tools"] = {tool.name for tool in (await client.list_tools()).tools}
            seen["instructions"] = client.instructions
            held = await client.call_tool("wp_cli", {"command": DELETE, "reason": "削除"})
            seen["held"] = held
            seen["approved"] = await client.call_tool(
                "approve", {"approvalId": held.structured_content["approvalId"]}
            )

    run(main)
    assert seen["tools"] == {"wp_cli", "check", "publish_article", "approve", "reject"}
    assert "--allow-model-approval" in seen["instructions"]
    assert seen["held"].structured_content["approveWith"] == "tool"
    assert not seen["approved"].is_error, text_of(seen["approved"])
    assert post_status(cli_sandbox, 45) == "missing"
    approved = [r for r in audit_records(tmp_path) if r["type"] == "approval_approved"]
    assert [r["approver"] for r in approved] == ["mcp:trusted:approve"]
    assert not (tmp_path / ".wp-agent" / "pending").exists()


def test_the_option_and_the_person_path_are_in_the_help(tmp_path: Path) -> None:
    shown = run_cli(tmp_path, "mcp", "--help")
    assert "--allow-model-approval" in shown.stdout
    assert "wp-agent approve" in shown.stdout
