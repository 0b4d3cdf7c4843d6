"""`wp-agent undo <runId> [--dry-run]`: put back what a run of `wp-agent ask` changed."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import dataclass

from wp_agent import clock
from wp_agent.adapters.jsonl_audit import JsonlAuditLog
from wp_agent.agent import audit_outbox
from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.lifecycle import new_run_id
from wp_agent.agent.ports import NoRateLimits
from wp_agent.agent.session_state import SessionState
from wp_agent.cli import failures, site_choice, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.run_log import DRY_RUN, read_runs
from wp_agent.cli.site_book import target_of
from wp_agent.cli.site_reachability import sandbox_ready, site_answers
from wp_agent.config import CliSettings, LocalAgentSettings
from wp_agent.errors import WpAgentError
from wp_agent.executors.factory import build_wp_cli
from wp_agent.executors.port import WpCli
from wp_agent.masking import mask_command, mask_command_output, mask_text
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.target import Role
from wp_agent.models.undo import UndoPlan
from wp_agent.policy import CommandPolicy
from wp_agent.program import command_name
from wp_agent.undo.execute import PlanOutcome
from wp_agent.undo.local_store import LocalRunStore, StoredRun, valid_run_id
from wp_agent.undo.revert_run import CheckedPlan, RevertRun, nothing_to_undo, restorable


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "undo",
        help="実行した変更を元に戻します",
        description="実行で変更した内容を元に戻します。終了コード: 0 元に戻した（または戻すものがない）、"
        "1 失敗、2 不明な実行ID、3 承認待ち、6 一部だけ戻した。",
    )
    parser.add_argument("run_id", help="元に戻す実行のID（wp-agent ask の最後に表示されます。例: run_0123…）")
    parser.add_argument(
        "--dry-run", action="store_true", help="元に戻す手順を表示するだけで、何も実行しません"
    )
    parser.add_argument("--yes", action="store_true", help="確認が必要な手順も確認なしで承認します")
    parser.add_argument("--json", action="store_true", help="手順と結果をJSONで標準出力に出します")
    parser.add_argument("--user", default="local-user", help="依頼者ID（元の実行の依頼者と同じであること）")
    site_choice.add_site_option(parser, remembered=remembered_target)
    parser.set_defaults(handler=run)


def undo_hint(run_id: str) -> str:
    return f"元に戻すには: {command_name()} undo {run_id}（内容の確認だけなら --dry-run）"


def remembered_target(args: argparse.Namespace, settings: LocalAgentSettings) -> str | None:
    """Where the run ran (runs from before sites were remembered say only "local")."""
    stored = LocalRunStore.from_settings(settings).load(args.run_id)
    if stored is None or stored.target_id == _UNNAMED_TARGET:
        return None
    return stored.target_id


_UNNAMED_TARGET = "local"


def _load(args: argparse.Namespace, settings: CliSettings) -> tuple[LocalRunStore, StoredRun | _NoUndoRecord]:
    store = LocalRunStore.from_settings(settings)
    stored = store.load(args.run_id)
    if stored is None:
        found = _not_stored(args, settings)
        if isinstance(found, failures.CliError):
            raise found
        return store, found
    if stored.user_id != args.user:
        raise failures.usage("FORBIDDEN", "元に戻せるのは、その実行を依頼した本人だけです。")
    if stored.target_id not in (_UNNAMED_TARGET, target_of(settings)):
        raise failures.configuration(
            "TARGET_MISMATCH",
            f"この実行は {stored.target_id} で行われました。今の設定（{target_of(settings)}）では元に戻せません。"
            "そのサイトを --site で指定してください。",
        )
    return store, stored


@dataclass(frozen=True)
class _NoUndoRecord:
    """A run the audit knows that kept nothing for undo: it changed nothing (read-only, refused,
    still held), or it is an undo run itself."""

    run_id: str
    reason: str
    message_ja: str


def _not_stored(args: argparse.Namespace, settings: CliSettings) -> _NoUndoRecord | failures.CliError:
    """Why a run has no undo record: unknown (exit 2), someone else's, or nothing to undo (exit 0)."""
    unknown = failures.usage("RUN_NOT_FOUND", f"実行記録「{args.run_id}」が見つかりません。")
    if not valid_run_id(args.run_id):
        return unknown
    run = next(
        (r for r in read_runs(settings.wp_agent_audit_file.expanduser()) if r.run_id == args.run_id), None
    )
    if run is None or run.status == DRY_RUN:
        return unknown
    if run.user_id != args.user:
        return failures.usage("FORBIDDEN", "元に戻せるのは、その実行を依頼した本人だけです。")
    if run.reverts_run_id:
        return _NoUndoRecord(
            run.run_id,
            "undo_run",
            f"この実行は {run.reverts_run_id} を元に戻した取り消しです。取り消しをさらに元に戻すことはできません"
            f"（必要なら {command_name()} ask で改めて依頼してください）。",
        )
    if run.status == "awaiting_approval":
        return _NoUndoRecord(
            run.run_id,
            "no_changes",
            "この実行は承認待ちで、まだ何も変更していません（元に戻すものはありません）。",
        )
    return _NoUndoRecord(
        run.run_id, "no_changes", "この実行は何も変更していないため、元に戻すものはありません。"
    )


@dataclass
class _Ending:
    """How the undo run ended, for its end record (`history` / `show`): the run that says nothing
    else was stopped by something unexpected."""

    status: str = "failed"
    error: str | None = "UNKNOWN_ERROR"
    answer: str = ""


def run(args: argparse.Namespace, settings: CliSettings) -> int:
    store, stored = _load(args, settings)
    if isinstance(stored, _NoUndoRecord):
        _say_nothing(args, stored.run_id, stored.reason, stored.message_ja)
        return ExitCode.OK
    refusal = nothing_to_undo(stored.commands, undone_by=stored.undone_by)
    if refusal is not None:
        _say_nothing(args, stored.run_id, refusal.reason, refusal.message_ja, undone_by=refusal.undone_by)
        return ExitCode.OK
    wp_cli = _open_site(args, settings)
    state = _undo_state(stored)
    audit = JsonlAuditLog(settings.wp_agent_audit_file.expanduser())
    service = RevertRun(CommandPolicy.from_settings(settings), wp_cli, NoRateLimits(), state, stored.run_id)
    ending = _Ending()
    out = terminal.err if args.json else terminal.out
    try:
        checked = service.plan(stored.commands)
        _print_plan(checked, out)
        if args.dry_run:
            ending = _Ending(DRY_RUN, None, "元に戻す計画を表示しました（何も変更していません）。")
            _print_json(args, state, stored, checked.plan, success=True, dryRun=True)
            return ExitCode.OK
        if checked.plan.empty:
            ending = _Ending(
                "failed", "NOTHING_TO_UNDO", _plan_words(checked.plan) or "元に戻す操作はありません。"
            )
            _print_json(args, state, stored, checked.plan, success=True, nothingToUndo="nothing_planned")
            return ExitCode.OK
        approver = _approver(args, checked)
        if approver is None:
            ending = _Ending("failed", "CONFIRMATION_REQUIRED", "確認が必要なため、何も変更していません。")
            raise failures.CliError(
                ExitCode.AWAITING_APPROVAL,
                "CONFIRMATION_REQUIRED",
                "元に戻す操作には確認が必要です。--yes を付けるか、端末で実行してください（何も変更していません）。",
                runId=state.run_id,
                revertsRunId=stored.run_id,
            )
        if approver == "":
            ending = _Ending("cancelled", None, "元に戻す操作を取りやめました（何も変更していません）。")
            terminal.err.line("元に戻す操作を取りやめました。")
            _print_json(args, state, stored, checked.plan, success=True, declined=True)
            return ExitCode.OK
        outcome = service.execute(checked, approved_by=approver)
        ending = _executed(outcome, checked.plan)
    except WpAgentError as exc:
        ending = _Ending("failed", exc.code.value, exc.message_ja)
        raise failures.CliError(ExitCode.FAILED, exc.code.value, exc.message_ja, runId=state.run_id) from None
    except KeyboardInterrupt:
        ending = _Ending("cancelled", None, "中断しました（Ctrl-C）。")
        raise
    finally:
        service.events.append(_end_record(state, stored.run_id, ending))
        audit_outbox.put(state, service.events)
        audit_outbox.deliver(state, audit)
        wp_cli.close()
    return _finish(args, store, stored, state, checked, outcome)


def _finish(
    args: argparse.Namespace,
    store: LocalRunStore,
    stored: StoredRun,
    state: SessionState,
    checked: CheckedPlan,
    outcome: PlanOutcome,
) -> int:
    """What the executed undo came to: said once (all put back, partly, or not), its exit code."""
    stored.reverted_by.append(state.run_id)
    if outcome.ok:
        stored.undone_by = state.run_id
    store.save(stored)
    _print_outcome(outcome, checked.plan, state.run_id, terminal.err if args.json else terminal.out)
    complete = outcome.ok and not checked.plan.skipped
    _print_json(
        args, state, stored, checked.plan, success=outcome.ok, complete=complete,
        newIds=outcome.new_ids, unsettled=outcome.unsettled_ja,
    )  # fmt: skip
    if complete:
        return ExitCode.OK
    return ExitCode.PARTIAL_FAILURE if any(s.ok for s in outcome.steps) else ExitCode.FAILED


def _executed(outcome: PlanOutcome, plan: UndoPlan) -> _Ending:
    """An executed undo: all put back (completed), partly (PARTIAL_FAILURE: a step failed, or
    something was not as it was to begin with), or nothing (a failed first step)."""
    if outcome.ok and not plan.skipped:
        return _Ending("completed", None, "元に戻しました。")
    words = " ".join(outcome.unsettled_ja) or _plan_words(plan)
    if outcome.ok or any(s.ok for s in outcome.steps):
        return _Ending("completed", "PARTIAL_FAILURE", f"一部だけ元に戻しました。{words}".strip())
    return _Ending("failed", "UNKNOWN_ERROR", f"元に戻せませんでした。{words}".strip())


def _end_record(state: SessionState, reverts_run_id: str, ending: _Ending) -> AuditEvent:
    return audit_outbox.new_event(
        AuditEventType.RUN_SUMMARY,
        state.audit_about(),
        instruction=mask_text(state.input.message),
        answer=mask_text(ending.answer),
        status=ending.status,
        error=ending.error,
        reverts_run_id=reverts_run_id,
    )


def _say_nothing(
    args: argparse.Namespace, run_id: str, reason: str, message_ja: str, *, undone_by: str | None = None
) -> None:
    """Nothing for an undo to do (no change, already undone, an undo run): said, exit 0, nothing run."""
    (terminal.err if args.json else terminal.out).line(message_ja)
    if args.json:
        document = {"success": True, "revertsRunId": run_id, "nothingToUndo": reason, "undoneBy": undone_by}
        terminal.out.json(json.dumps(document, ensure_ascii=False))


def _print_json(
    args: argparse.Namespace, state: SessionState, stored: StoredRun, plan: UndoPlan, **fields: object
) -> None:
    if args.json:
        document = {"runId": state.run_id, "revertsRunId": stored.run_id, "plan": plan_json(plan), **fields}
        terminal.out.json(json.dumps(document, ensure_ascii=False))


def plan_json(plan: UndoPlan) -> dict[str, object]:
    """The plan as scripts read it (camelCase; each command masked as it is printed)."""
    return {
        "runId": plan.run_id,
        "steps": [
            {"command": mask_command(shlex.join(s.argv)), "restores": s.restores_ja, "optional": s.optional}
            for s in plan.steps
        ],
        "notRestored": [{"what": s.entity_ja, "reason": s.reason_ja} for s in plan.skipped],
        "notes": list(plan.notes_ja),
    }


def _plan_words(plan: UndoPlan) -> str:
    return " ".join([f"{s.entity_ja}: {s.reason_ja}" for s in plan.skipped] + list(plan.notes_ja))


def _open_site(args: argparse.Namespace, settings: CliSettings) -> WpCli:
    """The site's WP-CLI once the site answers (an unreachable site: one line, nothing changed)."""
    sandbox_ready(settings)
    try:
        wp_cli = build_wp_cli(settings)
    except WpAgentError as exc:
        raise failures.configuration(exc.code.value, exc.message_ja) from None
    try:
        site_answers(wp_cli, settings, args.site_choice.site)
    except (WpAgentError, failures.CliError) as exc:
        wp_cli.close()
        if isinstance(exc, failures.CliError):
            raise
        raise failures.CliError(ExitCode.FAILED, exc.code.value, exc.message_ja) from None
    return wp_cli


def _undo_state(stored: StoredRun) -> SessionState:
    """The undo's own run, in the session of the run it reverts (same requester, target and site)."""
    return SessionState(
        session_id=stored.session_id,
        run_id=new_run_id(),
        user_id=stored.user_id,
        target_id=stored.target_id,
        input=AgentInput(message=f"{stored.run_id} を元に戻す"),
        started_at=clock.now_iso(),
        site_url=stored.site_url,
        network_admin=stored.network_admin,
        role=Role.ADMIN,  # locally the operator is the site's administrator (as for `ask`)
    )


def _approver(args: argparse.Namespace, checked: CheckedPlan) -> str | None:
    """Who approved ("" declined); None when nobody can be asked."""
    if not checked.needs_approval:
        return f"cli:{args.user}"
    if args.yes:
        return f"cli:{args.user}:--yes"
    if not terminal.interactive():
        return None
    terminal.err.line("\n⚠ 次の操作には確認が必要です:")
    for item in checked.approval_items:
        terminal.err.line(
            f"  ・{item.summary_ja}\n    影響: {item.impact_ja}\n    コマンド: wp {item.command}"
        )
    terminal.err.line("実行してよろしいですか？ [y/N]: ", end="", flush=True)
    answer = sys.stdin.readline().strip().lower()
    return f"cli:{args.user}" if answer in {"y", "yes", "はい"} else ""


def _print_plan(checked: CheckedPlan, out: terminal.Stream) -> None:
    plan: UndoPlan = checked.plan
    partly = "（一部だけ元に戻せます）" if plan.skipped and plan.steps else ""
    out.line(f"{plan.run_id} を元に戻す計画{partly}:")
    if plan.empty:
        out.line("  元に戻す操作はありません。")
    for step in plan.steps:
        out.line(f"  ・{step.restores_ja}\n      wp {mask_command(shlex.join(step.argv))}")
    for skipped in plan.skipped:
        out.line(f"  ✗ 元のとおりには戻せません: {skipped.entity_ja} — {skipped.reason_ja}")
    for note in plan.notes_ja:
        out.line(f"  ※ {note}")


_WHY_LINES = 12  # of a failed step's reason (a guard's report names each page it checked)


def _print_outcome(outcome: PlanOutcome, plan: UndoPlan, undo_run_id: str, out: terminal.Stream) -> None:
    for done in outcome.steps:
        mark = "－（実行していません）" if done.result is None else "✓" if done.ok else "✗"
        out.line(f"  {mark} wp {mask_command(shlex.join(done.argv))}")
        if done.result is not None and not done.ok:  # why, as the command (or its guard) said it
            why = mask_command_output(done.result.stderr).strip().splitlines()
            for line in why[:_WHY_LINES]:
                out.line(f"      {line.strip()[:200]}")
    for old, new in outcome.new_ids.items():
        again = f"同じID {new}" if old == new else f"新しいID {new}"
        out.line(f"  ※ 投稿 ID {old} は{again}で作り直しました（コメントとリビジョンは戻っていません）。")
    for problem in outcome.unsettled_ja:
        out.line(f"  ✗ {problem}")
    if not outcome.ok:
        verdict = "一部を元に戻せませんでした"
    elif plan.skipped:
        verdict = "一部だけ元に戻しました（✗ のものは元のとおりではありません）"
    else:
        verdict = "元に戻しました"
    out.line(f"{verdict}（この取り消しの実行ID: {undo_run_id}）")


def remember_for_undo(state: SessionState | None, settings: CliSettings) -> None:
    """Keep the run's records for `wp-agent undo` and say how much of it undo puts back (stderr:
    stdout is the answer): all of it, part of it (with what stays different), or none of it."""
    if state is None or not any(r.undo is not None for r in state.run_commands()):
        return
    LocalRunStore.from_settings(settings).save_run(state)
    how, short = restorable(state.run_commands())
    if how == "all":
        terminal.err.line(undo_hint(state.run_id))
        return
    if how == "partly":
        terminal.err.line(
            f"一部だけ元に戻せます: {command_name()} undo {state.run_id}（内容の確認だけなら --dry-run）。"
            "元のとおりには戻せないもの:"
        )
    elif short:
        terminal.err.line("この実行の変更は元に戻せません:")
    for command, reason in short:
        terminal.err.line(f"  ・wp {command} — {reason}")
