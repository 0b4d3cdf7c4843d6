"""`wp-agent doctor [--json]`: check every part the chosen mode needs, without asking the model.

Two kinds of checks:
- offline: settings only, no network round trip (model credentials present, SSH key and pinned host
  key readable, the local `wp` found). `ask` runs these before its first model call (`preflight`),
  so a configuration error is exit 5 before anything is paid for.
- online (doctor only): SSH reachability and login, the remote `wp` and its version, WordPress
  answering, the multisite sites, the AWS tables `targets` uses.
Each check is one ✓/✗ line; a ✗ carries the fix in Japanese. Exit 0 when all pass, else 5.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from wp_agent.cli.exit_codes import ExitCode
from wp_agent.config import ModelProvider, Settings, WpCliMode
from wp_agent.errors import ConfigurationError, WpAgentError
from wp_agent.executors.php_launch import CACHE_DIR_BELOW_HOME, LaunchReason
from wp_agent.executors.port import ReportsPhpLaunch, WpCli
from wp_agent.model_catalog import model_info, retirement_warning


@dataclass(frozen=True)
class Check:
    name: str  # stable id, e.g. "ssh.host_key"
    label: str  # Japanese, shown before the result
    ok: bool
    detail: str = ""
    fix: str = ""  # Japanese: what to do when not ok
    warning: str = ""  # Japanese: passes, but needs attention soon (e.g. the model retires)

    def line(self) -> str:
        mark = ("⚠" if self.warning else "✓") if self.ok else "✗"
        return f"{mark} {self.label}: {self.detail}" if self.detail else f"{mark} {self.label}"


def _passed(name: str, label: str, detail: str = "") -> Check:
    return Check(name, label, True, detail)


def _failed(name: str, label: str, detail: str, fix: str) -> Check:
    return Check(name, label, False, detail, fix)


# --- model --------------------------------------------------------------------------------------


def _aws_region() -> str | None:
    """Where the anthropic SDK's Bedrock client looks: AWS_REGION, AWS_DEFAULT_REGION, the profile."""
    import boto3

    return (
        os.environ.get("AWS_REGION")
        or os.environ.get("AWS_DEFAULT_REGION")
        or boto3.session.Session().region_name
    )


def _aws_credentials_found() -> bool:
    import boto3

    return boto3.session.Session().get_credentials() is not None


def model_lifetime_check(settings: Settings, today: date | None = None) -> Check:
    """The configured model against the retirement dates kept in the repo (model_catalog.json)."""
    model = settings.anthropic_model
    warning = retirement_warning(model, today or datetime.now(UTC).date())
    info = model_info(model)
    detail = model
    if info is not None and info.retires is not None:
        detail = f"{model}（提供終了予定 {info.retires.isoformat()}）"
    return Check("model.retirement", "AIモデルの提供期間", True, detail, warning=warning or "")


def model_checks(settings: Settings) -> list[Check]:
    return [*_credential_checks(settings), model_lifetime_check(settings)]


def _credential_checks(settings: Settings) -> list[Check]:
    label = "AIモデルの認証情報"
    if settings.wp_agent_model_provider is ModelProvider.BEDROCK:
        checks = []
        region = _aws_region()
        checks.append(
            _passed("model.bedrock_region", "Amazon Bedrock のリージョン", region)
            if region
            else _failed(
                "model.bedrock_region",
                "Amazon Bedrock のリージョン",
                "リージョンが設定されていません",
                "AWS_REGION（例: export AWS_REGION=ap-northeast-1）を設定してください。",
            )
        )
        checks.append(
            _passed("model.bedrock_credentials", "Amazon Bedrock の認証情報", "AWS の認証情報があります")
            if _aws_credentials_found()
            else _failed(
                "model.bedrock_credentials",
                "Amazon Bedrock の認証情報",
                "AWS の認証情報が見つかりません",
                "AWS_ACCESS_KEY_ID と AWS_SECRET_ACCESS_KEY、または AWS_PROFILE（~/.aws/credentials）を設定してください。",
            )
        )
        return checks
    if settings.anthropic_api_key is not None and settings.anthropic_api_key.get_secret_value():
        return [_passed("model.api_key", label, "ANTHROPIC_API_KEY が設定されています")]
    if settings.anthropic_api_key_secret_arn:
        return [
            _passed("model.api_key", label, "Secrets Manager から取得します（ANTHROPIC_API_KEY_SECRET_ARN）")
        ]
    return [
        _failed(
            "model.api_key",
            label,
            "ANTHROPIC_API_KEY が設定されていません",
            "`export ANTHROPIC_API_KEY=sk-ant-...` を設定してください（Amazon Bedrock を使う場合は "
            "WP_AGENT_MODEL_PROVIDER=bedrock と AWS の認証情報・リージョン）。",
        )
    ]


# --- where WP-CLI runs (offline part) -------------------------------------------------------------


def _ssh_offline_checks(settings: Settings) -> list[Check]:
    from wp_agent.executors.ssh_keys import KeyMethod, configured_key_method, load_ssh_credentials

    if not settings.vps_host:
        return [
            _failed(
                "ssh.host",
                "SSH接続先",
                "VPS_HOST が設定されていません",
                "VPS_HOST（接続先ホスト）を設定してください。",
            )
        ]
    checks = [
        _passed("ssh.host", "SSH接続先", f"{settings.vps_ssh_user}@{settings.vps_host}:{settings.vps_port}")
    ]
    try:
        method = configured_key_method(settings)
    except WpAgentError as exc:
        return [
            *checks,
            _failed("ssh.private_key", "SSH秘密鍵", "取得方法の設定が正しくありません", exc.message_ja),
        ]
    if method not in (KeyMethod.FILE, KeyMethod.ENV_BASE64):
        # The key lives in a secret store: reading it is a network call, made by the online checks.
        return [*checks, _passed("ssh.private_key", "SSH秘密鍵", f"{method.value} から取得します")]
    try:
        credentials = load_ssh_credentials(settings)
    except WpAgentError as exc:
        is_host_key = "ホスト鍵" in exc.message_ja
        name, label = (
            ("ssh.host_key", "SSHホスト鍵（固定）") if is_host_key else ("ssh.private_key", "SSH秘密鍵")
        )
        if is_host_key:
            checks.append(_passed("ssh.private_key", "SSH秘密鍵", "読み込めました"))
        return [*checks, _failed(name, label, "読み込めません", exc.message_ja)]
    return [
        *checks,
        _passed("ssh.private_key", "SSH秘密鍵", credentials.client_fingerprint),
        _passed("ssh.host_key", "SSHホスト鍵（固定）", "、".join(credentials.host_fingerprints)),
    ]


def _local_offline_checks(settings: Settings) -> list[Check]:
    checks: list[Check] = []
    path = settings.wp_local_path
    if path is None or not path.expanduser().is_dir():
        checks.append(
            _failed(
                "local.path",
                "WordPress のディレクトリ",
                "WP_LOCAL_PATH が設定されていないか、ディレクトリではありません",
                "WP_LOCAL_PATH に WordPress のディレクトリ（wp-config.php のある場所）を設定してください。",
            )
        )
    else:
        checks.append(_passed("local.path", "WordPress のディレクトリ", str(path)))
    program = (shlex.split(settings.wp_cli_bin) or ["wp"])[0]
    found = shutil.which(program)
    checks.append(
        _passed("local.wp_binary", "WP-CLI（wp）", found)
        if found
        else _failed(
            "local.wp_binary",
            "WP-CLI（wp）",
            f"{program} が見つかりません",
            'WP-CLI をインストールするか、WP_CLI_BIN に実行方法（例: "php /path/to/wp-cli.phar"）を設定してください。',
        )
    )
    return checks


def _sandbox_offline_checks(settings: Settings) -> list[Check]:
    from wp_agent.executors.sandbox import DEFAULT_SANDBOX_DIR
    from wp_agent.sandbox import SandboxError, SandboxSite

    site = SandboxSite(Path(settings.wp_agent_sandbox_site or DEFAULT_SANDBOX_DIR))
    try:
        status = site.status()
    except SandboxError as exc:
        return [_failed("sandbox", "サンドボックス", exc.cause, exc.message_ja)]
    detail = " / ".join(status.lines_ja()[:2])
    return [_passed("sandbox", "サンドボックス", detail)]


def offline_checks(settings: Settings) -> list[Check]:
    """Everything that can be checked without a network round trip."""
    checks = model_checks(settings)
    if settings.wp_cli_mode is WpCliMode.SSH:
        checks += _ssh_offline_checks(settings)
    elif settings.wp_cli_mode is WpCliMode.LOCAL:
        checks += _local_offline_checks(settings)
    else:
        checks += _sandbox_offline_checks(settings)
    return checks


def preflight(settings: Settings) -> None:
    """`ask` before its first model call: the offline checks, a ConfigurationError (exit 5) on the first ✗."""
    for check in offline_checks(settings):
        if check.name == "sandbox":
            continue  # the sandbox is started (and seeded on first use) by the executor itself
        if not check.ok:
            raise ConfigurationError(f"{check.label}: {check.detail}。{check.fix}", setting=check.name)


# --- online ---------------------------------------------------------------------------------------


def _wordpress_checks(wp_cli: WpCli) -> list[Check]:
    """The `wp` that really runs (remote for SSH), its version, WordPress answering, the sites."""
    checks: list[Check] = []
    try:
        version = wp_cli.run(["cli", "version"])
    except WpAgentError as exc:
        return [_failed("wp.connect", "WP-CLI への接続", "接続できません", exc.message_ja)]
    if version.exit_code != 0:
        missing = version.exit_code == 127 or "not found" in version.stderr
        return [
            _failed(
                "wp.binary",
                "WP-CLI（wp）",
                "wp が見つかりません"
                if missing
                else (version.stderr.strip() or f"終了コード {version.exit_code}"),
                "サーバーに WP-CLI をインストールするか、WP_CLI_BIN で実行方法を指定してください。",
            )
        ]
    checks.append(_passed("wp.binary", "WP-CLI（wp）", version.stdout.strip()))
    if isinstance(wp_cli, ReportsPhpLaunch):
        checks.append(_launch_check(wp_cli))
    core = wp_cli.run(["core", "version"])
    if core.exit_code != 0:
        checks.append(
            _failed(
                "wp.wordpress",
                "WordPress",
                _first_line(core.stderr) or "応答がありません",
                "WP_PATH（ローカルでは WP_LOCAL_PATH）が WordPress のディレクトリか、データベースが動いているか確認してください。",
            )
        )
        return checks
    checks.append(_passed("wp.wordpress", "WordPress", f"バージョン {core.stdout.strip()} が応答しました"))
    network = wp_cli.run(["core", "is-installed", "--network"])
    if network.exit_code == 0:
        sites = wp_cli.run(["site", "list", "--field=url"])
        urls = [line.strip() for line in sites.stdout.splitlines() if line.strip()]
        checks.append(_passed("wp.sites", "マルチサイトのサイト", f"{len(urls)}件: {'、'.join(urls)}"))
    else:
        checks.append(_passed("wp.sites", "マルチサイト", "単一サイトです"))
    return checks


def _launch_check(wp_cli: ReportsPhpLaunch) -> Check:
    """How PHP starts WP-CLI (with the opcache file cache or as configured); a ⚠ when the cache
    directory is unsafe or cannot be made."""
    launch = wp_cli.php_launch()
    warning = ""
    if launch.reason is LaunchReason.UNSAFE_DIR:
        warning = (
            "上記の箇所を他のユーザーが変更できない状態にするか、内容を確認してからキャッシュ用ディレクトリを"
            "削除してください（次回、所有者だけが使える 0700 で作り直します）。"
        )
    elif launch.reason is LaunchReason.NO_CACHE_DIR:
        warning = (
            f"WP-CLI を実行するユーザーのホームに ~/{CACHE_DIR_BELOW_HOME} を作成できるようにすると、"
            "コマンドが速くなります。"
        )
    return Check("wp.php_launch", "PHP の起動（opcache）", True, launch.describe_ja(), warning=warning)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _aws_table_checks(settings: Settings) -> list[Check]:
    tables = {"WP_AGENT_REGISTRY_TABLE": settings.wp_agent_registry_table}
    checks: list[Check] = []
    for variable, table in tables.items():
        if not table:
            continue
        import boto3
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            boto3.client("dynamodb").describe_table(TableName=table)
        except (BotoCoreError, ClientError) as exc:
            checks.append(
                _failed(
                    "aws.registry_table",
                    f"DynamoDB テーブル（{variable}）",
                    f"{table} を参照できません（{type(exc).__name__}）",
                    "テーブル名、AWS のリージョン・認証情報・権限（dynamodb:DescribeTable）を確認してください。",
                )
            )
        else:
            checks.append(_passed("aws.registry_table", f"DynamoDB テーブル（{variable}）", table))
    return checks


def all_checks(settings: Settings, build_wp_cli: Callable[[Settings], WpCli] | None = None) -> list[Check]:
    checks = offline_checks(settings)
    if all(check.ok for check in checks if not check.name.startswith("model.")):
        from wp_agent.executors.factory import build_wp_cli as default_build

        try:
            wp_cli = (build_wp_cli or default_build)(settings)
        except WpAgentError as exc:
            checks.append(_failed("wp.connect", "WP-CLI の準備", "準備できません", exc.message_ja))
        else:
            try:
                checks += _wordpress_checks(wp_cli)
            finally:
                wp_cli.close()
    checks += _aws_table_checks(settings)
    return checks


# --- command --------------------------------------------------------------------------------------


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="設定と接続先を点検します（AIモデルには問い合わせません）",
        description="選んだ実行モードに必要なもの（AIモデルの認証情報、SSH接続・ホスト鍵・ログイン、wp とそのバージョン、"
        "WordPress の応答、マルチサイトのサイト、サンドボックス、AWS テーブル）を点検します。"
        "終了コード: 0 すべて正常、5 設定に問題あり。",
    )
    parser.add_argument("--json", action="store_true", help="結果を JSON で標準出力に出します")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    checks = all_checks(settings)
    ok = all(check.ok for check in checks)
    if args.json:
        print(json.dumps({"ok": ok, "mode": settings.wp_cli_mode.value, "checks": [asdict(c) for c in checks]},
                         ensure_ascii=False))  # fmt: skip
    else:
        print(f"実行モード: {settings.wp_cli_mode.value}（WP_CLI_MODE）")
        for check in checks:
            print(check.line())
            if not check.ok:
                print(f"    対処: {check.fix}")
            elif check.warning:
                print(f"    注意: {check.warning}")
        print(
            "すべて正常です。" if ok else "問題があります。上の「対処」を確認してください。", file=sys.stderr
        )
    return ExitCode.OK if ok else ExitCode.CONFIGURATION
