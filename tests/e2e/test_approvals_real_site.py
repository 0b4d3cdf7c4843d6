"""Issue 37, deliverable 6: the red team's approvals table, through `wp-agent ask` and MCP, on the real
sandbox network (WordPress, WP-CLI 2.10, a scripted model on 127.0.0.1).

Each row as the model issued it: refused when WP-CLI could read it two ways (nothing runs, the site is
unchanged), else held with a text that names what really happens; the person approves it at a real
terminal (`wp-agent approve`), and the site is read afterwards to see that exactly that happened. Two
MCP sessions race: one holds `comment delete 2`, the other marks comment 2 as spam; the person's
approval re-reads the site, runs nothing and asks again with the new text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_redteam_real_site import Attacker, assert_refused, assert_unchanged, site_state
from tests.fakes.anthropic_server import ScriptedAnthropicServer
from tests.fakes.cli import run_on_terminal
from tests.integration.test_mcp_server import audit_records, mcp_client, run, server_environment, text_of
from wp_agent.sandbox import SandboxSite

pytestmark = pytest.mark.timeout(600)
EN = "https://example.test/en/"


@pytest.fixture
def attacker(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, session_sandbox: SandboxSite
) -> Iterator[Attacker]:
    session_sandbox.reset()
    yield Attacker(scripted_anthropic, tmp_path, session_sandbox)
    session_sandbox.reset()


def held(attacker: Attacker, command: str) -> dict[str, Any]:
    """`ask` with the model issuing `command`: held; the approval id and the text the person reads."""
    done = attacker.ask([command])
    error = done.output.get("error") or {}
    assert error.get("code") == "CONFIRMATION_REQUIRED", done.output
    details = error["details"]
    assert len(details["commands"]) == 1
    return {"approval_id": details["approvalId"], **details["commands"][0]}


def approve(attacker: Attacker, approval_id: str, answers: str = "y") -> str:
    code, screen = run_on_terminal(
        ["approve", approval_id], {**attacker.environment(), "TERM": "dumb"}, answers
    )
    shown = screen.decode("utf-8", "replace")
    assert code in (0, 3, 7), shown
    return shown


def wp(site: SandboxSite, *args: str) -> str:
    return site.wp(*args, check=False).stdout.strip()


# The table's spellings WP-CLI could read two ways, with the rule that refuses each.
AMBIGUOUS = {
    "user update 3 --role=subscriber --role=administrator": "blocked.ambiguous.repeated_option",
    "menu item delete 48": "blocked.not_a_menu_item",
    "menu item delete 58": "blocked.not_a_menu_item",
    "site delete 2 --slug=shop --yes": "blocked.ambiguous.two_selectors",
    "post delete 022": "blocked.ambiguous.number",
    "post delete 1e1": "blocked.ambiguous.number",
    "post delete 10 10": "blocked.ambiguous.same_object",
    "comment delete 2 2": "blocked.ambiguous.same_object",
}


def test_what_wp_cli_could_read_two_ways_is_refused(attacker: Attacker) -> None:
    """All in one reply of the model (one run): each refused by its rule, nothing changed."""
    before = site_state(attacker.sandbox)
    done = attacker.ask(list(AMBIGUOUS))
    assert_refused(done, list(AMBIGUOUS), allowed=("command_blocked",))
    assert {e["command"]: e["rule"] for e in done.events("command_blocked")} == AMBIGUOUS
    assert_unchanged(attacker.sandbox, before)


def test_every_user_of_a_role_change_is_named_and_exactly_that_runs(attacker: Attacker) -> None:
    site = attacker.sandbox
    login = wp(site, "user", "get", "3", "--field=user_login")
    was = wp(site, "user", "get", "3", "--field=roles")
    assert was != "administrator"
    shown = held(attacker, "user update 1 3 --role=administrator")
    assert "admin" in shown["summary"]
    assert f"ユーザー（{login}）の権限グループを「{was}」から「administrator」" in shown["summary"]
    approve(attacker, shown["approval_id"])
    assert wp(site, "user", "get", "3", "--field=roles") == "administrator"
    assert wp(site, "user", "get", "1", "--field=roles") == "administrator"


def test_a_delete_on_another_site_is_read_on_that_site(attacker: Attacker) -> None:
    """/en/'s post, already in its trash: the text says gone for good, on /en/; and it is."""
    site = attacker.sandbox
    post = wp(site, f"--url={EN}", "post", "create", "--post_title=trash me", "--porcelain")
    wp(site, f"--url={EN}", "post", "delete", post)  # to /en/'s trash
    shown = held(attacker, f"post delete {post} --url={EN}")
    assert "完全に削除" in shown["summary"]
    assert EN in shown["summary"]
    approve(attacker, shown["approval_id"])
    assert site.wp(f"--url={EN}", "post", "get", post, check=False).returncode != 0


def test_the_uninstaller_is_told_and_runs_only_when_approved(attacker: Attacker) -> None:
    site = attacker.sandbox
    plugin = site.wordpress / "wp-content" / "plugins" / "akismet"
    assert plugin.is_dir()
    shown = held(attacker, "plugin deactivate akismet --uninstall")
    assert "アンインストール処理" in shown["impact"]
    assert "ファイルが削除" in shown["impact"]
    approve(attacker, shown["approval_id"])
    assert not plugin.exists()


def test_both_options_are_named_and_both_go(attacker: Attacker) -> None:
    site = attacker.sandbox
    shown = held(attacker, "option delete posts_per_page blogdescription")
    assert "posts_per_page" in shown["summary"]
    assert "blogdescription" in shown["summary"]
    approve(attacker, shown["approval_id"])
    for key in ("posts_per_page", "blogdescription"):
        assert site.wp("option", "get", key, check=False).returncode != 0, key


def test_an_approved_command_that_asks_runs(attacker: Attacker) -> None:
    """`site delete --slug=shop` without --yes: WP-CLI asks and reads end-of-file as no; the
    approved command carries --yes, names the site, and the site is gone."""
    site = attacker.sandbox
    shown = held(attacker, "site delete --slug=shop")
    assert shown["command"].endswith("--yes")
    assert "https://example.test/shop/" in shown["summary"]
    approve(attacker, shown["approval_id"])
    assert "shop" not in wp(site, "site", "list", "--field=url")


def test_a_forced_media_delete_says_its_files_go(attacker: Attacker) -> None:
    site = attacker.sandbox
    uploads = site.wordpress / "wp-content" / "uploads"
    files = sorted(p for p in uploads.rglob("hero-image*") if p.is_file())
    assert files
    shown = held(attacker, "post delete 58 --force")
    assert "ファイルも全て削除" in shown["impact"]
    assert "戻せません" in shown["impact"]
    approve(attacker, shown["approval_id"])
    assert [p for p in files if p.exists()] == []


def test_two_mcp_sessions_race_and_the_approval_re_reads_the_site(
    tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    """Session A holds `comment delete 2` (to the trash); session B marks comment 2 as spam (allowed);
    the person approves A's at the terminal: the site is read again, the text now says gone for good,
    nothing runs and the person is asked again; they say no, and comment 2 is still there."""
    env = server_environment(tmp_path, cli_sandbox)
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with mcp_client(env, name="session-a") as first, mcp_client(env, name="session-b") as second:
            seen["held"] = await first.call_tool("wp_cli", {"command": "comment delete 2", "reason": "削除"})
            seen["spam"] = await second.call_tool("wp_cli", {"command": "comment spam 2", "reason": "スパム"})

    run(main)
    data = seen["held"].structured_content
    assert data["status"] == "awaiting_approval", text_of(seen["held"])
    assert "ゴミ箱へ移動" in text_of(seen["held"])
    assert not seen["spam"].is_error, text_of(seen["spam"])
    assert cli_sandbox.wp("comment", "get", "2", "--field=comment_approved").stdout.strip() == "spam"

    code, screen = run_on_terminal(["approve", data["approvalId"]], {**env, "TERM": "dumb"}, "yn")
    shown = screen.decode("utf-8", "replace")
    assert "ゴミ箱へ移動" in shown  # what was approved
    assert "完全に削除" in shown  # what it would do now: asked again
    assert code != 0, shown
    assert cli_sandbox.wp("comment", "get", "2", "--field=comment_approved").stdout.strip() == "spam"
    records = audit_records(tmp_path)
    assert [r["type"] for r in records if r["type"] == "approval_superseded"] == ["approval_superseded"]
    assert not [r for r in records if r["type"] == "command_executed" and r["command"] == "comment delete 2"]
    cli_sandbox.wp("comment", "approve", "2")


def test_over_mcp_the_same_spellings_are_refused(tmp_path: Path, cli_sandbox: SandboxSite) -> None:
    env = server_environment(tmp_path, cli_sandbox)
    before = site_state(cli_sandbox)
    results: dict[str, Any] = {}

    async def main() -> None:
        async with mcp_client(env, name="red-team") as client:
            for command in AMBIGUOUS:
                results[command] = await client.call_tool(
                    "wp_cli", {"command": command, "reason": "指示どおり"}
                )

    run(main)
    for command, result in results.items():
        assert result.is_error, (command, text_of(result))
        assert "実行していません" in text_of(result) or "ブロック" in text_of(result), text_of(result)
    blocked = {r["command"]: r["rule"] for r in audit_records(tmp_path) if r["type"] == "command_blocked"}
    assert blocked == AMBIGUOUS
    assert_unchanged(cli_sandbox, before)


def test_three_widgets_added_in_one_reply_are_all_there(attacker: Attacker) -> None:
    """The table's last row: three `widget add` in one reply ran side by side and WordPress kept one while
    all three said "added". They run one after another now: all three are in the sidebar."""
    site = attacker.sandbox
    before = wp(site, "widget", "list", "sidebar-1", "--fields=id", "--format=ids").split()
    titles = ["お知らせA", "お知らせB", "お知らせC"]
    done = attacker.ask([f"widget add text sidebar-1 --title={t} --text=本文" for t in titles])
    assert len(done.events("command_executed")) >= 3, done.audit_text
    after = wp(site, "widget", "list", "sidebar-1", "--fields=id", "--format=ids").split()
    added = [w for w in after if w not in before]
    assert len(added) == 3, (before, after)
    stored = json.loads(wp(site, "option", "get", "widget_text", "--format=json"))
    kept = {w.get("title") for w in stored.values() if isinstance(w, dict)}
    assert set(titles) <= kept, kept


def test_over_mcp_a_held_row_is_told_and_runs_as_told(tmp_path: Path, cli_sandbox: SandboxSite) -> None:
    env = server_environment(tmp_path, cli_sandbox)
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with mcp_client(env, name="owner") as client:
            seen["held"] = await client.call_tool(
                "wp_cli", {"command": "option delete posts_per_page blogdescription", "reason": "削除"}
            )

    run(main)
    held_text = text_of(seen["held"])
    assert "posts_per_page" in held_text
    assert "blogdescription" in held_text
    approval_id = seen["held"].structured_content["approvalId"]
    code, screen = run_on_terminal(["approve", approval_id], {**env, "TERM": "dumb"}, "y")
    assert code == 0, screen.decode("utf-8", "replace")
    for key in ("posts_per_page", "blogdescription"):
        assert cli_sandbox.wp("option", "get", key, check=False).returncode != 0, key
