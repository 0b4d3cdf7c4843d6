"""Before the first model call (and before `sites add` keeps a site): can we log in, is `wp` there, is
WordPress there? One `wp core version` over the same executor the run then uses (over SSH, its pooled
connection), so an unreachable site costs no model call and is said in one Japanese line."""

from __future__ import annotations

import shlex
import shutil

from wp_agent.cli import failures
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.site_book import NamedSite
from wp_agent.config import LocalAgentSettings, WpCliMode
from wp_agent.errors import WpAgentError
from wp_agent.executors.port import WpCli
from wp_agent.program import command_name

_NOT_FOUND_EXIT = 127


def wordpress_version(wp_cli: WpCli, settings: LocalAgentSettings, site: NamedSite | None) -> str:
    """WordPress's version as the site answers it; a CliError saying what is wrong and what to do."""
    local_program = (shlex.split(settings.wp_cli_bin) or ["wp"])[0]
    if settings.wp_cli_mode is WpCliMode.LOCAL and shutil.which(local_program) is None:
        raise _wp_cli_missing(settings, site)
    try:
        result = wp_cli.run(["core", "version"])
    except WpAgentError as exc:
        raise _connection_failure(exc, site) from None
    if result.exit_code == 0:
        return result.stdout.strip()
    if result.exit_code == _NOT_FOUND_EXIT or "not found" in result.stderr:
        raise _wp_cli_missing(settings, site)
    path = settings.wp_path if settings.wp_cli_mode is WpCliMode.SSH else str(settings.wp_local_path)
    option = (
        "--wp-path"
        if site is not None and site.kind == "ssh"
        else "--local"
        if site
        else _path_variable(settings)
    )
    if "does not seem to be a WordPress installation" in result.stderr:
        raise failures.configuration(
            "WORDPRESS_NOT_FOUND",
            f"{path} に WordPress が見つかりません。WordPress のディレクトリ（wp-config.php のある場所）を {option} で指定してください。",
        )
    first = next((line.strip() for line in result.stderr.splitlines() if line.strip()), "")
    raise failures.configuration(
        "WORDPRESS_UNAVAILABLE",
        f"{path} の WordPress が応答しません（終了コード {result.exit_code}: {first[:200]}）。"
        f"{command_name()} doctor で点検してください。",
    )


def _wp_cli_missing(settings: LocalAgentSettings, site: NamedSite | None) -> failures.CliError:
    where = "サーバー" if settings.wp_cli_mode is WpCliMode.SSH else "このコンピューター"
    wp_bin = "--wp-bin" if site is not None else "WP_CLI_BIN"
    return failures.configuration(
        "WP_CLI_NOT_FOUND",
        f"{where}で WP-CLI（{settings.wp_cli_bin}）が見つかりません。WP-CLI をインストールして PATH に入れるか、"
        f'{wp_bin} で実行方法（例: "php /path/to/wp-cli.phar"）を指定してください。',
    )


def _path_variable(settings: LocalAgentSettings) -> str:
    return "WP_PATH" if settings.wp_cli_mode is WpCliMode.SSH else "WP_LOCAL_PATH"


def _connection_failure(exc: WpAgentError, site: NamedSite | None) -> failures.CliError:
    """The executor's own Japanese message; for a named site a changed host key is fixed with
    `sites trust` after checking the new fingerprint (not by an environment variable)."""
    message = exc.message_ja
    details = exc.details or {}
    if site is not None and details.get("cause") == "host_key_mismatch":
        presented = details.get("presented", "")
        message = (
            f"{site.host}:{site.port} のSSHホスト鍵が登録した鍵と一致しないため接続しませんでした（なりすましの"
            f"可能性があります）。登録した鍵: {'、'.join(details.get('expected', []))} ／ サーバーの鍵: {presented}。"
            "サーバーの鍵を正当に変更した場合は、サーバーで指紋を確かめてから "
            f"{command_name()} sites trust {site.name} で新しい鍵を固定してください（ほかの設定はそのままです）。"
        )
    return failures.CliError(ExitCode.FAILED, exc.code.value, message, error_details=details)


def sandbox_ready(settings: LocalAgentSettings) -> None:
    """In sandbox mode, what the sandbox needs is on this machine; else the one command that installs it."""
    if settings.wp_cli_mode is not WpCliMode.SANDBOX:
        return
    from wp_agent.sandbox.install import missing_parts

    missing = missing_parts()
    if missing:
        raise failures.configuration(
            "SANDBOX_NOT_INSTALLED",
            f"サンドボックス（お試し用のローカルWordPress）に必要な {'・'.join(missing)} がありません。"
            f"{command_name()} sandbox install で入れてください（apt-get を使うため root か sudo が必要です）。"
            f"自分のサイトで使うときは {command_name()} sites add で登録します。",
        )


def site_answers(wp_cli: WpCli, settings: LocalAgentSettings, site: NamedSite | None) -> None:
    """SSH or local: log in and find WordPress before anything is paid for (the sandbox was prepared
    when its executor was built)."""
    if settings.wp_cli_mode is not WpCliMode.SANDBOX:
        wordpress_version(wp_cli, settings, site)
