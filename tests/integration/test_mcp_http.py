"""`wp-agent mcp --http`: streamable HTTP on 127.0.0.1 only (any free port), driven by the SDK's
own HTTP client; two sessions on one server keep their approvals apart. Bounded in time; the server
process is stopped by the test."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

from tests.integration.test_mcp_server import audit_records, post_status, server_environment, text_of
from wp_agent.sandbox import SandboxSite

pytestmark = pytest.mark.timeout(240)
_ADDRESS = re.compile(r"wp-agent mcp: (http://127\.0\.0\.1:(\d+)/mcp)")


@contextmanager
def http_server(env: dict[str, str]) -> Iterator[str]:
    """`wp-agent mcp --http --port 0`; yields its URL (read from stderr), stops it afterwards."""
    process = subprocess.Popen(
        [sys.executable, "-m", "wp_agent.cli.main", "mcp", "--http", "--port", "0", "--allow-model-approval"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 60
        url = None
        while url is None and time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line and process.poll() is not None:
                break
            found = _ADDRESS.search(line)
            url = found.group(1) if found else None
        assert url is not None, f"server did not start (exit {process.poll()})"
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@asynccontextmanager
async def http_client(url: str, name: str) -> AsyncIterator[ClientSession]:
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write, client_info=Implementation(name=name, version="1.0")) as session,
    ):
        await session.initialize()
        yield session


def test_the_announced_address_already_accepts_connections(tmp_path: Path, cli_sandbox: SandboxSite) -> None:
    """A client that connects the moment the address is printed is not refused while the app starts."""
    with http_server(server_environment(tmp_path, cli_sandbox)) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        socket.create_connection(("127.0.0.1", port), timeout=10).close()


def test_streamable_http_on_loopback_keeps_sessions_apart(tmp_path: Path, cli_sandbox: SandboxSite) -> None:
    env = server_environment(tmp_path, cli_sandbox)
    seen: dict[str, Any] = {}

    async def main(url: str) -> None:
        with anyio.fail_after(150):
            async with http_client(url, "http-a") as a, http_client(url, "http-b") as b:
                seen["tools"] = sorted(t.name for t in (await a.list_tools()).tools)
                seen["read"] = await b.call_tool(
                    "wp_cli", {"command": "option get blogname", "reason": "確認"}
                )
                held = await a.call_tool("wp_cli", {"command": "post delete 45 --force", "reason": "削除"})
                approval_id = held.structured_content["approvalId"]
                seen["b_approves"] = await b.call_tool("approve", {"approvalId": approval_id})
                seen["status_after_b"] = post_status(cli_sandbox, 45)
                seen["a_approves"] = await a.call_tool("approve", {"approvalId": approval_id})
            # A foreign Host header (DNS rebinding) is refused by the SDK's loopback protection.
            async with httpx2.AsyncClient() as raw:
                seen["rebinding"] = await raw.post(
                    url,
                    headers={"Host": "evil.example", "Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
                    content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                )  # fmt: skip

    with http_server(env) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        anyio.run(main, url)
        # bound to loopback only: the port does not answer on another local address
        other = _non_loopback_address()
        if other is not None:
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection((other, port), timeout=2).close()

    assert seen["tools"] == ["approve", "check", "publish_article", "reject", "wp_cli"]
    assert "Argo Note" in text_of(seen["read"])
    assert seen["b_approves"].is_error
    assert seen["status_after_b"] == "draft"
    assert not seen["a_approves"].is_error, text_of(seen["a_approves"])
    assert post_status(cli_sandbox, 45) == "missing"
    assert seen["rebinding"].status_code in (403, 421)
    channels = {r.get("channel") for r in audit_records(tmp_path)}
    assert channels == {"mcp:http-a", "mcp:http-b"}


def _non_loopback_address() -> str | None:
    """An address of this machine other than loopback, if it has one."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET: no packet is sent for a UDP connect
            address = str(probe.getsockname()[0])
    except OSError:
        return None
    return None if address.startswith("127.") else address
