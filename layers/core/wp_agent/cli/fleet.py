"""`wp-agent fleet`: one instruction over many named sites — planned once on the first (canary) site, the
plan shown and approved once, the canary first, then the rest side by side (each over its own SSH pool),
one report. `fleet approve ID` runs a plan that waited for its approval (kept in ~/.wp-agent/fleets)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from wp_agent.adapters.jsonl_audit import JsonlAuditLog
from wp_agent.agent.model_client import AnthropicModelClient, ModelClient, ModelReply
from wp_agent.agent.ports import ApprovalDecision, Approvals, AutoApprove, NoApprovals
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.session_state import ApprovalStatus, PendingApproval, SessionState
from wp_agent.cli import failures, history, pending, run_output, site_book, terminal, undo
from wp_agent.cli.ask import read_instruction
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.local_files import write_private
from wp_agent.cli.site_book import NamedSite, settings_with, target_of
from wp_agent.cli.wiring import build_local_deps
from wp_agent.config import CliSettings
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.fleet import runs
from wp_agent.fleet.engine import FleetEngine, FleetRequest
from wp_agent.fleet.runs import SiteAccess
from wp_agent.models import field_rules
from wp_agent.models.fleet import (
    DEFAULT_FLEET_CONCURRENCY,
    MAX_FLEET_CONCURRENCY,
    MAX_FLEET_SITES,
    FleetReport,
    FleetStatus,
    FleetStep,
    SiteResult,
    tolerated_count,
)
from wp_agent.models.target import Role
from wp_agent.program import command_name

_EXIT = {
    FleetStatus.COMPLETED: ExitCode.OK,
    FleetStatus.NOTHING_TO_DO: ExitCode.OK,
    FleetStatus.AWAITING_APPROVAL: ExitCode.AWAITING_APPROVAL,
    FleetStatus.PARTIAL_FAILURE: ExitCode.PARTIAL_FAILURE,
    FleetStatus.DECLINED: ExitCode.DECLINED,
}
_STATUS_JA = {
    "completed": "完了", "awaitingApproval": "承認待ち", "partialFailure": "一部失敗", "failed": "失敗",
    "rolledBack": "元に戻した", "skipped": "見送り", "declined": "見送り（却下）", "expired": "期限切れ",
    "cancelled": "中止", "running": "実行中", "stopped": "停止", "nothingToDo": "変更なし", "planning": "計画中",
    "undone": "取り消し済み",
}  # fmt: skip


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "fleet",
        help="1つの指示を複数の登録済みサイトで実行します（計画は1回、承認も1回）",
        description="最初のサイト（カナリア）で計画を立て、計画を1回承認すると、カナリアで実行し、正常に終われば残りの"
        "サイトを並行して実行します。終了コード: 0 完了、1 停止・失敗、2 指定の誤り、3 承認待ち、6 一部失敗、7 却下。",
    )
    actions = parser.add_subparsers(dest="fleet_action", required=True, metavar="<操作>")
    ask = actions.add_parser("ask", help="指示を複数のサイトで実行します")
    ask.add_argument("instruction", metavar="指示", help="日本語の指示。- なら標準入力から読みます")
    chosen = ask.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--sites", metavar="A,B,C", help="サイト名をカンマ区切りで（先頭からカナリア）")
    chosen.add_argument(
        "--tag", metavar="TAG", help="このタグの付いた全サイト（名前順。wp-agent sites tags）"
    )
    ask.add_argument(
        "--canary", type=int, default=1, metavar="N", help="先に1つずつ実行するサイトの数（既定 1）"
    )
    ask.add_argument(
        "--concurrency", type=int, default=DEFAULT_FLEET_CONCURRENCY, metavar="N",
        help=f"カナリアの後に同時に実行するサイトの数（1〜{MAX_FLEET_CONCURRENCY}、既定 {DEFAULT_FLEET_CONCURRENCY}）",
    )  # fmt: skip
    ask.add_argument(
        "--tolerated-failures", default="0", metavar="N|P%",
        help="これを超えるサイトが失敗したら残りを止めます（件数、または 20%% のようにサイト数に対する割合。既定 0）",
    )  # fmt: skip
    approve = actions.add_parser("approve", help="承認待ちのフリート計画を承認して実行します")
    approve.add_argument("fleet_run_id", metavar="FLEET_ID")
    reject = actions.add_parser("reject", help="承認待ちのフリート計画を却下します（何も実行しません）")
    reject.add_argument("fleet_run_id", metavar="FLEET_ID")
    for sub in (ask, approve, reject):
        sub.add_argument("--json", action="store_true", help="フリートの報告を JSON で標準出力に出します")
        sub.add_argument("--user", default="local-user", help="監査ログに記録する依頼者ID")
    for sub in (ask, approve):
        sub.add_argument(
            "--yes", action="store_true", help="計画と各サイトの確認を確認せずに承認して実行します"
        )
    ask.set_defaults(handler=run_ask)
    approve.set_defaults(handler=run_approve)
    reject.set_defaults(handler=run_reject)


# -- one site: a named site's own settings, SSH pool and approvals ---------------------------------


class _OneAtATime:
    """A person at the terminal is asked about one site at a time."""

    def __init__(self, inner: Approvals) -> None:
        self._inner = inner
        self._lock = threading.Lock()

    def decide(self, pending_approval: PendingApproval, state: SessionState) -> ApprovalDecision | None:
        with self._lock:
            return self._inner.decide(pending_approval, state)


class NamedSites:
    """The engine's way to the CLI's named sites: the operator is each one's administrator; a site's run
    uses that site's settings and SSH pool; its records are kept as `ask`'s are (history, undo, and a run
    waiting for a person nobody here can be, for `wp-agent approve`)."""

    def __init__(
        self, sites: dict[str, NamedSite], base: CliSettings, user: str, approvals: Approvals
    ) -> None:
        self._sites = sites
        self._user = user
        self._approvals = approvals
        self._audit = JsonlAuditLog(base.wp_agent_audit_file.expanduser())  # one audit log for every site

    def _settings(self, site: str) -> CliSettings:
        return settings_with(CliSettings, self._sites[site].environment())

    def access(self, site: str) -> SiteAccess:
        return SiteAccess(
            role=Role.ADMIN, network_admin=True, update_allowance=self._sites[site].update_allowance
        )

    def target_id(self, site: str) -> str:
        return target_of(self._settings(site))

    def run(self, site: str, state: SessionState) -> SessionState:
        settings = self._settings(site)
        model: ModelClient = AnthropicModelClient(settings) if state.fleet_planning else _NoModel()
        deps = build_local_deps(settings, model=model, audit=self._audit)
        runner = AgentRunner(deps, self._approvals)
        try:
            runner.resume(state)
        finally:
            deps.wp_cli.close()
        history.record_summary(deps.audit, state)
        undo.remember_for_undo(state, settings)
        held = state.pending_approval
        if (
            held is not None
            and held.status is ApprovalStatus.PENDING
            and isinstance(self._approvals, NoApprovals)
        ):
            pending.keep(state, settings, self._user)
        return state

    def record(self, state: SessionState, result: SiteResult) -> None:
        if state.fleet is not None:
            self._audit.append(runs.result_record(state.fleet.fleet_run_id, state, result))


class _NoModel:
    """A site's run of an approved plan never asks the model (fleet/opening.py plans it)."""

    def create(
        self, *, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]]
    ) -> ModelReply:
        raise WpAgentError(AgentErrorCode.API_ERROR, "承認された計画の実行中にAIモデルは使いません。")


# -- choosing the sites ------------------------------------------------------------------------------


def _chosen(args: argparse.Namespace, book: site_book.SiteBook) -> list[str]:
    if args.tag is not None:
        if not field_rules.matches(field_rules.TAG, args.tag):
            raise failures.usage("VALIDATION_ERROR", f"--tag: {field_rules.REASONS_JA[field_rules.TAG]}。")
        names = sorted(name for name, site in book.sites.items() if args.tag in site.tags)
        if not names:
            raise failures.usage(
                "NO_SITES", f"タグ「{args.tag}」の付いたサイトはありません（{command_name()} sites tags）。"
            )
        return names
    names = list(dict.fromkeys(name.strip() for name in args.sites.split(",") if name.strip()))
    unknown = [name for name in names if name not in book.sites]
    if unknown:
        raise failures.usage(
            "SITE_NOT_REGISTERED", f"サイト「{unknown[0]}」は登録されていません。登録済み: {book.names()}"
        )
    if not names:
        raise failures.usage("NO_SITES", "--sites にサイト名をカンマ区切りで指定してください。")
    return names


def _request(args: argparse.Namespace, names: list[str], message: str, slots: int) -> FleetRequest:
    """The fleet as asked; its concurrency never more than a site's SSH slots (VPS_SSH_MAX_CHANNELS)."""
    if len(names) > MAX_FLEET_SITES:
        raise failures.usage("VALIDATION_ERROR", f"1回のフリート実行のサイトは{MAX_FLEET_SITES}件までです。")
    if not 1 <= args.canary <= len(names):
        raise failures.usage(
            "VALIDATION_ERROR", f"--canary は 1〜{len(names)}（サイトの数）で指定してください。"
        )
    if not 1 <= args.concurrency <= MAX_FLEET_CONCURRENCY:
        raise failures.usage(
            "VALIDATION_ERROR", f"--concurrency は 1〜{MAX_FLEET_CONCURRENCY} で指定してください。"
        )
    tolerated, percentage = _tolerated(args.tolerated_failures, len(names))
    return FleetRequest(
        message=message, sites=names, user_id=args.user, canary=args.canary, concurrency=min(args.concurrency, slots),
        tolerated_failures=tolerated, tolerated_failure_percentage=percentage,
    )  # fmt: skip


def _tolerated(given: str, sites: int) -> tuple[int, int | None]:
    """--tolerated-failures: a count (`2`) or a percentage of the sites (`20%`, rounded down to whole sites)."""
    text = given.strip()
    percentage = text.endswith("%")
    digits = text.removesuffix("%").strip()
    if not (digits.isascii() and digits.isdigit()) or (percentage and int(digits) > 100):
        raise failures.usage(
            "VALIDATION_ERROR",
            "--tolerated-failures は 0 以上の件数か、0%〜100% の割合（例: 2 や 20%）で指定してください。",
        )
    if percentage:
        return tolerated_count(int(digits), sites), int(digits)
    return int(digits), None


# -- a plan waiting for its approval -------------------------------------------------------------------


class WaitingPlan(BaseModel):
    request: dict[str, Any]  # the FleetRequest's fields
    steps: list[FleetStep]
    plan_answer: str = ""


def plans_dir(settings: CliSettings) -> Path:
    return settings.wp_agent_audit_file.expanduser().parent / "fleets"


# -- the commands ----------------------------------------------------------------------------------


def _approvals(args: argparse.Namespace) -> Approvals:
    if args.yes:
        return AutoApprove(f"cli:{args.user}:--yes")
    asking = run_output.terminal_approvals(args.user)
    return _OneAtATime(asking) if asking is not None else NoApprovals()


def _engine(args: argparse.Namespace, settings: CliSettings, names: Sequence[str]) -> FleetEngine:
    book = site_book.load()
    sites = {name: book.sites[name] for name in names if name in book.sites}
    lost = [name for name in names if name not in sites]
    if lost:
        raise failures.usage("SITE_NOT_REGISTERED", f"サイト「{lost[0]}」は登録されていません。")
    say = None if args.json or not terminal.err.isatty() else (lambda text: terminal.err.line(f"・{text}"))
    return FleetEngine(NamedSites(sites, settings, args.user, _approvals(args)), say)


def run_ask(args: argparse.Namespace, settings: CliSettings) -> int:
    message = read_instruction(args.instruction)
    if not message.strip():
        raise failures.usage("VALIDATION_ERROR", "指示が空です。日本語の指示を入力してください。")
    request = _request(args, _chosen(args, site_book.load()), message, settings.vps_ssh_max_channels)
    engine = _engine(args, settings, request.sites)
    shown, steps = engine.plan(request)
    if shown.status is not FleetStatus.AWAITING_APPROVAL:
        return _finish(shown, args)
    approver = _plan_approver(shown, args)
    if approver is None:
        _keep(settings, request, steps, shown.plan_answer_ja)
        return _finish(shown, args, kept=True)
    return _finish(engine.apply(request, steps, approver, plan_answer=shown.plan_answer_ja), args)


def _plan_approver(shown: FleetReport, args: argparse.Namespace) -> str | None:
    """Who approved the plan: --yes, or the person at the terminal; None when nobody here can answer."""
    if args.yes:
        return f"cli:{args.user}:--yes"
    if not terminal.interactive():
        return None
    _print_plan(shown, terminal.err)
    terminal.err.line(
        f"この計画を {len(shown.sites)} 件のサイトで実行してよろしいですか？ [y/N]: ", end="", flush=True
    )
    if sys.stdin.readline().strip().lower() not in {"y", "yes", "はい"}:
        raise failures.CliError(
            ExitCode.DECLINED, "PLAN_DECLINED", "計画を却下しました。何も実行していません。"
        )
    return f"cli:{args.user}"


def _keep(settings: CliSettings, request: FleetRequest, steps: list[FleetStep], answer: str) -> None:
    document = WaitingPlan(request=dataclasses.asdict(request), steps=steps, plan_answer=answer)
    path = plans_dir(settings) / f"{request.fleet_run_id}.json"
    write_private(path, document.model_dump_json())


def _waiting(args: argparse.Namespace, settings: CliSettings) -> tuple[Path, WaitingPlan]:
    if not field_rules.matches(field_rules.FLEET_RUN_ID, args.fleet_run_id):
        raise failures.usage(
            "VALIDATION_ERROR", f"FLEET_ID: {field_rules.REASONS_JA[field_rules.FLEET_RUN_ID]}。"
        )
    path = plans_dir(settings) / f"{args.fleet_run_id}.json"
    try:
        return path, WaitingPlan.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        raise failures.CliError(
            ExitCode.FAILED,
            "FLEET_NOT_FOUND",
            f"承認待ちのフリート計画 {args.fleet_run_id} は見つかりません（実行済み・却下済みを含む）。",
        ) from None


def run_approve(args: argparse.Namespace, settings: CliSettings) -> int:
    path, waiting = _waiting(args, settings)
    request = FleetRequest(**waiting.request)
    engine = _engine(args, settings, request.sites)
    approver = f"cli:{args.user}:--yes" if args.yes else f"cli:{args.user}"
    report = engine.apply(request, waiting.steps, approver, plan_answer=waiting.plan_answer)
    # Kept until the plan ran everywhere: approved again after a process that died midway, each site decides
    # again on its state then (a site already changed reads another approval text, and asks its own).
    path.unlink(missing_ok=True)
    return _finish(report, args)


def run_reject(args: argparse.Namespace, settings: CliSettings) -> int:
    path, waiting = _waiting(args, settings)
    path.unlink(missing_ok=True)
    request = FleetRequest(**waiting.request)
    return _finish(
        request.report(FleetStatus.DECLINED, detail_ja="計画を却下しました。何も実行していません。"), args
    )


# -- the report ----------------------------------------------------------------------------------------


def _print_plan(report: FleetReport, out: terminal.Stream) -> None:
    out.line(
        f"フリート実行 {report.fleet_run_id}: {len(report.sites)} 件のサイト（カナリア: {'、'.join(report.canary)}）"
    )
    share = (
        "" if report.tolerated_failure_percentage is None else f"（{report.tolerated_failure_percentage}%）"
    )
    out.line(
        f"進め方: カナリアが正常に終わったら残りを最大 {report.concurrency} サイトずつ同時に実行し、"
        f"失敗が {report.tolerated_failures} 件{share}を超えたら残りを止めます。"
    )
    out.line(f"計画（{report.canary[0]} で作成、{len(report.plan)} 件の手順）:")
    for number, step in enumerate(report.plan, 1):
        out.line(f"  {number}. wp {step.command}")
        for name, read in step.lookups.items():
            out.line(f"     {{{name}}} は各サイトで調べます: wp {read}")
        out.line(f"     内容: {step.summary_ja}")
        out.line(f"     影響: {step.impact_ja}")


def _finish(report: FleetReport, args: argparse.Namespace, *, kept: bool = False) -> int:
    if args.json:
        terminal.out.json(report.to_json())
    else:
        if report.plan and not report.results:
            _print_plan(report, terminal.out)
        if report.plan_answer_ja and not report.results:
            terminal.out.line(report.plan_answer_ja)
        if report.results:
            rows = [
                [r.site + ("（カナリア）" if r.canary else ""), _STATUS_JA.get(r.status.value, r.status.value),
                 r.approval_id or "", r.detail_ja.splitlines()[0][:120] if r.detail_ja else ""]
                for r in report.results
            ]  # fmt: skip
            terminal.out.table(
                ["サイト", "結果", "承認ID", "詳細"], rows, title=f"フリート実行 {report.fleet_run_id}"
            )
        terminal.out.line(f"フリート実行の結果: {_STATUS_JA.get(report.status.value, report.status.value)}"
                          + (f" — {report.detail_ja}" if report.detail_ja else ""))  # fmt: skip
    if kept:
        terminal.err.line(
            f"計画は承認待ちです。{command_name()} fleet approve {report.fleet_run_id} で実行、"
            f"{command_name()} fleet reject {report.fleet_run_id} で却下します。"
        )
    return int(_EXIT.get(report.status, ExitCode.FAILED))
