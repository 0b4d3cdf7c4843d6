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
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import date
from pathlib import Path

from wp_agent import clock
from wp_agent.cli import site_choice, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.site_book import NamedSite
from wp_agent.config import CliSettings, ModelProvider, WpCliMode
from wp_agent.diagnostics.checks import Check, failed, passed, wordpress_checks
from wp_agent.errors import ConfigurationError, WpAgentError
from wp_agent.executors.code_guard import unguarded
from wp_agent.executors.media_staging import FileStager
from wp_agent.executors.port import WpCli
from wp_agent.model_catalog import model_info, retirement_warning

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


def model_lifetime_check(settings: CliSettings, today: date | None = None) -> Check:
    """The configured model against the retirement dates kept in the repo (model_catalog.json)."""
    model = settings.anthropic_model
    today = today or clock.today()
    warning = retirement_warning(model, today)
    info = model_info(model)
    detail = model
    if info is not None and info.retires is not None:
        retired = info.retires < today
        detail = f"{model}（{'提供終了' if retired else '提供終了予定'} {info.retires.isoformat()}）"
    return Check("model.retirement", "AIモデルの提供期間", True, detail, warning=warning or "")


def model_checks(settings: CliSettings) -> list[Check]:
    return [*_credential_checks(settings), model_lifetime_check(settings)]


def _bedrock_checks() -> list[Check]:
    checks = []
    region = _aws_region()
    checks.append(
        passed("model.bedrock_region", "Amazon Bedrock のリージョン", region)
        if region
        else failed(
            "model.bedrock_region",
            "Amazon Bedrock のリージョン",
            "リージョンが設定されていません",
            "AWS_REGION（例: export AWS_REGION=ap-northeast-1）を設定してください。",
        )
    )
    checks.append(
        passed("model.bedrock_credentials", "Amazon Bedrock の認証情報", "AWS の認証情報があります")
        if _aws_credentials_found()
        else failed(
            "model.bedrock_credentials",
            "Amazon Bedrock の認証情報",
            "AWS の認証情報が見つかりません",
            "AWS_ACCESS_KEY_ID と AWS_SECRET_ACCESS_KEY、または AWS_PROFILE（~/.aws/credentials）を設定してください。",
        )
    )
    return checks


def _credential_checks(settings: CliSettings) -> list[Check]:
    label = "AIモデルの認証情報"
    if settings.wp_agent_model_provider is ModelProvider.BEDROCK:
        from botocore.exceptions import BotoCoreError

        try:
            return _bedrock_checks()
        except BotoCoreError as exc:  # a profile that is not there, a credential process that fails, …
            return [
                failed(
                    "model.bedrock_credentials",
                    "Amazon Bedrock の認証情報",
                    f"AWS の認証情報を読めません（{type(exc).__name__}）",
                    "AWS_PROFILE の名前、~/.aws/config と ~/.aws/credentials、または AWS_ACCESS_KEY_ID と "
                    "AWS_SECRET_ACCESS_KEY の組を確認してください（SSO なら aws sso login）。",
                )
            ]
    if settings.anthropic_api_key is not None and settings.anthropic_api_key.get_secret_value():
        return [passed("model.api_key", label, "ANTHROPIC_API_KEY が設定されています")]
    if settings.anthropic_api_key_secret_arn:
        return [
            passed("model.api_key", label, "Secrets Manager から取得します（ANTHROPIC_API_KEY_SECRET_ARN）")
        ]
    return [
        failed(
            "model.api_key",
            label,
            "ANTHROPIC_API_KEY が設定されていません",
            "`export ANTHROPIC_API_KEY=sk-ant-...` を設定してください（Amazon Bedrock を使う場合は "
            "WP_AGENT_MODEL_PROVIDER=bedrock と AWS の認証情報・リージョン）。",
        )
    ]


# --- where WP-CLI runs (offline part) -------------------------------------------------------------


def _ssh_offline_checks(settings: CliSettings) -> list[Check]:
    from wp_agent.executors.ssh_keys import KeyMethod, configured_key_method, load_ssh_credentials

    if not settings.vps_host:
        return [
            failed(
                "ssh.host",
                "SSH接続先",
                "VPS_HOST が設定されていません",
                "VPS_HOST（接続先ホスト）を設定してください。",
            )
        ]
    checks = [
        passed("ssh.host", "SSH接続先", f"{settings.vps_ssh_user}@{settings.vps_host}:{settings.vps_port}")
    ]
    try:
        method = configured_key_method(settings)
    except WpAgentError as exc:
        return [
            *checks,
            failed("ssh.private_key", "SSH秘密鍵", "取得方法の設定が正しくありません", exc.message_ja),
        ]
    if method not in (KeyMethod.FILE, KeyMethod.ENV_BASE64, KeyMethod.AGENT):
        # The key lives in a secret store: reading it is a network call, made by the online checks.
        return [*checks, passed("ssh.private_key", "SSH秘密鍵", f"{method.value} から取得します")]
    try:
        credentials = load_ssh_credentials(settings)
    except WpAgentError as exc:
        is_host_key = "ホスト鍵" in exc.message_ja
        name, label = (
            ("ssh.host_key", "SSHホスト鍵（固定）") if is_host_key else ("ssh.private_key", "SSH秘密鍵")
        )
        if is_host_key:
            checks.append(passed("ssh.private_key", "SSH秘密鍵", "読み込めました"))
        return [*checks, failed(name, label, "読み込めません", exc.message_ja)]
    return [
        *checks,
        passed("ssh.private_key", "SSH秘密鍵", credentials.client_fingerprint),
        passed("ssh.host_key", "SSHホスト鍵（固定）", "、".join(credentials.host_fingerprints)),
    ]


def _local_offline_checks(settings: CliSettings) -> list[Check]:
    checks: list[Check] = []
    path = settings.wp_local_path
    if path is None or not path.expanduser().is_dir():
        checks.append(
            failed(
                "local.path",
                "WordPress のディレクトリ",
                "WP_LOCAL_PATH が設定されていないか、ディレクトリではありません",
                "WP_LOCAL_PATH に WordPress のディレクトリ（wp-config.php のある場所）を設定してください。",
            )
        )
    else:
        checks.append(passed("local.path", "WordPress のディレクトリ", str(path)))
    program = (shlex.split(settings.wp_cli_bin) or ["wp"])[0]
    found = shutil.which(program)
    checks.append(
        passed("local.wp_binary", "WP-CLI（wp）", found)
        if found
        else failed(
            "local.wp_binary",
            "WP-CLI（wp）",
            f"{program} が見つかりません",
            'WP-CLI をインストールするか、WP_CLI_BIN に実行方法（例: "php /path/to/wp-cli.phar"）を設定してください。',
        )
    )
    return checks


def _sandbox_offline_checks(settings: CliSettings) -> list[Check]:
    from wp_agent.executors.sandbox import DEFAULT_SANDBOX_DIR
    from wp_agent.sandbox import SandboxError, SandboxSite

    site = SandboxSite(Path(settings.wp_agent_sandbox_site or DEFAULT_SANDBOX_DIR))
    try:
        status = site.status()
    except SandboxError as exc:
        return [failed("sandbox", "サンドボックス", exc.cause, exc.message_ja)]
    detail = " / ".join(status.lines_ja()[:2])
    return [passed("sandbox", "サンドボックス", detail)]


def offline_checks(settings: CliSettings) -> list[Check]:
    """Everything that can be checked without a network round trip."""
    checks = model_checks(settings)
    if settings.wp_cli_mode is WpCliMode.SSH:
        checks += _ssh_offline_checks(settings)
    elif settings.wp_cli_mode is WpCliMode.LOCAL:
        checks += _local_offline_checks(settings)
    else:
        checks += _sandbox_offline_checks(settings)
    return checks


def preflight(settings: CliSettings, *, model: bool = True, site: NamedSite | None = None) -> None:
    """`ask` before its first model call: the offline checks, a ConfigurationError (exit 5) on the
    first ✗. `model=False`: a run that calls no model (an MCP client's held call) needs no credentials.
    On a named site the fix names its `sites add` options, not the environment's variables."""
    for check in offline_checks(settings):
        if check.name == "sandbox":
            continue  # the sandbox is started (and seeded on first use) by the executor itself
        if not model and check.name.startswith("model."):
            continue
        if not check.ok:
            fix = site.in_site_terms(check.fix) if site is not None else check.fix
            raise ConfigurationError(f"{check.label}: {check.detail}。{fix}", setting=check.name)


# --- online ---------------------------------------------------------------------------------------


def _aws_table_checks(settings: CliSettings) -> list[Check]:
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
                failed(
                    "aws.registry_table",
                    f"DynamoDB テーブル（{variable}）",
                    f"{table} を参照できません（{type(exc).__name__}）",
                    "テーブル名、AWS のリージョン・認証情報・権限（dynamodb:DescribeTable）を確認してください。",
                )
            )
        else:
            checks.append(passed("aws.registry_table", f"DynamoDB テーブル（{variable}）", table))
    return checks


def all_checks(
    settings: CliSettings, build_wp_cli: Callable[[CliSettings], WpCli] | None = None
) -> list[Check]:
    checks = offline_checks(settings)
    if all(check.ok for check in checks if not check.name.startswith("model.")):
        from wp_agent.executors.factory import build_wp_cli as default_build

        try:
            wp_cli = (build_wp_cli or default_build)(settings)
        except WpAgentError as exc:
            checks.append(failed("wp.connect", "WP-CLI の準備", "準備できません", exc.message_ja))
        else:
            try:
                found = wordpress_checks(wp_cli)
                checks += found
                if all(check.ok for check in found):
                    checks += _health_checks(wp_cli, settings.health_connect)
            finally:
                wp_cli.close()
    checks += _aws_table_checks(settings)
    return checks


def _health_checks(wp_cli: WpCli, connect: str | None) -> list[Check]:
    """The site as its visitors and administrators see it (diagnostics/health.py), fetched by the server
    itself; the sandbox's site is served over loopback HTTP for the probe's time."""
    from wp_agent.diagnostics.health import health_checks, probe
    from wp_agent.executors.code_guard import fixed
    from wp_agent.executors.sandbox import SandboxWpCli, served_site

    wp_cli = unguarded(wp_cli)
    if not isinstance(wp_cli, FileStager):
        return []
    serving = served_site(wp_cli.site) if isinstance(wp_cli, SandboxWpCli) else fixed(connect)
    with serving() as address:
        return health_checks(probe(wp_cli, wp_cli, connect=address))


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
    site_choice.add_site_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: CliSettings) -> int:
    choice = getattr(args, "site_choice", None)
    site = choice.site if choice is not None else None
    checks = all_checks(settings)
    if site is not None:  # its fixes in the site's terms (`sites add` options, not variables)
        checks = [
            check if check.ok else replace(check, fix=site.in_site_terms(check.fix)) for check in checks
        ]
    ok = all(check.ok for check in checks)
    if args.json:
        terminal.out.json(json.dumps({"ok": ok, "mode": settings.wp_cli_mode.value, "site": site.name if site else None,
                                      "checks": [asdict(c) for c in checks]}, ensure_ascii=False))  # fmt: skip
    else:
        where = f"サイト「{site.name}」（{site.describe()}）" if site is not None else "環境変数の設定"
        terminal.out.line(f"実行モード: {settings.wp_cli_mode.value}（{where}）")
        for check in checks:
            terminal.out.line(check.line())
            if not check.ok:
                terminal.out.line(f"    対処: {check.fix}")
            elif check.warning:
                terminal.out.line(f"    注意: {check.warning}")
        terminal.err.line("すべて正常です。" if ok else "問題があります。上の「対処」を確認してください。")
    return ExitCode.OK if ok else ExitCode.CONFIGURATION
