"""`wp-agent mcp`: serve the guarded wp_cli tool to MCP clients (stdio; streamable HTTP on 127.0.0.1)."""

from __future__ import annotations

import argparse
import sys

from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.wiring import build_local_deps
from wp_agent.config import McpSettings
from wp_agent.errors import WpAgentError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="MCPサーバーとして wp_cli ツールを提供します（Claude Desktop / Claude Code などから利用）",
        description=(
            "wp_cli・approve・reject・check・publish_article を MCP で提供します。既定は標準入出力、"
            "--http で 127.0.0.1 の streamable HTTP。設定は ask と同じです（WP_CLI_MODE など）。"
        ),
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help="標準入出力の代わりに 127.0.0.1 の streamable HTTP で待ち受けます（パス /mcp）",
    )
    parser.add_argument(
        "--port", type=int, default=8765, help="127.0.0.1 の HTTP ポート（0: 空いているポート）"
    )
    parser.add_argument("--user", default="local-user", help="監査ログに記録する依頼者ID")
    parser.add_argument("--site-url", help="マルチサイト: すべてのコマンドをこのサイトで実行します（--url）")
    parser.set_defaults(handler=run, settings_class=McpSettings)


def run(args: argparse.Namespace, settings: McpSettings) -> int:
    from wp_agent.mcp_server.app import serve  # the SDK loads only for this command
    from wp_agent.mcp_server.server import NoPlanner

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
        deps = build_local_deps(settings, model=NoPlanner())  # no model: the MCP client is the planner
        serve(
            settings,
            deps,
            user_id=args.user,
            site_url=args.site_url,
            http_port=args.port if args.http else None,
        )
    except WpAgentError as exc:
        print(f"設定エラー: {exc.message_ja}", file=sys.stderr)
        return ExitCode.CONFIGURATION
    return ExitCode.OK
