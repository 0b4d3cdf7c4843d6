"""A guarded update through MCP: the real `wp-agent mcp` (the official SDK's client on stdio) on the real
sandbox, its updates from the sandbox's update server. The person approves through elicitation — shown
the plan — and the plugin update that fatals on the front end is taken back by itself; the client's
model reads why; the site read afterwards has the old version running."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult

from tests.integration.test_mcp_server import Person, approving, mcp_client, run, server_environment, text_of
from wp_agent.sandbox import SandboxSite, sample_updates
from wp_agent.sandbox.http_front import HttpFront
from wp_agent.sandbox.update_server import UpdateServer

pytestmark = pytest.mark.timeout(300)
BROKEN = "wpa-sample-front-fatal"


def test_an_update_approved_through_elicitation_is_taken_back_when_it_breaks_the_site(
    tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    env = server_environment(tmp_path, cli_sandbox)
    person = Person(approving(True))
    asked = person.asked
    seen: dict[str, CallToolResult] = {}

    async def main() -> None:
        async with mcp_client(env, name="guarded-update", elicit=person) as client:
            seen["done"] = await client.call_tool(
                "wp_cli", {"command": f"plugin update {BROKEN}", "reason": "更新"}
            )

    with UpdateServer(cli_sandbox, sample_updates.offered()) as server:
        for extension in sample_updates.installed():
            if extension.slug == BROKEN:
                server.install(extension)
        assert cli_sandbox.wp("plugin", "activate", BROKEN, check=False).returncode == 0
        run(main)
        assert (
            f"/downloads.wordpress.org/plugin/{BROKEN}.1.1.0.zip" in server.requests
        )  # really updated first
        answer: Any = text_of(seen["done"])
        assert len(asked) == 1
        assert "自動で変更前の状態に戻し" in asked[0]  # the plan, in what the person was asked
        assert "トップページ" in answer
        assert "戻しました" in answer
        assert (
            cli_sandbox.wp("plugin", "get", BROKEN, "--field=version").stdout.strip()
            == sample_updates.INSTALLED
        )
        with HttpFront(cli_sandbox, workers=1) as front:
            assert f"<!-- {BROKEN} 1.0.0 -->" in front.get("/").body
