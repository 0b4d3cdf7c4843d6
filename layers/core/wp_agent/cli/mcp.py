"""`wp-agent mcp`: serve the guarded wp_cli tool to MCP clients (stdio; streamable HTTP on 127.0.0.1).

A destructive command is approved by a person: through the client (elicitation) or, outside the
model, with `wp-agent approve <id>` in a terminal — the hold is kept like a held `ask`
(cli/pending.py). `--allow-model-approval` adds the model-callable approve tool, with a warning."""

from __future__ import annotations

import argparse

from wp_agent.cli import failures, pending, site_choice, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.wiring import build_local_deps
from wp_agent.config import McpSettings
from wp_agent.errors import WpAgentError

MODEL_APPROVAL_NOTICE = (
    "警告: --allow-model-approval が指定されました。AIが approve ツールで破壊的な操作を自分で承認できます。"
    "信頼できるクライアントと、利用者に必ず確認するAIでだけ使ってください。"
)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="MCPサーバーとして wp_cli ツールを提供します（Claude Desktop / Claude Code などから利用）",
        description=(
            "wp_cli・check・publish_article を MCP で提供します。破壊的な操作は利用者本人が承認します"
            "（クライアントの確認画面、または端末で wp-agent approve <承認ID>）。既定は標準入出力、"
            "--http で 127.0.0.1 の streamable HTTP。接続先は ask と同じです（--site、環境変数、既定のサイト）。"
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
    site_choice.add_site_option(parser)
    parser.add_argument("--site-url", help="マルチサイト: すべてのコマンドをこのサイトで実行します（--url）")
    parser.add_argument(
        "--allow-model-approval",
        action="store_true",
        help="危険: AIが呼び出せる approve / reject ツールを追加します（AIが自分の依頼を承認できます）",
    )
    parser.set_defaults(handler=run, settings_class=McpSettings)


def run(args: argparse.Namespace, settings: McpSettings) -> int:
    from wp_agent.mcp_server.app import serve  # the SDK loads only for this command
    from wp_agent.mcp_server.server import NoPlanner, WpAgentMcp

    if args.site_url and not args.site_url.startswith(("http://", "https://")):
        raise failures.usage("USAGE_ERROR", "--site-url は http:// または https:// で始まるURLです。")
    if not 0 <= args.port <= 65_535:
        raise failures.usage("USAGE_ERROR", "--port は 0〜65535 です。")
    if args.allow_model_approval:
        terminal.err.line(MODEL_APPROVAL_NOTICE, flush=True)
    try:
        deps = build_local_deps(settings, model=NoPlanner())  # no model: the MCP client is the planner
        app = WpAgentMcp(
            settings,
            deps,
            user_id=args.user,
            site_url=args.site_url,
            hand_over=lambda state, channel: pending.keep(state, settings, args.user, channel=channel),
            allow_model_approval=args.allow_model_approval,
        )
        serve(
            app,
            http_port=args.port if args.http else None,
            on_listening=lambda url: terminal.err.line(f"wp-agent mcp: {url}", flush=True),
        )
    except WpAgentError as exc:
        raise failures.configuration(exc.code.value, exc.message_ja) from None
    return ExitCode.OK
