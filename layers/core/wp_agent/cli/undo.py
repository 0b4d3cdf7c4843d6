"""`wp-agent undo <runId> [--dry-run]`: put back what a run of `wp-agent ask` changed."""

from __future__ import annotations

import argparse
import json
import shlex
import sys

from wp_agent.adapters.jsonl_audit import JsonlAuditLog
from wp_agent.agent import audit_outbox
from wp_agent.agent.lifecycle import new_run_id
from wp_agent.agent.ports import NoRateLimits
from wp_agent.agent.session_state import SessionState
from wp_agent.cli import failures, site_choice, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.site_book import target_of
from wp_agent.cli.site_reachability import sandbox_ready, site_answers
from wp_agent.config import CliSettings, LocalAgentSettings
from wp_agent.errors import WpAgentError
from wp_agent.executors.factory import build_wp_cli
from wp_agent.executors.port import WpCli
from wp_agent.masking import mask_command
from wp_agent.models.agent_io import AgentInput, utc_now_iso
from wp_agent.models.undo import UndoPlan
from wp_agent.policy import CommandPolicy
from wp_agent.program import command_name
from wp_agent.undo.execute import PlanOutcome
from wp_agent.undo.local_store import LocalRunStore, StoredRun
from wp_agent.undo.revert_run import CheckedPlan, RevertRun, nothing_to_undo, undo_available


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


def _load(args: argparse.Namespace, settings: CliSettings) -> tuple[LocalRunStore, StoredRun]:
    store = LocalRunStore.from_settings(settings)
    stored = store.load(args.run_id)
    if stored is None:
        raise failures.usage("RUN_NOT_FOUND", f"実行記録「{args.run_id}」が見つかりません。")
    if stored.user_id != args.user:
        raise failures.usage("FORBIDDEN", "元に戻せるのは、その実行を依頼した本人だけです。")
    if stored.target_id not in (_UNNAMED_TARGET, target_of(settings)):
        raise failures.configuration(
            "TARGET_MISMATCH",
            f"この実行は {stored.target_id} で行われました。今の設定（{target_of(settings)}）では元に戻せません。"
            "そのサイトを --site で指定してください。",
        )
    return store, stored


def run(args: argparse.Namespace, settings: CliSettings) -> int:
    store, stored = _load(args, settings)
    if _said_nothing_to_undo(args, stored):
        return ExitCode.OK
    wp_cli = _open_site(args, settings)
    state = _undo_state(stored)
    audit = JsonlAuditLog(settings.wp_agent_audit_file.expanduser())
    service = RevertRun(CommandPolicy.from_settings(settings), wp_cli, NoRateLimits(), state, stored.run_id)
    try:
        checked = service.plan(stored.commands)
        _print_plan(checked, terminal.err if args.json else terminal.out)
        if args.dry_run or checked.plan.empty:
            if args.json:
                terminal.out.json(
                    json.dumps(
                        {
                            "success": True,
                            "runId": state.run_id,
                            "revertsRunId": stored.run_id,
                            "dryRun": args.dry_run,
                            "plan": checked.plan.model_dump(mode="json"),
                        },
                        ensure_ascii=False,
                    )
                )
            return ExitCode.OK
        approver = _approver(args, checked)
        if approver is None:
            raise failures.CliError(
                ExitCode.AWAITING_APPROVAL,
                "CONFIRMATION_REQUIRED",
                "元に戻す操作には確認が必要です。--yes を付けるか、端末で実行してください（何も変更していません）。",
                runId=state.run_id,
                revertsRunId=stored.run_id,
            )
        if approver == "":
            terminal.err.line("元に戻す操作を取りやめました。")
            if args.json:
                terminal.out.json(
                    json.dumps(
                        {
                            "success": True,
                            "runId": state.run_id,
                            "revertsRunId": stored.run_id,
                            "declined": True,
                        }
                    )
                )
            return ExitCode.OK
        outcome = service.execute(checked, approved_by=approver)
    except WpAgentError as exc:
        raise failures.CliError(ExitCode.FAILED, exc.code.value, exc.message_ja, runId=state.run_id) from None
    finally:
        audit_outbox.put(state, service.events)
        audit_outbox.deliver(state, audit)
        wp_cli.close()
    stored.reverted_by.append(state.run_id)
    if outcome.ok and not checked.plan.empty:
        stored.undone_by = state.run_id
    store.save(stored)
    _print_outcome(outcome, state.run_id, terminal.err if args.json else terminal.out)
    if args.json:
        terminal.out.json(json.dumps({"runId": state.run_id, "revertsRunId": stored.run_id, "plan": checked.plan.model_dump(mode="json"),
                          "success": outcome.ok, "newIds": outcome.new_ids,
                          "unsettled": outcome.unsettled_ja}, ensure_ascii=False))  # fmt: skip
    if outcome.ok:
        return ExitCode.OK
    return ExitCode.PARTIAL_FAILURE if any(s.ok for s in outcome.steps) else ExitCode.FAILED


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


def _said_nothing_to_undo(args: argparse.Namespace, stored: StoredRun) -> bool:
    """Nothing left for an undo to do (no revertible change, or already undone): said, not an error."""
    refusal = nothing_to_undo(stored.commands, undone_by=stored.undone_by)
    if refusal is None:
        return False
    (terminal.err if args.json else terminal.out).line(refusal.message_ja)
    if args.json:
        terminal.out.json(
            json.dumps(
                {
                    "success": True,
                    "revertsRunId": stored.run_id,
                    "nothingToUndo": refusal.reason,
                    "undoneBy": refusal.undone_by,
                }
            )
        )
    return True


def _undo_state(stored: StoredRun) -> SessionState:
    """The undo's own run, in the session of the run it reverts (same requester, target and site)."""
    return SessionState(
        session_id=stored.session_id,
        run_id=new_run_id(),
        user_id=stored.user_id,
        target_id=stored.target_id,
        input=AgentInput(message=f"{stored.run_id} を元に戻す"),
        started_at=utc_now_iso(),
        site_url=stored.site_url,
        network_admin=stored.network_admin,
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
    out.line(f"{plan.run_id} を元に戻す計画:")
    if plan.empty:
        out.line("  元に戻す操作はありません。")
    for step in plan.steps:
        out.line(f"  ・{step.restores_ja}\n      wp {mask_command(shlex.join(step.argv))}")
    for skipped in plan.skipped:
        out.line(f"  ✗ {skipped.entity_ja}: {skipped.reason_ja}")
    for note in plan.notes_ja:
        out.line(f"  ※ {note}")


def _print_outcome(outcome: PlanOutcome, undo_run_id: str, out: terminal.Stream) -> None:
    for done in outcome.steps:
        if done.result is None:
            mark = "－（実行していません）"
        else:
            mark = "✓" if done.ok else f"✗ {done.result.stderr.strip()[:200]}"
        out.line(f"  {mark} wp {mask_command(shlex.join(done.argv))}")
    for old, new in outcome.new_ids.items():
        out.line(f"  ※ 投稿 ID {old} は新しいID {new} で作り直しました。")
    for problem in outcome.unsettled_ja:
        out.line(f"  ✗ {problem}")
    verdict = "元に戻しました" if outcome.ok else "一部を元に戻せませんでした"
    out.line(f"{verdict}（この取り消しの実行ID: {undo_run_id}）")


def remember_for_undo(state: SessionState | None, settings: CliSettings) -> None:
    """Keep the run's records for `wp-agent undo` and say how to undo it (stderr: stdout is the answer)."""
    if state is None or not any(r.undo is not None for r in state.run_commands()):
        return
    LocalRunStore.from_settings(settings).save_run(state)
    if undo_available(state.run_commands()):
        terminal.err.line(undo_hint(state.run_id))
