"""Running the agent from the CLI and saying what happened: progress, the approval questions in a
terminal (one per destructive command), the answer with every command (run, failed or declined), a
held run kept for `wp-agent approve`, Ctrl-C, and the exit code. Shared by `ask` and `approve`/`reject`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TextIO

from wp_agent.agent.model_client import RetryNotice
from wp_agent.agent.ports import AgentDeps, ApprovalDecision, ProgressEvent, ProgressListener
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.session_state import ApprovalStatus, CommandStatus, PendingApproval, SessionState
from wp_agent.agent.turn import AgentTurn
from wp_agent.cli import failures, history, interrupts, terminal, undo
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.config import CliSettings
from wp_agent.errors import AgentErrorCode
from wp_agent.models.agent_io import AgentOutput
from wp_agent.policy import PolicyCategory
from wp_agent.program import command_name

_YES = {"y", "yes", "はい"}


class TerminalApprovals:
    """Asks on the terminal, one destructive command at a time, with its Japanese summary and impact."""

    def __init__(self, out: terminal.Stream, answer_in: TextIO, actor: str) -> None:
        self._out = out
        self._in = answer_in
        self._actor = actor

    def decide(self, pending: PendingApproval, state: SessionState) -> ApprovalDecision | None:
        count = len(pending.items)
        self._out.line("\n⚠ 次の操作には確認が必要です" + ("（1件ずつ確認します）:" if count > 1 else ":"))
        declined: set[str] = set()
        for number, item in enumerate(pending.items, 1):
            head = f"[{number}/{count}] " if count > 1 else ""
            self._out.line(f"  {head}{item.summary_ja}")
            self._out.line(f"    影響: {item.impact_ja}")
            self._out.line(f"    コマンド: wp {item.command}")
            self._out.line("  実行してよろしいですか？ [y/N]: ", end="", flush=True)
            if self._in.readline().strip().lower() not in _YES:
                declined.add(item.tool_use_id)
                self._out.line("    → 実行しません", flush=True)
        approved = len(declined) < count
        return ApprovalDecision(
            approved=approved,
            decided_by=self._actor,
            comment=None if approved and not declined else "terminal: declined",
            declined=frozenset(declined) if approved else frozenset(),
        )


def terminal_approvals(user: str) -> TerminalApprovals | None:
    return TerminalApprovals(terminal.err, sys.stdin, f"cli:{user}") if terminal.interactive() else None


_MARKS = {"model_call": ("…", "dim"), "command_started": ("▶", "cyan"), "command_finished": ("✓", "green"),
          "command_blocked": ("✗", "red"), "approval_needed": ("⚠", "yellow")}  # fmt: skip


def progress_printer() -> ProgressListener | None:
    """Progress lines on stderr when it is a terminal (coloured where the terminal has colours, never
    wrapped inside a line); nothing otherwise."""
    if not terminal.err.isatty():
        return None

    def show(event: ProgressEvent) -> None:
        mark, style = _MARKS.get(event.kind, ("・", ""))
        if event.message_ja.startswith("失敗"):
            mark, style = "✗", "red"
        terminal.err.styled(f"{mark} {event.message_ja}", style)

    return show


def declined_commands(state: SessionState | None) -> list[str]:
    """Commands of this run the requester declined (never run)."""
    if state is None:
        return []
    return [r.command for r in state.run_commands() if r.status is CommandStatus.REJECTED]


def say_retry(notice: RetryNotice) -> None:
    """One line on stderr per retry of the model call, before its wait (in a terminal or not)."""
    why = f"（HTTP {notice.status}）" if notice.status is not None else "（応答がありません）"
    terminal.err.line(
        f"AIモデルを呼び出せませんでした{why}。{notice.wait_seconds:.0f}秒後に再試行します"
        f"（{notice.attempt}/{notice.of}回目）…"
    )


def _needs_configuration(output: AgentOutput) -> bool:
    """The model API refused the credentials (a key that is wrong or lacks access, AWS credentials Bedrock
    cannot sign with): a setting to fix, not an outage."""
    error = output.error
    if error is None or error.code is not AgentErrorCode.API_ERROR:
        return False
    details = error.details or {}
    return details.get("status") in (401, 403) or details.get("reason") == "BEDROCK_SIGNING_FAILED"


def _failed_before_anything(output: AgentOutput, declined: list[str], held: PendingApproval | None) -> bool:
    """A run that ended in an error before it ran, answered or held anything: its one line is the
    failure's, on stderr, like every failure a person can act on."""
    if output.success or output.error is None or held is not None or declined or output.executed_commands:
        return False
    return output.response.strip() in ("", output.error.message.strip())


def exit_code_for(output: AgentOutput, declined: list[str] | None = None) -> ExitCode:
    if output.success:
        return ExitCode.DECLINED if declined else ExitCode.OK
    if _needs_configuration(output):
        return ExitCode.CONFIGURATION
    code = output.error.code if output.error else None
    if code is AgentErrorCode.CONFIRMATION_REQUIRED:
        return ExitCode.AWAITING_APPROVAL
    if code is AgentErrorCode.PARTIAL_FAILURE:
        return ExitCode.PARTIAL_FAILURE
    return ExitCode.FAILED


def print_human(
    output: AgentOutput, out: terminal.Stream, declined: list[str], held: PendingApproval | None
) -> None:
    said_elsewhere = output.error is not None and output.response.strip() == output.error.message
    if not said_elsewhere and (output.response or held is None):
        out.line(output.response or "（応答なし）")
    if output.executed_commands or declined:
        out.line("\n実行したコマンド:")
        for command in output.executed_commands:
            mark = "✓" if command.success else "✗"
            out.line(f"  {mark} wp {command.command}（{command.duration_ms}ms）")
            if not command.success and command.error:
                out.line(f"      理由: {_first_line(command.error)}")
        for shown in declined:
            out.line(f"  － wp {shown}（見送り: 承認されなかったため実行していません）")
    if held is not None:
        print_held(held, out)
    elif output.error is not None:
        out.line(f"\n[{output.error.code.value}] {output.error.message}")


def print_held(held: PendingApproval, out: terminal.Stream) -> None:
    out.line(f"\n[CONFIRMATION_REQUIRED] 次の操作は承認されるまで実行しません（承認ID: {held.approval_id}）:")
    for number, item in enumerate(held.items, 1):
        out.line(f"  {number}. {item.summary_ja}")
        out.line(f"     影響: {item.impact_ja}")
        out.line(f"     コマンド: wp {item.command}")


_NOT_KEPT = (
    "この処理にはパスワードなどの秘密情報が含まれるため、後から承認できるようには保存しませんでした。"
    "端末で実行して確認に答えるか、内容を確かめたうえで --yes を付けて実行してください。"
)


def changes_already_run(state: SessionState | None) -> list[str]:
    """This run's writes that ran, or began to, before it was held (masked, in order)."""
    if state is None:
        return []
    return [
        r.command
        for r in state.run_commands()
        if r.category is not PolicyCategory.READ and r.status.may_have_run
    ]


def _what_changed(changed: list[str]) -> str:
    """The hint's first sentence: true whether or not an earlier command of the run changed the site."""
    if not changed:
        return "承認するまで何も変更していません。"
    return f"承認待ちの操作はまだ実行していません（この実行ですでに実行した変更: {'、'.join(f'wp {c}' for c in changed)}）。"


def _held_hint(approval_id: str, count: int, changed: list[str]) -> str:
    me = command_name()
    lines = [
        _what_changed(changed)
        + "この処理は保存しました。次のいずれかを実行してください（AIに計画し直させることはありません）:",
        f"  {me} approve {approval_id}            # すべて実行",
    ]
    if count > 1:
        lines.append(f"  {me} approve {approval_id} --only 1   # 番号を選んで実行")
    lines.append(f"  {me} reject {approval_id}             # 実行しない")
    lines.append("（次回から確認なしで実行するには ask に --yes を付けます）")
    return "\n".join(lines)


def _first_line(text: str, limit: int = 200) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def drive(
    runner: AgentRunner,
    deps: AgentDeps,
    args: argparse.Namespace,
    run: Callable[[], AgentOutput],
    *,
    settings: CliSettings,
    keep_held: Callable[[SessionState, CliSettings, str], str | None] | None,
) -> int:
    """Run (Ctrl-C: commands ended, run cancelled, exit 130), keep a held run nobody could answer,
    print the outcome (AgentOutput JSON with --json), and give the exit code. `keep_held` stores a
    held run nobody here can answer (the pending store; None when a terminal answers)."""
    try:
        with interrupts.ending_commands_on_interrupt():
            output = run()
    except KeyboardInterrupt:
        if runner.last_state is not None:
            AgentTurn(deps).cancel(runner.last_state)  # audited as cancelled
            history.record_summary(deps.audit, runner.last_state)
        interrupts.say_interrupted()
        if args.json:
            run_id = runner.last_state.run_id if runner.last_state is not None else None
            document = failures.failure_document(
                ExitCode.INTERRUPTED, "INTERRUPTED", interrupts.interrupted_message(), runId=run_id
            )
            terminal.out.json(json.dumps(document, ensure_ascii=False))
        return ExitCode.INTERRUPTED
    finally:
        deps.wp_cli.close()
    state = runner.last_state
    if state is not None:
        history.record_summary(deps.audit, state)
        undo.remember_for_undo(state, settings)
    held = state.pending_approval if state is not None else None
    if held is not None and held.status is not ApprovalStatus.PENDING:
        held = None
    kept = None
    if held is not None and state is not None and keep_held is not None:
        kept = keep_held(state, settings, args.user)
    declined = declined_commands(state)
    _print_outcome(output, state, held, kept, declined, as_json=args.json)
    if held is not None and keep_held is not None:
        changed = changes_already_run(state)
        terminal.err.line(
            _held_hint(held.approval_id, len(held.items), changed)
            if kept
            else _what_changed(changed) + _NOT_KEPT
        )
    return exit_code_for(output, declined)


def _print_outcome(
    output: AgentOutput,
    state: SessionState | None,
    held: PendingApproval | None,
    kept: str | None,
    declined: list[str],
    *,
    as_json: bool,
) -> None:
    """The run's outcome: its AgentOutput under --json; else the answer and what ran, or, for a run
    that failed before doing anything, the failure's one line on stderr."""
    if as_json:
        document = output.to_json_dict()
        if state is not None:
            document["runId"] = state.run_id
        if held is not None and kept:
            document["approvalId"] = held.approval_id
        terminal.out.json(json.dumps(document, ensure_ascii=False))
    elif _failed_before_anything(output, declined, held) and output.error is not None:
        failure = failures.CliError(
            exit_code_for(output, declined), output.error.code.value, output.error.message
        )
        failures.report(failure, as_json=False)
    else:
        print_human(output, terminal.out, declined, held)
