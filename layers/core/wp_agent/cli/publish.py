"""`wp-agent publish <file.json>`: publish one article (spec §4.4 publishArticle), no model involved."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from wp_agent.adapters.jsonl_audit import JsonlAuditLog
from wp_agent.cli import failures, publish_once, site_choice, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.site_book import target_of
from wp_agent.config import CliSettings
from wp_agent.errors import WpAgentError
from wp_agent.executors.factory import build_wp_cli
from wp_agent.executors.port import WpCli
from wp_agent.models.article import PublishArticleInput, PublishArticleOutput
from wp_agent.models.target import validate_wp_user
from wp_agent.policy import CommandPolicy
from wp_agent.publishing import (
    ArticlePublisher,
    InputProblem,
    PublishErrorCode,
    input_problems,
    validation_output,
)

_STATUS_JA = {
    "draft": "記事を下書きとして保存しました",
    "publish": "記事を公開しました",
    "future": "記事の予約投稿を設定しました",
}


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "publish",
        help="JSONファイルの記事をWordPressに投稿します（AIモデルは使いません）",
        description=(
            "記事1件（PublishArticleInput の JSON、camelCase）を決まった手順の WP-CLI で投稿します。"
            "同じ記事の2回目は最初の投稿を返します。終了コード: 0 成功、1 失敗、2 入力の誤り、5 設定エラー。"
        ),
    )
    parser.add_argument("file", help="記事のJSONファイル（- で標準入力）")
    parser.add_argument(
        "--json",
        action="store_true",
        help="PublishArticleOutput（camelCase の JSON）だけを標準出力に出します",
    )
    parser.add_argument("--site-url", help="マルチサイト: ファイルに siteUrl がないときの投稿先サイト")
    parser.add_argument(
        "--wp-user",
        help="実行する WordPress ユーザー（WP-CLI の --user。WP_AGENT_WP_USER より優先）: 投稿者になります。"
        "<script>/<iframe> を残すには権限のあるユーザーが必要です",
    )
    parser.add_argument("--user", default="local-user", help="監査ログに記録する依頼者ID")
    site_choice.add_site_option(parser)
    parser.add_argument(
        "--key",
        help="記事の冪等キー（同じキーの2回目は最初の投稿を返します。既定: 記事の内容と投稿先のハッシュ）",
    )
    parser.set_defaults(handler=run)


def _load(source: str) -> Any:
    """The JSON document; OSError/ValueError describe why it could not be read."""
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    return json.loads(text)


def _refuse_input(args: argparse.Namespace, problems: list[InputProblem]) -> int:
    output = validation_output(problems)
    if output.error is not None:
        terminal.err.line(f"[{output.error.code}] {output.error.message}")
    if args.json:
        terminal.out.json(output.to_json())
    return ExitCode.USAGE


def _print_human(
    output: PublishArticleOutput,
    article: PublishArticleInput,
    simulated: bool,
    out: terminal.Stream,
    *,
    scheduled: str | None = None,
    repeated: bool = False,
) -> None:
    if output.data is None:
        return
    prefix = "【サンドボックス】ローカルのWordPressで" if simulated else ""
    if repeated:
        out.line("この記事はすでに投稿済みです。最初の投稿を返します（何も変更していません）。")
    out.line(f"{prefix}{_STATUS_JA[article.status]}（投稿ID {output.data.post_id}）")
    if scheduled:
        out.line(f"公開予定日時: {scheduled}（サイトのタイムゾーン）")
    out.line(f"URL: {output.data.post_url}")
    out.line(f"編集: {output.data.edit_url}")


def _scheduled_date(wp_cli: WpCli, output: PublishArticleOutput, site_url: str | None) -> str | None:
    """The date WordPress will publish the post at, as the site has it (local time)."""
    if output.data is None:
        return None
    return publish_once.post_field(wp_cli, output.data.post_id, "post_date", site_url)


def _read_input(
    args: argparse.Namespace, settings: CliSettings
) -> tuple[PublishArticleInput, CliSettings] | int:
    """The article and the settings it runs with, or the exit code of a refused input."""
    try:
        document = _load(args.file)
    except OSError as exc:
        return _refuse_input(
            args, [InputProblem(args.file, f"ファイルを読み込めません（{exc.strerror or exc}）")]
        )
    except ValueError as exc:
        return _refuse_input(args, [InputProblem(args.file, f"JSONとして解釈できません（{exc}）")])
    if args.site_url and not args.site_url.startswith(("http://", "https://")):
        return _refuse_input(
            args, [InputProblem("--site-url", "http:// または https:// で始まるURLを指定してください")]
        )
    try:
        article = PublishArticleInput.model_validate(document)
    except ValidationError as exc:
        return _refuse_input(args, input_problems(exc))
    if args.wp_user:
        try:
            settings = settings.model_copy(update={"wp_agent_wp_user": validate_wp_user(args.wp_user)})
        except ValueError:
            return _refuse_input(
                args,
                [InputProblem("--wp-user", "WordPressのユーザー名・メールアドレス・IDを指定してください")],
            )
    return article, settings


def run(args: argparse.Namespace, settings: CliSettings) -> int:
    read = _read_input(args, settings)
    if isinstance(read, int):
        return read
    article, settings = read
    try:
        wp_cli = build_wp_cli(settings)
    except WpAgentError as exc:
        raise failures.configuration(exc.code.value, exc.message_ja) from None
    site_url = article.site_url or args.site_url
    key = args.key or publish_once.article_key(
        article, target=target_of(settings), site_url=site_url, wp_user=settings.wp_agent_wp_user
    )
    try:
        published = _publish_once(args, settings, wp_cli, article, key, site_url)
    finally:
        wp_cli.close()
    if isinstance(published, int):
        return published
    output, repeated, scheduled = published
    if args.json:
        terminal.out.json(output.to_json())
    else:
        _print_human(output, article, wp_cli.simulated, terminal.out, scheduled=scheduled, repeated=repeated)
    if output.error is not None:
        terminal.err.line(f"[{output.error.code}] {output.error.message}")
        return ExitCode.USAGE if output.error.code == PublishErrorCode.VALIDATION_ERROR else ExitCode.FAILED
    return ExitCode.OK


def _publish_once(
    args: argparse.Namespace,
    settings: CliSettings,
    wp_cli: WpCli,
    article: PublishArticleInput,
    key: str,
    site_url: str | None,
) -> tuple[PublishArticleOutput, bool, str | None] | int:
    """(output, whether it is the earlier call's answer, the scheduled date), or an exit code."""
    first = publish_once.earlier(key)
    if first is not None and first.state == "started":
        raise failures.CliError(
            ExitCode.FAILED,
            "PUBLISH_IN_PROGRESS",
            "同じ記事の投稿が実行中か、途中で終了しています"
            f"（{first.at} 開始）。WordPress の投稿一覧で確認してから、必要なら --key に新しい値を付けて再実行してください。",
            label="実行エラー",
        )
    repeated = (
        first is not None
        and first.output is not None
        and publish_once.still_there(wp_cli, first.output, site_url)
    )
    if repeated and first is not None and first.output is not None:
        output = first.output
    else:
        publish_once.started(key)
        publisher = ArticlePublisher(
            wp_cli,
            CommandPolicy.from_settings(settings),
            audit=JsonlAuditLog(settings.wp_agent_audit_file.expanduser()),
            user_id=args.user,
            site_url=args.site_url,
        )
        output = publisher.publish(article)
        publish_once.finished(key, output)
    scheduled = None
    if output.success and article.status == "future":
        scheduled = _scheduled_date(wp_cli, output, site_url)
    return output, repeated, scheduled
