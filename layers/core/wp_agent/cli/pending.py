"""Approve later: a run held for approval where nobody could answer (no terminal) is kept under
~/.wp-agent/pending/<approvalId>.json; `wp-agent approve <approvalId> [--only N,M]` or
`wp-agent reject <approvalId>` resumes exactly that run — the held argv re-checked by the policy and
run (or not), then the model continues from where it stopped. No new planning call is made for the
held commands.

The file is the run's session store while it resumes: every checkpoint rewrites it, so a process
that dies half-way leaves the run as it really was (a command that started is then reported as of
unknown outcome, never run twice), and `approve` on the same id resumes it again.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shlex
import sys
from pathlib import Path

from pydantic import BaseModel, ValidationError, model_validator

from wp_agent import clock
from wp_agent.agent.messages import text_of, tool_uses
from wp_agent.agent.model_client import AnthropicModelClient, ModelClient
from wp_agent.agent.ports import AgentDeps, ApprovalDecision, Approvals, NoApprovals
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.session_state import ApprovalStatus, PendingApproval, SessionState
from wp_agent.cli import doctor, failures, run_output, site_choice, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.local_files import write_private
from wp_agent.cli.run_log import decisions_on
from wp_agent.cli.site_book import target_of
from wp_agent.cli.site_reachability import sandbox_ready, site_answers
from wp_agent.cli.wiring import build_local_deps
from wp_agent.config import CliSettings, LocalAgentSettings
from wp_agent.errors import WpAgentError
from wp_agent.masking import mask_command, mask_text
from wp_agent.models.target import Role
from wp_agent.program import command_name

APPROVAL_ID = re.compile(r"apr_[0-9a-f]{20}")


class HeldRun(BaseModel):
    """What is kept of a held run: the whole session (conversation, records, the pending approval)."""

    approval_id: str
    user: str
    target: str  # where its commands run; the run resumes only against the same place
    held_at: str
    state: SessionState
    # The front door that asked: "cli" (`wp-agent ask`; the model plans on after the decision) or
    # "mcp:<client>" (the client's model planned it; the person decides at a terminal, nothing more
    # is planned).
    channel: str = "cli"

    @model_validator(mode="after")
    def _kept_before_roles(self) -> HeldRun:
        """A run held before sessions carried a role has none (refused everything when approved):
        locally the operator is the site's administrator, as for a new `ask`."""
        if self.state.role is None:
            self.state.role = Role.ADMIN
        return self

    @property
    def from_mcp(self) -> bool:
        return self.channel.startswith("mcp:")


def pending_dir() -> Path:
    return Path.home() / ".wp-agent" / "pending"  # HOME at call time (tests use their own)


def _path(approval_id: str) -> Path:
    return pending_dir() / f"{approval_id}.json"


def _write(path: Path, held: HeldRun) -> None:
    """Atomically, readable by this user only (the conversation may quote the site's content)."""
    write_private(path, held.model_dump_json())


def carries_secret(state: SessionState) -> bool:
    """Whether the run holds a secret the masker would hide: in a command's argv (a held one must be
    kept exactly to run later), a command the model wrote, or the person's message."""
    commands = [shlex.join(r.argv) for r in state.commands]
    texts = [state.input.message]
    for message in state.messages:
        commands += [str(call.input.get("command", "")) for call in tool_uses(message["content"])]
        texts.append(text_of(message["content"]))
    return any(mask_text(text) != text for text in texts) or any(
        mask_command(command) != command for command in commands
    )


def keep(state: SessionState, settings: LocalAgentSettings, user: str, *, channel: str = "cli") -> str | None:
    """Keep a run that waits for approval; its approval id. A run holding a secret is not written to
    disk (None): it can only be approved where it runs (a terminal, or --yes; over MCP, elicitation)."""
    assert state.pending_approval is not None  # noqa: S101 - only called for a held run
    if carries_secret(state):
        return None
    approval_id = state.pending_approval.approval_id
    held = HeldRun(
        approval_id=approval_id,
        user=user,
        target=target_of(settings),
        held_at=clock.now_iso(),
        state=state,
        channel=channel,
    )
    _write(_path(approval_id), held)
    return approval_id


def held_runs() -> list[HeldRun]:
    runs = []
    for path in sorted(pending_dir().glob("apr_*.json")):
        with contextlib.suppress(OSError, ValidationError):
            runs.append(HeldRun.model_validate_json(path.read_text(encoding="utf-8")))
    return runs


class HeldRunStore:
    """SessionStore over the held run's file while it resumes (one writer: this process)."""

    def __init__(self, held: HeldRun) -> None:
        self._held = held
        self._path = _path(held.approval_id)

    def load(self, session_id: str) -> SessionState | None:
        return self._held.state if self._held.state.session_id == session_id else None

    def save(self, state: SessionState) -> None:
        state.version += 1
        self._held.state = state
        _write(self._path, self._held)

    def discard(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path.unlink()


# --- commands -------------------------------------------------------------------------------------


def add_parsers(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    approve = subparsers.add_parser(
        "approve",
        help="保留中の操作を承認して、止まった処理を再開します",
        description="端末のない実行で保留された操作（承認ID）を承認し、その処理を続けます。保留したコマンドは"
        "ポリシーで再確認してから実行し、AIはその結果から続けます（計画のやり直しはしません）。"
        "終了コード: 0 完了、1 失敗、2 指定の誤り、3 さらに承認が必要、5 設定エラー、6 一部失敗、7 一部を見送り、130 中断。",
    )
    approve.add_argument("approval_id", metavar="承認ID", help="保留時に表示された承認ID（apr_…）")
    approve.add_argument(
        "--only",
        metavar="N,M",
        help="番号を選んで承認します（例: --only 1,3）。選ばなかった操作は実行しません",
    )
    reject = subparsers.add_parser(
        "reject",
        help="保留中の操作を拒否します（実行しません）",
        description="保留された操作をすべて拒否します。AIには拒否されたことを伝え、処理を終えます。"
        "終了コード: 0 完了、2 指定の誤り、5 設定エラー、7 見送り（拒否した操作は実行していません）。",
    )
    reject.add_argument("approval_id", metavar="承認ID", help="保留時に表示された承認ID（apr_…）")
    reject.add_argument("--comment", help="拒否の理由（AIと監査ログに残ります）")
    for parser in (approve, reject):
        parser.add_argument(
            "--json", action="store_true", help="AgentOutput（JSON、runId 付き）だけを標準出力に出します"
        )
        parser.add_argument(
            "--user", default="local-user", help="承認者のID（保留したときの依頼者と同じであること）"
        )
        site_choice.add_site_option(parser, remembered=remembered_target)
    approve.set_defaults(handler=run_approve)
    reject.set_defaults(handler=run_reject)


def remembered_target(args: argparse.Namespace, settings: LocalAgentSettings) -> str | None:
    """Where the held run ran: approve and reject continue there without repeating the settings."""
    held = _find(args.approval_id)
    return held.target if held is not None else None


def run_approve(args: argparse.Namespace, settings: CliSettings) -> int:
    return _decide(args, settings, approve=True)


def run_reject(args: argparse.Namespace, settings: CliSettings) -> int:
    return _decide(args, settings, approve=False)


def _usage_error(message: str, code: str = "VALIDATION_ERROR") -> failures.CliError:
    return failures.usage(code, message)


def _find(approval_id: str) -> HeldRun | None:
    if not APPROVAL_ID.fullmatch(approval_id):
        return None
    path = _path(approval_id)
    try:
        return HeldRun.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


_DECIDED_JA = {
    "approval_approved": "承認済み",
    "approval_rejected": "拒否済み",
    "approval_expired": "期限切れ",
    "approval_superseded": "承認後にサイトが変わったため実行せず、再確認",
}


def _decided_already(approval_id: str, settings: CliSettings) -> failures.CliError | None:
    """An approval that was held here and is decided (its held run is gone): said as such, from the
    audit's decision records, with where to see what came of it."""
    if not APPROVAL_ID.fullmatch(approval_id):
        return None
    decisions = decisions_on(settings.wp_agent_audit_file.expanduser(), approval_id)
    if not decisions:
        return None
    kinds = list(dict.fromkeys(_DECIDED_JA[e.type.value] for e in decisions))
    last = decisions[-1]
    who = f"、{last.approver}" if last.approver else ""
    return _usage_error(
        f"承認ID {approval_id} はすでに決定済みです（{'・'.join(kinds)}: {last.timestamp}{who}）。"
        f"今回は何も実行していません。結果は {command_name()} show {last.run_id} で確認できます。",
        "APPROVAL_ALREADY_DECIDED",
    )


def _not_found(approval_id: str) -> failures.CliError:
    waiting = [run.approval_id for run in held_runs()]
    listing = "、".join(waiting) if waiting else "（保留中の操作はありません）"
    return _usage_error(
        f"承認ID {approval_id} の保留中の操作は見つかりません。保留中: {listing}", "APPROVAL_NOT_FOUND"
    )


def _selection(pending: PendingApproval, only: str | None) -> frozenset[str] | None:
    """The tool_use ids declined by `--only` (None: the value is not valid)."""
    if only is None:
        return frozenset()
    count = len(pending.items)
    try:
        chosen = {int(part) for part in only.split(",") if part.strip()}
    except ValueError:
        return None
    if not chosen or not chosen <= set(range(1, count + 1)):
        return None
    return frozenset(item.tool_use_id for n, item in enumerate(pending.items, 1) if n not in chosen)


def _ask_person(held: HeldRun, pending: PendingApproval, args: argparse.Namespace) -> ApprovalDecision | int:
    """An MCP client's hold is approved by the person at a terminal, after reading the policy's own
    summary (not the model's account of it); without a terminal (a model's shell tool) nothing runs."""
    if getattr(args, "only", None) is not None:
        raise _usage_error(
            "MCPクライアントから保留された操作には --only は使えません（端末で1件ずつ確認します）。"
        )
    if not terminal.interactive():
        raise failures.CliError(
            ExitCode.AWAITING_APPROVAL,
            "CONFIRMATION_REQUIRED",
            f"MCPクライアント（{held.channel}）から保留された操作は、本人が端末で内容を確認して承認します。"
            f"端末で {command_name()} approve {held.approval_id} を実行してください（何も実行していません）。",
            approvalId=held.approval_id,
        )
    terminal.err.line(f"MCPクライアント（{held.channel}）が依頼した操作です（{held.held_at} に保留）。")
    person = run_output.TerminalApprovals(terminal.err, sys.stdin, f"cli:{args.user}")
    decision = person.decide(pending, held.state)
    return ExitCode.AWAITING_APPROVAL if decision is None else decision


def _resumed_model(held: HeldRun, settings: CliSettings) -> ModelClient:
    """An MCP client's call plans nothing more once decided; a held `ask` goes on with the model."""
    if not held.from_mcp:
        return AnthropicModelClient(settings, on_retry=run_output.say_retry)
    from wp_agent.mcp_server.session import ClientCallEnded

    return ClientCallEnded()


def _held_for(args: argparse.Namespace, settings: CliSettings) -> HeldRun:
    """The held run this requester may decide here, or why not."""
    held = _find(args.approval_id)
    if held is None:
        raise _decided_already(args.approval_id, settings) or _not_found(args.approval_id)
    if held.user != args.user:
        raise _usage_error(
            f"この操作を承認・拒否できるのは依頼者（{held.user}）だけです。--user を確認してください。",
            "FORBIDDEN",
        )
    if held.target != target_of(settings):
        raise failures.configuration(
            "TARGET_MISMATCH",
            f"この操作は {held.target} で保留されました。今の設定（{target_of(settings)}）では再開できません。"
            "そのサイトを --site で指定するか、接続先の設定を保留したときと同じにしてください。",
        )
    return held


def _decision(held: HeldRun, args: argparse.Namespace, *, approve: bool) -> ApprovalDecision | int | None:
    """The decision to apply (None: decided earlier, the run resumes as it was; an int: exit now)."""
    state = held.state
    pending = state.pending_approval
    if pending is not None and pending.status is ApprovalStatus.PENDING and approve and held.from_mcp:
        return _ask_person(held, pending, args)
    if pending is not None and pending.status is ApprovalStatus.PENDING:
        declined = _selection(pending, getattr(args, "only", None))
        if declined is None:
            raise _usage_error(
                f"--only には 1〜{len(pending.items)} の番号をカンマ区切りで指定してください（例: --only 1,2）。"
            )
        return ApprovalDecision(
            approved=approve,
            decided_by=f"cli:{args.user}",
            comment=None if approve else (getattr(args, "comment", None) or "cli: rejected"),
            declined=declined if approve else frozenset(),
        )
    if pending is not None or not state.status.terminal:
        # Decided earlier and interrupted before the run ended: it resumes as it was.
        terminal.err.line("この承認はすでに決定済みです。中断された処理を再開します。")
    return None


def _ready_deps(
    held: HeldRun, settings: CliSettings, args: argparse.Namespace, store: HeldRunStore
) -> AgentDeps:
    """The agent's ports over the held run's file, once the site answers: an unreachable site leaves
    the approval as it was (nothing decided, nothing paid for)."""
    doctor.preflight(settings, model=not held.from_mcp, site=args.site_choice.site)
    sandbox_ready(settings)
    try:
        deps = build_local_deps(
            settings,
            model=_resumed_model(held, settings),
            progress=run_output.progress_printer(),
            store=store,
        )
    except WpAgentError as exc:
        raise failures.configuration(exc.code.value, exc.message_ja) from None
    try:
        site_answers(deps.wp_cli, settings, args.site_choice.site)
    except WpAgentError as exc:
        deps.wp_cli.close()
        raise failures.CliError(ExitCode.FAILED, exc.code.value, exc.message_ja) from None
    except failures.CliError:
        deps.wp_cli.close()
        raise
    return deps


def _decide(args: argparse.Namespace, settings: CliSettings, *, approve: bool) -> int:
    held = _held_for(args, settings)
    state = held.state
    decision = _decision(held, args, approve=approve)
    if isinstance(decision, int):
        return decision
    store = HeldRunStore(held)
    deps = _ready_deps(held, settings, args, store)
    approvals: Approvals = run_output.terminal_approvals(args.user) or NoApprovals()
    runner = AgentRunner(deps, approvals)
    if decision is not None:
        runner.decide(state, decision)  # expired while it waited: the run ends as expired
    code = run_output.drive(
        runner,
        deps,
        args,
        lambda: runner.resume(state),
        settings=settings,
        keep_held=keep if isinstance(approvals, NoApprovals) else None,
    )
    still = runner.last_state.pending_approval if runner.last_state is not None else None
    if still is None or still.status is not ApprovalStatus.PENDING or still.approval_id != held.approval_id:
        store.discard()  # ended, or held again under a new approval id (kept by drive)
    return code
