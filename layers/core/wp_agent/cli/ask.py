"""`wp-agent ask`: run the agent once against the chosen WordPress (a named site, the environment's
settings, or the sandbox)."""

from __future__ import annotations

import argparse
import sys

from pydantic import ValidationError

from wp_agent.agent.model_client import AnthropicModelClient
from wp_agent.agent.ports import Approvals, AutoApprove, NoApprovals
from wp_agent.agent.runner import AgentRunner
from wp_agent.cli import doctor, failures, network_sites, pending, run_output, site_choice, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.site_book import target_of
from wp_agent.cli.site_reachability import sandbox_ready, site_answers
from wp_agent.cli.wiring import build_local_deps
from wp_agent.config import CliSettings, WpCliMode
from wp_agent.errors import WpAgentError
from wp_agent.models.agent_io import (
    MAX_ITERATIONS_LIMIT,
    MAX_MESSAGE_CHARS,
    AgentInput,
    MultisiteOptions,
)

FROM_STDIN = "-"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="日本語の指示でWordPressを操作します",
        description="エージェントを1回実行します。SSH・ローカルのサイトは、AIモデルを呼ぶ前にログインと WordPress の応答を"
        "確かめます。終了コード: 0 成功、1 失敗（接続できない場合も）、2 指定の誤り、3 承認待ち（wp-agent approve で再開）、"
        "5 設定エラー、6 一部失敗、7 一部の操作を見送り、130 中断（Ctrl-C）。",
    )
    parser.add_argument(
        "instruction",
        metavar="指示",
        help="日本語の指示（例: 下書きの投稿を一覧で見せて）。- なら標準入力から読みます",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="AgentOutput（camelCase の JSON、runId と保留時の approvalId 付き）だけを標準出力に出します",
    )
    parser.add_argument("--yes", action="store_true", help="確認が必要な操作も確認せずに承認して実行します")
    parser.add_argument(
        "--max-iterations", type=int, default=None, metavar="N", help="AIモデルを呼び出す最大回数（1〜50）"
    )
    parser.add_argument("--user", default="local-user", help="監査ログに記録する依頼者ID")
    site_choice.add_site_option(parser)
    site = parser.add_mutually_exclusive_group()
    site.add_argument("--site-url", help="マルチサイト: すべてのコマンドをこのサイトで実行します（--url）")
    site.add_argument(
        "--site-id", type=int, help="マルチサイト: サイトID（blog_id。実行前にURLに変換します）"
    )
    site.add_argument(
        "--network-wide", action="store_true", help="マルチサイト: ネットワーク全体を対象にします"
    )
    parser.set_defaults(handler=run)


def _has_undecodable(text: str) -> bool:
    """Bytes that were not UTF-8 reach Python's argv as lone surrogates (surrogateescape)."""
    return any("\udc80" <= character <= "\udcff" for character in text)


_NOT_UTF8 = (
    "指示が UTF-8 の文字列ではありません。端末・ファイルの文字コードを UTF-8 にしてから実行してください。"
)


def read_instruction(value: str) -> str:
    """The instruction from the argument, or from stdin for `-` (decoded as UTF-8, surrounding
    whitespace removed); a usage error for text that is not UTF-8."""
    if value != FROM_STDIN:
        if _has_undecodable(value):
            raise failures.usage("INVALID_ENCODING", _NOT_UTF8)
        return value
    try:
        return sys.stdin.buffer.read().decode("utf-8").strip()
    except UnicodeDecodeError:
        raise failures.usage("INVALID_ENCODING", _NOT_UTF8) from None


def _message_problem(message: str) -> str:
    if not message.strip():
        return "指示が空です。日本語の指示を入力してください（- のときは標準入力から）。"
    if len(message) > MAX_MESSAGE_CHARS:
        return f"指示が長すぎます（{len(message):,}文字）。{MAX_MESSAGE_CHARS:,}文字以内にしてください。"
    return "指示に使えない文字（NUL）が含まれています。"


def _agent_input(args: argparse.Namespace, message: str) -> AgentInput:
    problems = {
        "max_iterations": f"--max-iterations には 1〜{MAX_ITERATIONS_LIMIT} の整数を指定してください。",
        "multisite": "--site-url・--site-id・--network-wide の指定を確認してください。",
    }
    try:
        multisite = None
        if args.site_url or args.site_id is not None or args.network_wide:
            multisite = MultisiteOptions(
                site_url=args.site_url, site_id=args.site_id, network_wide=args.network_wide
            )
        return AgentInput(message=message, max_iterations=args.max_iterations, multisite=multisite)
    except ValidationError as exc:
        field = str(exc.errors()[0]["loc"][0])
        problem = (
            _message_problem(message)
            if field == "message"
            else problems.get(field, "指定を確認してください。")
        )
        raise failures.usage("VALIDATION_ERROR", problem) from None


def run(args: argparse.Namespace, settings: CliSettings) -> int:
    agent_input = _agent_input(args, read_instruction(args.instruction))
    choice: site_choice.SiteChoice = args.site_choice
    doctor.preflight(settings, site=choice.site)  # configuration errors are exit 5 before any model call
    sandbox_ready(settings)
    approvals: Approvals
    if args.yes:
        approvals = AutoApprove(f"cli:{args.user}:--yes")
    else:
        approvals = run_output.terminal_approvals(args.user) or NoApprovals()
    progress = run_output.progress_printer()
    try:
        deps = build_local_deps(
            settings, model=AnthropicModelClient(settings, on_retry=run_output.say_retry), progress=progress
        )
    except WpAgentError as exc:
        raise failures.configuration(exc.code.value, exc.message_ja) from None
    if progress is not None:
        if settings.wp_cli_mode is WpCliMode.SANDBOX:
            terminal.err.line(
                "【サンドボックス】サンプルデータ入りのローカルWordPressで実行します（実際のサイトには接続しません）"
            )
        elif choice.site is not None:
            terminal.err.line(f"サイト「{choice.site.name}」（{choice.site.describe()}）で実行します")
    try:
        site_answers(deps.wp_cli, settings, choice.site)  # login and WordPress, before any model call
        site_url = network_sites.resolve_site(
            deps.wp_cli, deps.policy, site_url=args.site_url, site_id=args.site_id
        )
    except network_sites.SiteSelectionError as exc:
        deps.wp_cli.close()
        raise failures.usage("SITE_NOT_FOUND", exc.message_ja) from None
    except WpAgentError as exc:
        deps.wp_cli.close()
        raise failures.CliError(ExitCode.FAILED, exc.code.value, exc.message_ja) from None
    except failures.CliError:
        deps.wp_cli.close()
        raise
    runner = AgentRunner(deps, approvals)
    return run_output.drive(
        runner,
        deps,
        args,
        lambda: runner.run(
            agent_input,
            user_id=args.user,
            target_id=target_of(settings),
            site_url=site_url,
            update_allowance=choice.site.update_allowance if choice.site is not None else None,
        ),
        settings=settings,
        keep_held=pending.keep if isinstance(approvals, NoApprovals) else None,
    )
