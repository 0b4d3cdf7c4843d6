"""Run the MCP server: the same adapters as `ask` (WP_CLI_MODE, policy, audit file), on stdio or on
streamable HTTP bound to 127.0.0.1 only (with the SDK's DNS-rebinding protection for loopback)."""

from __future__ import annotations

import socket
import sys

import anyio

from wp_agent.agent.ports import AgentDeps
from wp_agent.config import McpSettings
from wp_agent.mcp_server.server import WpAgentMcp

LOOPBACK = "127.0.0.1"
HTTP_PATH = "/mcp"


def serve(
    settings: McpSettings, deps: AgentDeps, *, user_id: str, site_url: str | None, http_port: int | None
) -> None:
    """Serve with `deps` wired as for `ask` (by cli/mcp.py), whose model is a NoPlanner."""
    app = WpAgentMcp(settings, deps, user_id=user_id, site_url=site_url)
    try:
        if http_port is None:
            anyio.run(app.server.run_stdio_async)
        else:
            anyio.run(_serve_http, app, http_port)
    finally:
        app.close()


async def _serve_http(app: WpAgentMcp, port: int) -> None:
    import uvicorn

    # Bound here (not by uvicorn) so that port 0 works and the address printed is the real one.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((LOOPBACK, port))
    bound = listener.getsockname()[1]
    starlette_app = app.server.streamable_http_app(streamable_http_path=HTTP_PATH, host=LOOPBACK)
    config = uvicorn.Config(starlette_app, log_level="warning", lifespan="on")
    print(f"wp-agent mcp: http://{LOOPBACK}:{bound}{HTTP_PATH}", file=sys.stderr, flush=True)
    await uvicorn.Server(config).serve(sockets=[listener])
