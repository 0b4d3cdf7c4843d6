"""`wp-agent ask`: run the agent once against the configured WordPress (sandbox, local or SSH)."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from pydantic import ValidationError

from wp_agent.agent.factory import build_local_deps
from wp_agent.agent.model_client import build_sdk_client
from wp_agent.agent.ports import ApprovalDecision, Approvals, AutoApprove, NoApprovals
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.session_state import PendingApproval, SessionState
from wp_agent.agent.turn import ProgressEvent
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.undo import undo_hint
from wp_agent.config import ModelProvider, Settings, WpCliMode
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.models.agent_io import (
    MAX_ITERATIONS_LIMIT,
    MAX_MESSAGE_CHARS,
    AgentInput,
    AgentOutput,
    MultisiteOptions,
)
from wp_agent.undo.local_store import LocalRunStore
from wp_agent.undo.service import undo_available


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="日本語の指示でWordPressを操作します",
        description="Run the agent once. Exit codes: 0 success, 1 failed, 3 awaiting approval, 5 configuration, 6 partial failure.",
    )
    parser.add_argument("instruction", help="日本語の指示（例: 下書きの投稿を一覧で見せて）")
    parser.add_argument(
        "--json", action="store_true", help="print AgentOutput (camelCase JSON) on stdout and nothing else"
    )
    parser.add_argument("--yes", action="store_true", help="approve destructive commands without asking")
    parser.add_argument(
        "--max-iterations", type=int, default=None, metavar="N", help="model calls at most (1-50)"
    )
    parser.add_argument("--user", default="local-user", help="requester id recorded in the audit log")
    site = parser.add_mutually_exclusive_group()
    site.add_argument("--site-url", help="multisite: run every command on this site (--url)")
    site.add_argument("--site-id", type=int, help="multisite: the site's blog id (resolved with site list)")
    site.add_argument("--network-wide", action="store_true", help="multisite: the whole network")
    parser.set_defaults(handler=run)


class TerminalApprovals:
    """Asks on the terminal, showing the Japanese summary of each held command."""

    def __init__(self, out: TextIO, answer_in: TextIO, actor: str) -> None:
        self._out = out
        self._in = answer_in
        self._actor = actor

    def decide(self, pending: PendingApproval, state: SessionState) -> ApprovalDecision | None:
        print("\n⚠ 次の操作には確認が必要です:", file=self._out)
        for item in pending.items:
            print(f"  ・{item.summary_ja}", file=self._out)
            print(f"    影響: {item.impact_ja}", file=self._out)
            print(f"    コマンド: wp {item.command}", file=self._out)
        print("実行してよろしいですか？ [y/N]: ", end="", file=self._out, flush=True)
        answer = self._in.readline().strip().lower()
        approved = answer in {"y", "yes", "はい"}
        return ApprovalDecision(
            approved=approved, decided_by=self._actor, comment=None if approved else "terminal: declined"
        )


def _progress_printer(out: TextIO) -> object:
    def show(event: ProgressEvent) -> None:
        prefix = {
            "model_call": "…",
            "command_started": "▶",
            "command_finished": "✓",
            "command_blocked": "✗",
            "approval_needed": "⚠",
        }
        print(f"{prefix.get(event.kind, '・')} {event.message_ja}", file=out, flush=True)

    return show


def exit_code_for(output: AgentOutput) -> ExitCode:
    if output.success:
        return ExitCode.OK
    code = output.error.code if output.error else None
    if code is AgentErrorCode.CONFIRMATION_REQUIRED:
        return ExitCode.AWAITING_APPROVAL
    if code is AgentErrorCode.PARTIAL_FAILURE:
        return ExitCode.PARTIAL_FAILURE
    return ExitCode.FAILED


def _print_human(output: AgentOutput, out: TextIO) -> None:
    if output.error is None or output.response.strip() != output.error.message:  # not said twice
        print(output.response or "（応答なし）", file=out)
    if output.executed_commands:
        print("\n実行したコマンド:", file=out)
        for command in output.executed_commands:
            mark = "✓" if command.success else "✗"
            print(f"  {mark} wp {command.command}（{command.duration_ms}ms）", file=out)
            if not command.success and command.error:
                print(f"      理由: {_first_line(command.error)}", file=out)
    if output.error is not None:
        print(f"\n[{output.error.code.value}] {output.error.message}", file=out)


def remember_for_undo(state: SessionState | None, settings: Settings) -> None:
    """Keep the run's records for `wp-agent undo` and say how to undo it (stderr: stdout is the answer)."""
    if state is None or not any(r.undo is not None for r in state.run_commands()):
        return
    LocalRunStore.from_settings(settings).save_run(state)
    if undo_available(state.run_commands()):
        print(undo_hint(state.run_id), file=sys.stderr)


def _first_line(text: str, limit: int = 200) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


# What to tell people about an invalid flag value (pydantic's own message is English).
_INPUT_PROBLEMS = {
    "message": f"指示を1〜{MAX_MESSAGE_CHARS:,}文字で入力してください。",
    "max_iterations": f"--max-iterations には 1〜{MAX_ITERATIONS_LIMIT} の整数を指定してください。",
    "multisite": "--site-url・--site-id・--network-wide の指定を確認してください。",
}


def _check_model_configuration(settings: Settings) -> None:
    if settings.wp_agent_model_provider is ModelProvider.ANTHROPIC:
        build_sdk_client(settings)  # raises ConfigurationError naming ANTHROPIC_API_KEY when missing


def run(args: argparse.Namespace, settings: Settings) -> int:
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
            print(f"入力エラー [VALIDATION_ERROR]: {problem}", file=sys.stderr)
        return ExitCode.USAGE
    _check_model_configuration(settings)
    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    approvals: Approvals
    if args.yes:
        approvals = AutoApprove(f"cli:{args.user}:--yes")
    elif interactive:
        approvals = TerminalApprovals(sys.stderr, sys.stdin, f"cli:{args.user}")
    else:
        approvals = NoApprovals()
    progress = _progress_printer(sys.stderr) if sys.stderr.isatty() else None
    try:
        deps = build_local_deps(settings, progress=progress)  # type: ignore[arg-type]
    except WpAgentError as exc:
        print(f"設定エラー: {exc.message_ja}", file=sys.stderr)
        return ExitCode.CONFIGURATION
    if settings.wp_cli_mode is WpCliMode.SANDBOX and progress is not None:
        print(
            "【サンドボックス】サンプルデータ入りのローカルWordPressで実行します（実際のサイトには接続しません）",
            file=sys.stderr,
        )
    runner = AgentRunner(deps, approvals)
    try:
        output = runner.run(agent_input, user_id=args.user, site_url=args.site_url)
    finally:
        deps.wp_cli.close()
    remember_for_undo(runner.last_state, settings)
    if args.json:
        print(output.to_json())
    else:
        _print_human(output, sys.stdout)
    code = exit_code_for(output)
    if code is ExitCode.AWAITING_APPROVAL and isinstance(approvals, NoApprovals):
        print(
            "承認するには、端末で同じ指示を実行して確認に答えるか、--yes を付けて実行してください。",
            file=sys.stderr,
        )
    return code
