"""`wp-agent history [--json] [-n N]` and `wp-agent show <runId>`: past runs from the audit file, each
with what happened to it (cli/run_log.py). Dry runs (`undo --dry-run`) are not runs: history leaves
them out; `show` still tells one by its ID."""

from __future__ import annotations

import argparse
import json

from wp_agent.agent.lifecycle import held_summary
from wp_agent.agent.ports import AuditLog
from wp_agent.agent.session_state import SessionState
from wp_agent.cli import failures, site_book, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.run_log import DRY_RUN, Run, read_runs
from wp_agent.config import CliSettings
from wp_agent.program import command_name


def record_summary(audit: AuditLog, state: SessionState) -> None:
    """The end record of a run that stops held (its instruction, masked): `history` shows it
    承認待ち until `approve` / `reject` ends it. A run that ended wrote its own (agent/lifecycle.py)."""
    event = held_summary(state)
    if event is not None:
        audit.append(event)


# --- commands -------------------------------------------------------------------------------------


def add_parsers(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    history = subparsers.add_parser(
        "history",
        help="過去の実行を一覧します（監査ログから）",
        description="監査ログ（WP_AGENT_AUDIT_FILE）にある過去の実行を新しい順に一覧します。",
    )
    history.add_argument("-n", type=int, default=20, metavar="N", help="表示する件数（1〜1000、既定 20）")
    history.add_argument("--json", action="store_true", help="JSON で標準出力に出します")
    history.add_argument(
        "--site", metavar="NAME", help="このサイト（wp-agent sites add）で実行したものだけを表示します"
    )
    history.set_defaults(handler=run_history)
    show = subparsers.add_parser(
        "show",
        help="1回の実行の詳細を表示します（指示、回答、各コマンドの判定・承認者・結果）",
        description="監査ログから1回の実行の詳細を表示します。実行IDは wp-agent history で確認できます。",
    )
    show.add_argument("run_id", metavar="実行ID", help="run_… の形式の実行ID")
    show.add_argument("--json", action="store_true", help="JSON で標準出力に出します")
    show.add_argument("--site", metavar="NAME", help="このサイトで実行したものに限ります")
    show.set_defaults(handler=run_show)


def _on_site(runs: list[Run], name: str | None) -> list[Run]:
    """The runs made on the named site (a run records where it ran, whichever way it was chosen)."""
    if name is None:
        return runs
    book = site_book.load()
    site = book.sites.get(name)
    if site is None:
        raise failures.usage(
            "SITE_NOT_REGISTERED", f"サイト「{name}」は登録されていません。登録済み: {book.names()}"
        )
    target = site_book.target_of(site_book.settings_with(CliSettings, site.environment()))
    return [run for run in runs if run.target_id == target]


def run_history(args: argparse.Namespace, settings: CliSettings) -> int:
    if not 1 <= args.n <= 1000:
        raise failures.usage("VALIDATION_ERROR", "-n には 1〜1000 の整数を指定してください。")
    runs = [run for run in read_runs(settings.wp_agent_audit_file.expanduser()) if run.status != DRY_RUN]
    runs = _on_site(runs, args.site)[-args.n :][::-1]
    if args.json:
        terminal.out.json(json.dumps([run.to_json() for run in runs], ensure_ascii=False))
        return ExitCode.OK
    if not runs:
        terminal.out.line("まだ実行の記録はありません。")
        return ExitCode.OK
    rows = [
        [run.started_local, run.run_id, run.status_ja, str(len(run.asked)),
         _short(run.instruction or "（指示の記録なし）")]
        for run in runs
    ]  # fmt: skip
    terminal.out.table(["開始", "実行ID", "結果", "コマンド", "指示"], rows, title="過去の実行（新しい順）")
    return ExitCode.OK


def run_show(args: argparse.Namespace, settings: CliSettings) -> int:
    runs = {
        run.run_id: run for run in _on_site(read_runs(settings.wp_agent_audit_file.expanduser()), args.site)
    }
    run = runs.get(args.run_id)
    if run is None:
        raise failures.usage(
            "RUN_NOT_FOUND",
            f"実行ID {args.run_id} の記録は監査ログにありません。{command_name()} history で確認してください。",
        )
    if args.json:
        terminal.out.json(json.dumps(run.to_json(), ensure_ascii=False))
        return ExitCode.OK
    terminal.out.line(f"実行ID: {run.run_id}（セッション {run.session_id}、依頼者 {run.user_id}）")
    terminal.out.line(f"開始: {run.started_local}")
    terminal.out.line(f"結果: {run.status_ja}")
    if run.reverts_run_id:
        terminal.out.line(f"取り消した実行: {run.reverts_run_id}")
    if run.channel:
        terminal.out.line(f"経路: {run.channel}")
    terminal.out.line(f"指示: {run.instruction or '（記録なし）'}")
    terminal.out.line(f"回答: {run.answer or '（記録なし）'}")
    rows = [
        [f"wp {c.command}", c.decision_ja, c.approver or "－", c.outcome_ja,
         "" if c.exit_code is None else str(c.exit_code), "" if c.duration_ms is None else f"{c.duration_ms}ms"]
        for c in run.asked
    ]  # fmt: skip
    if rows:
        terminal.out.table(
            ["コマンド", "判定", "承認者", "結果", "終了コード", "時間"], rows, title="コマンド"
        )
    # The agent's own reads (site facts, an approval summary's, undo's before-images): apart, so the
    # commands above are exactly what was asked for.
    reads = [
        [f"wp {c.command}", c.outcome_ja, "" if c.duration_ms is None else f"{c.duration_ms}ms"]
        for c in run.system_reads
    ]
    if reads:
        terminal.out.table(
            ["コマンド", "結果", "時間"], reads, title="エージェント自身の確認（読み取りのみ）"
        )
    return ExitCode.OK


def _short(text: str, limit: int = 40) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
