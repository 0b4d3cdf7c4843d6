"""`wp-agent mcp`: serve the guarded wp_cli tool to MCP clients (stdio; streamable HTTP on 127.0.0.1)."""

from __future__ import annotations

import argparse
import sys

from wp_agent.cli.exit_codes import ExitCode
from wp_agent.config import Settings
from wp_agent.errors import WpAgentError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="MCPサーバーとして wp_cli ツールを提供します（Claude Desktop / Claude Code などから利用）",
        description=(
            "Serve wp_cli, approve, reject, check and publish_article over MCP: stdio by default, "
            "or streamable HTTP on 127.0.0.1 with --http. Same configuration as `ask` (WP_CLI_MODE, ...)."
        ),
    )
    parser.add_argument(
        "--http", action="store_true", help="streamable HTTP on 127.0.0.1 instead of stdio (path /mcp)"
    )
    parser.add_argument("--port", type=int, default=8765, help="HTTP port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--user", default="local-user", help="requester id recorded in the audit log")
    parser.add_argument("--site-url", help="multisite: run every command on this site (--url)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from wp_agent.mcp_server.app import serve  # the SDK loads only for this command

    if args.site_url and not args.site_url.startswith(("http://", "https://")):
        print(
            "入力エラー [USAGE_ERROR]: --site-url は http:// または https:// で始まるURLです。",
            file=sys.stderr,
        )
        return ExitCode.USAGE
    if not 0 <= args.port <= 65_535:
        print("入力エラー [USAGE_ERROR]: --port は 0〜65535 です。", file=sys.stderr)
        return ExitCode.USAGE
    try:
        serve(settings, user_id=args.user, site_url=args.site_url, http_port=args.port if args.http else None)
    except WpAgentError as exc:
        print(f"設定エラー: {exc.message_ja}", file=sys.stderr)
        return ExitCode.CONFIGURATION
    return ExitCode.OK
