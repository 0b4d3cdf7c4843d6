"""Run the MCP server: the same adapters as `ask` (WP_CLI_MODE, policy, audit file), on stdio or on
streamable HTTP bound to 127.0.0.1 only (with the SDK's DNS-rebinding protection for loopback)."""

from __future__ import annotations

import socket
from collections.abc import Callable

import anyio

from wp_agent.mcp_server.server import WpAgentMcp

LOOPBACK = "127.0.0.1"
HTTP_PATH = "/mcp"


def serve(app: WpAgentMcp, *, http_port: int | None, on_listening: Callable[[str], None]) -> None:
    """Serve `app` (built by cli/mcp.py, its deps wired as for `ask`) until the client or a signal
    ends it; `on_listening` gets the HTTP address once it is bound."""
    try:
        if http_port is None:
            anyio.run(app.server.run_stdio_async)
        else:
            anyio.run(_serve_http, app, http_port, on_listening)
    finally:
        app.close()


async def _serve_http(app: WpAgentMcp, port: int, on_listening: Callable[[str], None]) -> None:
    import uvicorn

    # Bound here (not by uvicorn) so that port 0 works and the address printed is the real one.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((LOOPBACK, port))
    # Listening before the address is announced: a client that connects at once waits in the backlog
    # until uvicorn accepts, instead of being refused while the app starts (seen under load).
    listener.listen(128)
    bound = listener.getsockname()[1]
    starlette_app = app.server.streamable_http_app(streamable_http_path=HTTP_PATH, host=LOOPBACK)
    # log_config=None: uvicorn's lines go through the CLI's own (sanitizing) log handler.
    config = uvicorn.Config(starlette_app, log_level="warning", lifespan="on", log_config=None)
    on_listening(f"http://{LOOPBACK}:{bound}{HTTP_PATH}")
    await uvicorn.Server(config).serve(sockets=[listener])
