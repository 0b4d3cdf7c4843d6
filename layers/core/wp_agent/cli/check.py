"""`wp-agent check`: show what the policy decides for a command, without running it."""

from __future__ import annotations

import argparse
import json
import re
import shlex
from typing import Any

from wp_agent.cli import failures, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.config import CliSettings
from wp_agent.models.target import Role
from wp_agent.policy import CommandPolicy
from wp_agent.policy.command_spec import spec_of
from wp_agent.policy.decide import explained
from wp_agent.policy.roles import RoleSummary, apply_role, role_needed
from wp_agent.policy.site_scope import SiteScope
from wp_agent.program import command_name

_ONLY_OPERATORS = re.compile(r"^[;&|<>()]+$")
_NEEDS_QUOTING = re.compile(r"[\s;&|<>()'\"]")


def command_from_words(words: list[str]) -> str:
    """One word is the command text as the model would write it. Several words are joined as typed:
    words made only of operators stay operators, words with spaces or operator characters are
    double-quoted (so `$(` and backticks inside them are still seen), everything else is bare."""
    if len(words) == 1:
        return words[0]
    parts: list[str] = []
    for word in words:
        if _ONLY_OPERATORS.match(word) or not _NEEDS_QUOTING.search(word):
            parts.append(word)
        else:
            parts.append('"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return " ".join(parts)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "check",
        help="コマンドがポリシーで許可・承認待ち・ブロックのどれになるかを表示します（実行はしません）",
        description=(
            "WP-CLI のコマンドをポリシーで判定します（実行はしません）。使い方: wp-agent check [--json] "
            "[--role viewer|editor|admin] -- '<コマンド>'。--role だけを指定すると、その権限でできることを表示します"
        ),
    )
    parser.add_argument(
        "--role",
        choices=[r.value for r in Role],
        help="対象サイトのメンバーの権限（viewer 閲覧者 / editor 編集者 / admin 管理者）で判定します",
    )
    parser.add_argument("--json", action="store_true", help="判定結果を JSON で標準出力に出します")
    parser.add_argument(
        "--exit-code",
        action="store_true",
        help="終了コードで結果を返します（0 許可、3 承認が必要、4 ブロック）",
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="判定の手順（コマンド表 → 権限と対象サイト → サイトで確認すること）を順に表示します",
    )
    parser.add_argument(
        "words", nargs=argparse.REMAINDER, help="判定するコマンド（例: -- 'post list --format=json'）"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: CliSettings) -> int:
    words = list(args.words[1:] if args.words[:1] == ["--"] else args.words)
    role = Role(args.role) if args.role else None
    if not words and role is not None:
        _show_role(role, as_json=args.json)
        return ExitCode.OK
    if not words:
        raise failures.usage(
            "USAGE_ERROR", f"判定するコマンドを指定してください。例: {command_name()} check -- 'post list'"
        )
    decision = CommandPolicy.from_settings(settings).classify(command_from_words(words))
    document = decision.check_json()
    if role is not None:
        needed = role_needed(decision) if not decision.blocked else None
        decision = apply_role(decision, role)
        document = decision.check_json() | {"role": role.value}
        if needed is not None:
            document["roleNeeded"] = needed.value
    if args.explain:
        document["explain"] = _explained(command_from_words(words), role, settings)
        if (row := spec_of(decision.command_path)) is not None:
            document["row"] = row.to_json()
    if args.json:
        terminal.out.json(json.dumps(document, ensure_ascii=False))
    else:
        shown = document
        terminal.out.line(f"判定: {decision.decision}（{decision.category.value}）")
        terminal.out.line(f"理由: {shown['reason']}")
        terminal.out.line(f"ルール: {decision.rule}")
        if decision.argv:
            terminal.out.line(f"実行引数: wp {shlex.join(shown['argv'])}")
        if role is not None:
            terminal.out.line(f"権限: {role.label_ja}")
        _print_row(document.get("row"))
        _print_explained(document.get("explain", []))
    if not args.exit_code:
        return ExitCode.OK
    return {"allow": ExitCode.OK, "confirm": ExitCode.AWAITING_APPROVAL, "block": ExitCode.BLOCKED}[
        decision.decision
    ]


def _explained(command: str, role: Role | None, settings: CliSettings) -> list[dict[str, Any]]:
    """The decision step by step (policy/decide.py) as the agent decides a command for a requester of
    `role` (the local operator: an administrator)."""
    scope = SiteScope(site_url=None, network_allowed=True, role=role or Role.ADMIN)
    return explained(CommandPolicy.from_settings(settings), command, scope)


def _print_row(row: dict[str, Any] | None) -> None:
    """The command's row of the policy (policy/command_spec.py)."""
    if row is None:
        return
    terminal.out.line(f"コマンド表の行: {row['command']}（{row['labelJa']}、{row['category']}）")
    source = {"phar": "固定した WP-CLI", "reference": "公式リファレンス（固定版にないコマンド）"}
    terminal.out.line(
        f"  文法: {row['synopsis'] or '（なし）'}（{source.get(row['grammarSource'], row['grammarSource'])}）"
    )
    if row["effectJa"]:
        terminal.out.line(f"  承認なしで変えてよい範囲: {row['effectJa']}")
    terminal.out.line(f"  変更を依頼できる最小の権限: {Role(row['leastRole']).label_ja}")
    if row["rules"]:
        terminal.out.line(
            f"  このコマンドの引数ルール: {', '.join(row['rules'])}（全コマンド共通のルールのほかに）"
        )
    for read in row["siteReads"]:
        terminal.out.line(f"  判定の前にサイトで確認: {read}")
    if row["summary"]:
        terminal.out.line(f"  承認の説明: {row['summary']}")
    for read in row["summaryReads"]:
        terminal.out.line(f"  承認の説明のためにサイトで確認: {read}")
    for key, label in (
        ("allowedExamples", "承認なしで実行"),
        ("heldExamples", "承認が必要"),
        ("refusedExamples", "実行しない"),
    ):
        for example in row[key]:
            terminal.out.line(f"  例（{label}）: wp {example}")


def _print_explained(steps: list[dict[str, Any]]) -> None:
    if steps:
        terminal.out.line("判定の手順:")
    for number, step in enumerate(steps, 1):
        said = f"{step['decision']}（{step['rule']}）" if step["changed"] or number == 1 else "変わらず"
        if step["waitsForSite"]:
            said = "サイトの答えで決まります（check はサイトを読みません）"
        terminal.out.line(f"  {number}. {step['stepJa']}: {said}")
        for read in step["siteReads"]:
            terminal.out.line(f"       サイトで確認: wp {shlex.join(read)}")


def _show_role(role: Role, *, as_json: bool) -> None:
    summary = RoleSummary.of(role)
    if as_json:
        terminal.out.json(json.dumps(summary.as_json(), ensure_ascii=False))
        return
    terminal.out.line(f"{role.label_ja}ができること:")
    terminal.out.line("  読み取り: ポリシーが読み取りと判定するすべてのコマンド")
    changes = ", ".join(summary.writes) or "なし"
    terminal.out.line(f"  変更: {changes}（削除など影響の大きい操作は依頼者の承認が必要です）")
    if summary.read_only:
        terminal.out.line(f"  読み取りのみ: {', '.join(summary.read_only)}")
