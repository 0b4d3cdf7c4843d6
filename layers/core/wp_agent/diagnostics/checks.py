"""A check's result, and the checks of WordPress through a WP-CLI executor (the `wp` that really
runs, its version, WordPress answering, the multisite sites)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wp_agent.errors import WpAgentError
from wp_agent.executors.php_launch import CACHE_DIR_BELOW_HOME, LaunchReason
from wp_agent.executors.port import CommandResult, ReportsPhpLaunch, WpCli, first_line


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


def passed(name: str, label: str, detail: str = "") -> Check:
    return Check(name, label, True, detail)


def failed(name: str, label: str, detail: str, fix: str) -> Check:
    return Check(name, label, False, detail, fix)


class _UnansweredError(Exception):
    def __init__(self, error: WpAgentError) -> None:
        self.error = error


def _run(wp_cli: WpCli, argv: Sequence[str]) -> CommandResult:
    try:
        return wp_cli.run(list(argv))
    except WpAgentError as exc:
        raise _UnansweredError(exc) from exc


def wordpress_checks(wp_cli: WpCli) -> list[Check]:
    """The `wp` that really runs (remote for SSH), its version, WordPress answering, the sites. A
    command that gets no answer (connection lost, timeout) ends the checks with its reason."""
    checks: list[Check] = []
    try:
        version = _run(wp_cli, ["cli", "version"])
        if version.exit_code != 0:
            missing = version.exit_code == 127 or "not found" in version.stderr
            return [
                failed(
                    "wp.binary",
                    "WP-CLI（wp）",
                    "wp が見つかりません"
                    if missing
                    else (first_line(version.stderr) or f"終了コード {version.exit_code}"),
                    "サーバーに WP-CLI をインストールするか、WP_CLI_BIN で実行方法を指定してください。",
                )
            ]
        checks.append(passed("wp.binary", "WP-CLI（wp）", version.stdout.strip()))
        if isinstance(wp_cli, ReportsPhpLaunch):
            checks.append(_launch_check(wp_cli))
        core = _run(wp_cli, ["core", "version"])
        if core.exit_code != 0:
            checks.append(
                failed(
                    "wp.wordpress",
                    "WordPress",
                    first_line(core.stderr) or "応答がありません",
                    "WP_PATH（ローカルでは WP_LOCAL_PATH）が WordPress のディレクトリか、データベースが動いているか確認してください。",
                )
            )
            return checks
        checks.append(passed("wp.wordpress", "WordPress", f"バージョン {core.stdout.strip()} が応答しました"))
        network = _run(wp_cli, ["core", "is-installed", "--network"])
        if network.exit_code == 0:
            sites = _run(wp_cli, ["site", "list", "--field=url"])
            urls = [line.strip() for line in sites.stdout.splitlines() if line.strip()]
            checks.append(passed("wp.sites", "マルチサイトのサイト", f"{len(urls)}件: {'、'.join(urls)}"))
        else:
            checks.append(passed("wp.sites", "マルチサイト", "単一サイトです"))
    except _UnansweredError as unanswered:
        if checks:
            checks.append(
                failed("wp.answer", "WP-CLI の応答", "応答がありません", unanswered.error.message_ja)
            )
        else:
            checks.append(
                failed("wp.connect", "WP-CLI への接続", "接続できません", unanswered.error.message_ja)
            )
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
