"""`wp-agent api serve [--port N] [--user ID] [--site NAME]`: the HTTP API on 127.0.0.1, before any
deploy. The real API routes and the synthesized state machine (in moto), the turn and publish tasks
in-process, against the sandbox (target `sandbox`) or the site the WP_CLI_MODE settings name
(registered under --site), owned by --user. The model is the one `ask` uses (ANTHROPIC_API_KEY /
ANTHROPIC_BASE_URL). Requests need X-Argo-User-Id, never a signature. Needs the extra `[local]`."""

from __future__ import annotations

import argparse
import json
import signal
import threading
from typing import Any

from wp_agent.cli import site_choice, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.config import CliSettings, WpCliMode
from wp_agent.models import field_rules

DEFAULT_PORT = 8787


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    api = subparsers.add_parser("api", help="HTTP API をこのマシンで動かします（開発用）")
    commands = api.add_subparsers(dest="api_command", required=True, metavar="<サブコマンド>")
    serve = commands.add_parser(
        "serve",
        help="API を 127.0.0.1 で提供します（署名なし、X-Argo-User-Id は必要）",
        description="本番と同じ API の処理とステートマシン（moto 上）で、--site の登録済みサイト（対象サイト名も"
        "同じ）、WP_CLI_MODE で指定したサイト（local-site）、またはサンドボックス（sandbox）を操作する API を"
        " 127.0.0.1 だけで提供します。Ctrl-C で終了します。追加パッケージ [local] が必要です。",
    )
    serve.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"ポート番号（既定 {DEFAULT_PORT}、0 で空きポート）"
    )
    serve.add_argument(
        "--user", default="local-user", help="対象サイトの所有者として登録する利用者ID（既定 local-user）"
    )
    site_choice.add_site_option(serve)  # --site: a site of `sites add`, as for every other command
    serve.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace, settings: CliSettings) -> int:
    # The target's name in the API: the registered site's own, else what the settings point at.
    chosen: site_choice.SiteChoice = args.site_choice
    if chosen.site is not None:
        site = chosen.site.name
    else:
        site = "sandbox" if settings.wp_cli_mode is WpCliMode.SANDBOX else "local-site"
    problem = _argument_problem(args.port, args.user, site)
    if problem:
        terminal.err.line(f"入力エラー [USAGE_ERROR]: {problem}")
        return ExitCode.USAGE
    try:
        import moto  # noqa: F401 - the [local] extra, imported only once the stack starts: checked first

        from wp_agent.local_api.server import LocalApiServer
        from wp_agent.local_api.stack import LOCAL_PRINCIPAL, LocalStack
    except ImportError:
        terminal.err.line(
            "設定エラー: api serve には追加パッケージが必要です。`pip install 'wp-agent[local]'` でインストールしてください。"
        )
        return ExitCode.CONFIGURATION
    stack = LocalStack(settings, target_id=site, owner=args.user, on_event=_print_event)
    stack.start()
    try:
        server = LocalApiServer(stack.handle_api, port=args.port, caller_arn=LOCAL_PRINCIPAL)
    except OSError as exc:
        stack.stop()
        terminal.err.line(
            f"設定エラー: ポート {args.port} で待ち受けできません（{exc.strerror}）。--port で別の番号を指定してください。"
        )
        return ExitCode.CONFIGURATION
    terminal.out.line(
        f"wp-agent api: {server.url}  （対象サイト {site}、所有者 {args.user}、WP_CLI_MODE={settings.wp_cli_mode.value}）",
        flush=True,
    )
    terminal.out.line(f"  例: curl -H 'X-Argo-User-Id: {args.user}' {server.url}/v1/targets", flush=True)
    stopped = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    server.start()
    try:
        stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.stop()
        stack.stop()
    terminal.err.line("wp-agent api: 終了しました。")
    return ExitCode.OK


def _argument_problem(port: int, user: str, site: str) -> str | None:
    if not 0 <= port <= 65_535:
        return "--port には 0〜65535 を指定してください。"
    if not field_rules.matches(field_rules.USER_ID, user):
        return f"--user は {field_rules.REASONS_JA[field_rules.USER_ID]}。"
    if not field_rules.matches(field_rules.TARGET_ID, site):
        return f"--site は {field_rules.REASONS_JA[field_rules.TARGET_ID]}。"
    return None


def _print_event(detail_type: str, detail: dict[str, Any]) -> None:
    """What the backend would receive from EventBridge, one line each (stdout; the detail's JSON
    exact, with what a terminal would act on written as JSON escapes)."""
    document = terminal.json_for_terminal(json.dumps(detail, ensure_ascii=False))
    terminal.out.line(f"event: {detail_type} {document}", flush=True)
