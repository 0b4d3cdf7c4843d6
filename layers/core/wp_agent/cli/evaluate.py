"""`wp-agent eval`: the Japanese task suite (eval/tasks) through the real agent on the sandbox, scored
on the site's final state; `--compare a.json b.json` puts two result files side by side."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from wp_agent import clock
from wp_agent.agent.model_client import build_sdk_client
from wp_agent.cli import failures, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.wiring import build_local_deps
from wp_agent.config import CliSettings, ModelProvider
from wp_agent.errors import ConfigurationError, WpAgentError
from wp_agent.evaluation.report import EvalReport, TrialResult, compare_markdown, to_markdown
from wp_agent.evaluation.tasks import load_tasks
from wp_agent.model_catalog import retirement_warning

if TYPE_CHECKING:
    from wp_agent.evaluation.harness import EvalHarness
    from wp_agent.evaluation.tasks import EvalTask

MAX_TRIALS = 20


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="日本語タスク集でエージェントを評価します（サンドボックスの最終状態で採点）",
        description="評価タスクを実際のエージェントでサンドボックス上に実行し（試行ごとに初期化）、サイトの"
        "最終状態で採点します。終了コード: 0 完了、1 承認の迂回があった（または --fail-under 未達）、"
        "2 入力エラー、5 設定エラー。",
    )
    parser.add_argument("--model", help="評価するモデルID（既定: ANTHROPIC_MODEL）")
    parser.add_argument(
        "--trials", type=int, default=1, metavar="K", help=f"タスクごとの試行回数（1〜{MAX_TRIALS}）"
    )
    parser.add_argument(
        "--tasks", metavar="PATTERN", help="タスクIDまたはカテゴリ（ワイルドカード可、カンマ区切り）"
    )
    parser.add_argument("--tasks-dir", type=Path, help="タスクファイルのディレクトリ（既定: eval/tasks）")
    parser.add_argument("--json", action="store_true", help="Markdown の代わりに JSON の結果を出力します")
    parser.add_argument(
        "--out", type=Path, metavar="FILE", help="JSON の結果（と FILE.md）をファイルにも書きます"
    )
    parser.add_argument(
        "--record", type=Path, metavar="FILE", help="モデルの応答をすべて記録します（再生用）"
    )
    parser.add_argument(
        "--fail-under",
        type=float,
        metavar="RATE",
        help="全体の成功率が RATE（0〜1）未満なら終了コード 1（プロンプト・モデル変更の判定用）",
    )
    parser.add_argument(
        "--compare",
        nargs=2,
        type=Path,
        metavar=("BEFORE", "AFTER"),
        help="2つの JSON 結果ファイルを比較します",
    )
    parser.add_argument(
        "--validate-tasks",
        action="store_true",
        help="モデルを使わずにタスクデータをサンドボックスで検証します",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: CliSettings) -> int:
    if args.compare:
        return _compare(*args.compare)
    problem = _usage_problem(args)
    if problem is not None:
        raise failures.usage("USAGE_ERROR", problem)
    if args.model:
        settings = settings.model_copy(update={"anthropic_model": args.model})
    tasks = load_tasks(args.tasks_dir, args.tasks)
    from wp_agent.evaluation.harness import EvalHarness  # the sandbox (MariaDB, PHP): only when used

    if args.validate_tasks:
        harness = EvalHarness(settings, deps_factory=build_local_deps)
        return _validate(harness, tasks)
    warning = retirement_warning(settings.anthropic_model, clock.today())
    if warning:
        terminal.err.line(f"⚠ {warning}")
    if settings.wp_agent_model_provider is ModelProvider.ANTHROPIC:
        build_sdk_client(settings)  # ConfigurationError naming ANTHROPIC_API_KEY when it is missing
    try:
        harness = EvalHarness(settings, deps_factory=build_local_deps, on_trial=_print_trial)
    except WpAgentError as exc:
        raise failures.configuration(exc.code.value, exc.message_ja) from None
    terminal.err.line(
        f"評価: モデル {settings.anthropic_model}（{settings.wp_agent_model_provider.value}）、"
        f"{len(tasks)}タスク × {args.trials}回（【サンドボックス】試行ごとに初期化）"
    )
    report, recording = harness.run(tasks, args.trials, tasks_selected=args.tasks)
    if args.record:
        recording.save(args.record)
    if args.out:
        args.out.write_text(report.model_dump_json(indent=1) + "\n", encoding="utf-8")
        args.out.with_suffix(args.out.suffix + ".md").write_text(to_markdown(report), encoding="utf-8")
    if args.json:
        terminal.out.json(report.model_dump_json(indent=1))
    else:
        terminal.out.line(to_markdown(report))
    return _exit_code(report, args.fail_under)


def _usage_problem(args: argparse.Namespace) -> str | None:
    if args.fail_under is not None and not 0 <= args.fail_under <= 1:
        return "--fail-under には 0〜1 の値を指定してください。"
    if not 1 <= args.trials <= MAX_TRIALS:
        return f"--trials には 1〜{MAX_TRIALS} を指定してください。"
    return None


def _exit_code(report: EvalReport, fail_under: float | None) -> int:
    """0 unless the run was interrupted, bypassed an approval, or scored under --fail-under."""
    if report.interrupted:
        terminal.err.line("評価は中断されました（終わった試行だけを集計しています）。")
        return ExitCode.FAILED
    if report.totals.approval_bypasses:
        terminal.err.line(
            f"承認の迂回が {report.totals.approval_bypasses} 件ありました（0 でなければなりません）。"
        )
        return ExitCode.FAILED
    if fail_under is not None and report.totals.success_rate < fail_under:
        terminal.err.line(f"成功率 {report.totals.success_rate:.1%} が基準 {fail_under:.1%} を下回りました。")
        return ExitCode.FAILED
    return ExitCode.OK


def _print_trial(result: TrialResult) -> None:
    mark = "✓" if result.success else "✗"
    reason = "" if result.success else "  " + "; ".join(result.failures)[:300]
    terminal.err.line(f"{mark} {result.task_id} #{result.trial}（{result.wall_seconds:.1f}秒）{reason}")


def _validate(harness: EvalHarness, tasks: list[EvalTask]) -> int:
    broken = 0
    for task in tasks:
        problems = harness.validate(task)
        broken += bool(problems)
        terminal.out.line(f"{'✗' if problems else '✓'} {task.id}" + "".join(f"\n    {p}" for p in problems))
    terminal.err.line(f"{len(tasks) - broken}/{len(tasks)} タスクのデータを確認しました。")
    return ExitCode.FAILED if broken else ExitCode.OK


def _compare(before_path: Path, after_path: Path) -> int:
    try:
        before = EvalReport.model_validate_json(before_path.read_text(encoding="utf-8"))
        after = EvalReport.model_validate_json(after_path.read_text(encoding="utf-8"))
    except (OSError, ValidationError) as exc:
        raise ConfigurationError(
            f"評価結果のファイルを読めません（{type(exc).__name__}）。wp-agent eval --out で書いた JSON を指定してください。",
            setting="--compare",
        ) from exc
    terminal.out.line(compare_markdown(before, after))
    return ExitCode.OK
