"""`wp-agent ask`: run the agent once against the configured WordPress (sandbox, local or SSH)."""

from __future__ import annotations

import argparse

from pydantic import ValidationError

from wp_agent.agent.model_client import AnthropicModelClient
from wp_agent.agent.ports import Approvals, AutoApprove, NoApprovals
from wp_agent.agent.runner import AgentRunner
from wp_agent.cli import doctor, pending, run_output, sites, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.wiring import build_local_deps
from wp_agent.config import CliSettings, WpCliMode
from wp_agent.errors import WpAgentError
from wp_agent.models.agent_io import (
    MAX_ITERATIONS_LIMIT,
    MAX_MESSAGE_CHARS,
    AgentInput,
    MultisiteOptions,
)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="日本語の指示でWordPressを操作します",
        description="エージェントを1回実行します。終了コード: 0 成功、1 失敗、2 指定の誤り、3 承認待ち（wp-agent approve で再開）、"
        "5 設定エラー、6 一部失敗、7 一部の操作を見送り、130 中断（Ctrl-C）。",
    )
    parser.add_argument("instruction", help="日本語の指示（例: 下書きの投稿を一覧で見せて）")
    parser.add_argument(
        "--json", action="store_true", help="AgentOutput（camelCase の JSON）だけを標準出力に出します"
    )
    parser.add_argument("--yes", action="store_true", help="確認が必要な操作も確認せずに承認して実行します")
    parser.add_argument(
        "--max-iterations", type=int, default=None, metavar="N", help="AIモデルを呼び出す最大回数（1〜50）"
    )
    parser.add_argument("--user", default="local-user", help="監査ログに記録する依頼者ID")
    site = parser.add_mutually_exclusive_group()
    site.add_argument("--site-url", help="マルチサイト: すべてのコマンドをこのサイトで実行します（--url）")
    site.add_argument(
        "--site-id", type=int, help="マルチサイト: サイトID（blog_id。実行前にURLに変換します）"
    )
    site.add_argument(
        "--network-wide", action="store_true", help="マルチサイト: ネットワーク全体を対象にします"
    )
    parser.set_defaults(handler=run)


# What to tell people about an invalid flag value (pydantic's own message is English).
_INPUT_PROBLEMS = {
    "message": f"指示を1〜{MAX_MESSAGE_CHARS:,}文字で入力してください。",
    "max_iterations": f"--max-iterations には 1〜{MAX_ITERATIONS_LIMIT} の整数を指定してください。",
    "multisite": "--site-url・--site-id・--network-wide の指定を確認してください。",
}


def run(args: argparse.Namespace, settings: CliSettings) -> int:
    try:
        multisite = None
        if args.site_url or args.site_id is not None or args.network_wide:
            multisite = MultisiteOptions(
                site_url=args.site_url, site_id=args.site_id, network_wide=args.network_wide
            )
        agent_input = AgentInput(
            message=args.instruction, max_iterations=args.max_iterations, multisite=multisite
        )
    except ValidationError as exc:
        for field in dict.fromkeys(str(e["loc"][0]) for e in exc.errors()):
            problem = _INPUT_PROBLEMS.get(field, f"{field} の値が正しくありません。")
            terminal.err.line(f"入力エラー [VALIDATION_ERROR]: {problem}")
        return ExitCode.USAGE
    doctor.preflight(settings)  # configuration errors are exit 5 before any model call
    approvals: Approvals
    if args.yes:
        approvals = AutoApprove(f"cli:{args.user}:--yes")
    else:
        approvals = run_output.terminal_approvals(args.user) or NoApprovals()
    progress = run_output.progress_printer()
    try:
        deps = build_local_deps(settings, model=AnthropicModelClient(settings), progress=progress)
    except WpAgentError as exc:
        terminal.err.line(f"設定エラー: {exc.message_ja}")
        return ExitCode.CONFIGURATION
    if settings.wp_cli_mode is WpCliMode.SANDBOX and progress is not None:
        terminal.err.line(
            "【サンドボックス】サンプルデータ入りのローカルWordPressで実行します（実際のサイトには接続しません）"
        )
    try:
        site_url = sites.resolve_site(deps.wp_cli, deps.policy, site_url=args.site_url, site_id=args.site_id)
    except sites.SiteSelectionError as exc:
        deps.wp_cli.close()
        terminal.err.line(f"入力エラー [SITE_NOT_FOUND]: {exc.message_ja}")
        return ExitCode.USAGE
    except WpAgentError as exc:  # e.g. the server cannot be reached: said before any model call
        deps.wp_cli.close()
        terminal.err.line(f"エラー [{exc.code.value}]: {exc.message_ja}")
        return ExitCode.FAILED
    runner = AgentRunner(deps, approvals)
    return run_output.drive(
        runner,
        deps,
        args,
        lambda: runner.run(agent_input, user_id=args.user, site_url=site_url),
        settings=settings,
        keep_held=pending.keep if isinstance(approvals, NoApprovals) else None,
    )
