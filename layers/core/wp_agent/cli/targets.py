"""`wp-agent targets`: register and inspect WordPress targets in the deployment's registry table.

Needs AWS credentials and WP_AGENT_REGISTRY_TABLE. `add` can also store the SSH key and the pinned
host key as the target's secret (`wp-agent/targets/<id>`), so the key file never leaves this machine
except into Secrets Manager.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from wp_agent import clock
from wp_agent.cli import terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.config import CliSettings
from wp_agent.errors import ConfigurationError
from wp_agent.models.target import Target

if TYPE_CHECKING:
    from wp_agent.adapters.aws.registry import TargetRegistry


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "targets", help="操作対象のWordPressサイト（ターゲット）を登録・確認します"
    )
    actions = parser.add_subparsers(dest="targets_action", required=True, metavar="<action>")
    add = actions.add_parser("add", help="ターゲットを登録します")
    add.add_argument("--id", required=True, dest="target_id", help="ターゲットID（英小文字・数字・-）")
    add.add_argument("--host", required=True)
    add.add_argument("--port", type=int, default=22)
    add.add_argument("--user", default="root", help="SSHユーザー（root ではない専用ユーザーを推奨）")
    add.add_argument("--wp-path", default="/var/www/wordpress")
    add.add_argument(
        "--wp-user",
        help="すべてのコマンドを実行する WordPress ユーザー（WP-CLI の --user。ログイン名・メール・ID）",
    )
    source = add.add_mutually_exclusive_group(required=True)
    source.add_argument("--secret-arn", help="wp-agent/targets/ 以下の既存のシークレット（ARN）")
    source.add_argument(
        "--private-key-file", type=Path, help="この秘密鍵ファイルからシークレットを作成します"
    )
    add.add_argument(
        "--host-key", help="固定するホスト鍵（例: 'ssh-ed25519 AAAA…'。--private-key-file と一緒に指定）"
    )
    add.add_argument("--passphrase-env", help="鍵のパスフレーズを入れた環境変数の名前")
    add.add_argument(
        "--owner", action="append", required=True, help="このターゲットを使えるユーザーID（複数指定可）"
    )
    add.add_argument(
        "--network-admin",
        action="append",
        default=[],
        help="ネットワーク全体（networkWide）を操作できるユーザーID（複数指定可）",
    )
    add.add_argument("--multisite", action="store_true")
    add.add_argument("--description")
    add.set_defaults(handler=run_add)
    listing = actions.add_parser("list", help="登録済みのターゲットを一覧します")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=run_list)
    get = actions.add_parser("get", help="ターゲットの詳細を表示します")
    get.add_argument("target_id")
    get.add_argument("--json", action="store_true")
    get.set_defaults(handler=run_get)


def _registry(settings: CliSettings) -> TargetRegistry:
    from wp_agent.adapters.aws.registry import TargetRegistry

    if not settings.wp_agent_registry_table:
        raise ConfigurationError(
            "WP_AGENT_REGISTRY_TABLE（スタック出力のレジストリテーブル名）を設定してください。",
            setting="WP_AGENT_REGISTRY_TABLE",
        )
    return TargetRegistry(settings.wp_agent_registry_table)


def _create_secret(args: argparse.Namespace, settings: CliSettings) -> str:
    import boto3

    if not args.host_key:
        raise ConfigurationError(
            "--private-key-file には --host-key（固定するホスト鍵）も指定してください。", setting="--host-key"
        )
    try:
        private_key = args.private_key_file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(
            f"秘密鍵ファイルを読めません: {exc.strerror}", setting="--private-key-file"
        ) from exc
    secret: dict[str, str] = {"privateKey": private_key, "hostKey": args.host_key}
    if args.passphrase_env:
        secret["passphrase"] = os.environ.get(args.passphrase_env, "")
    name = f"{settings.wp_agent_target_secret_prefix}{args.target_id}"
    response = boto3.client("secretsmanager").create_secret(
        Name=name,
        SecretString=json.dumps(secret),
        Description=f"wp-agent SSH key and pinned host key for {args.target_id}",
    )
    return str(response["ARN"])


def _show(target: Target) -> str:
    owners = ", ".join(target.owners)
    lines = [
        f"{target.target_id}: {target.user}@{target.host}:{target.port} {target.wp_path}",
        f"  所有者: {owners}" + ("（マルチサイト）" if target.multisite else ""),
    ]
    if target.network_admins:
        lines.append(f"  ネットワーク管理者: {', '.join(target.network_admins)}")
    if target.wp_user:
        lines.append(f"  WordPressユーザー: {target.wp_user}")
    return "\n".join(lines)


def run_add(args: argparse.Namespace, settings: CliSettings) -> int:
    registry = _registry(settings)
    values = {
        "target_id": args.target_id,
        "host": args.host,
        "port": args.port,
        "user": args.user,
        "wp_path": args.wp_path,
        "wp_user": args.wp_user,
        "secret_arn": args.secret_arn or "arn:aws:secretsmanager:pending:000000000000:secret:pending",
        "owners": args.owner,
        "network_admins": args.network_admin,
        "multisite": args.multisite,
        "description": args.description,
        "created_by": f"cli:{os.environ.get('USER', 'unknown')}",
        "created_at": clock.now_iso(),
    }
    try:
        Target.model_validate(values)  # validate everything before creating anything
    except ValidationError as exc:
        fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors())
        terminal.err.line(f"入力エラー: {fields} が正しくありません（{exc.errors()[0]['msg']}）")
        return ExitCode.USAGE
    if registry.get(args.target_id) is not None:
        terminal.err.line(f"エラー: ターゲット「{args.target_id}」は既に登録されています。")
        return ExitCode.FAILED
    secret_arn = args.secret_arn or _create_secret(args, settings)
    if f":secret:{settings.wp_agent_target_secret_prefix}" not in secret_arn:
        terminal.err.line(
            f"エラー: シークレット名は {settings.wp_agent_target_secret_prefix} で始まる必要があります。"
        )
        return ExitCode.USAGE
    target = Target.model_validate(values | {"secret_arn": secret_arn})
    if not registry.put(target):
        terminal.err.line(f"エラー: ターゲット「{args.target_id}」は既に登録されています。")
        return ExitCode.FAILED
    terminal.out.line(f"登録しました。\n{_show(target)}")
    return ExitCode.OK


def run_list(args: argparse.Namespace, settings: CliSettings) -> int:
    targets = _registry(settings).list()
    if args.json:
        terminal.out.json(json.dumps([t.to_json_dict() for t in targets], ensure_ascii=False))
    elif not targets:
        terminal.out.line("登録済みのターゲットはありません。")
    else:
        terminal.out.line("\n".join(_show(t) for t in targets))
    return ExitCode.OK


def run_get(args: argparse.Namespace, settings: CliSettings) -> int:
    target = _registry(settings).get(args.target_id)
    if target is None:
        terminal.err.line(f"エラー: ターゲット「{args.target_id}」は登録されていません。")
        return ExitCode.FAILED
    if args.json:
        terminal.out.json(target.to_json())
    else:
        terminal.out.line(_show(target))
    return ExitCode.OK
