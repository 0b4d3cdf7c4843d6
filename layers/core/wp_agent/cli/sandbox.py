"""`wp-agent sandbox status|start|reset|stop`: the local sandbox WordPress that WP_CLI_MODE=sandbox uses."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from wp_agent.cli import terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.config import CliSettings

if TYPE_CHECKING:
    pass

_ACTIONS = {
    "install": "必要なもの（PHP・MariaDB・WordPress の Debian パッケージ、WP-CLI）を入れて起動します（apt-get: root か sudo）",
    "status": "状態を表示します（何も変更しません）",
    "start": "データベースを起動し、初回はサンプルデータを投入します",
    "reset": "サンプルデータの状態に戻します（加えた変更はすべて消えます）",
    "stop": "データベースを停止します（ファイルとデータは残ります）",
}


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "sandbox",
        help="サンドボックス（サンプルデータ入りのローカルWordPress）の状態確認・初期化",
        description="サンドボックス: 日本語のサンプルデータ入りの本物のローカルWordPress（WP_CLI_MODE=sandbox）。"
        + " / ".join(f"{name}: {text}" for name, text in _ACTIONS.items()),
    )
    parser.add_argument(
        "action",
        choices=list(_ACTIONS),
        help="install（導入）| status（状態）| start（起動）| reset（初期化）| stop（停止）",
    )
    parser.add_argument(
        "--phar",
        type=Path,
        metavar="FILE",
        help="install: 手元の WP-CLI phar を使います（SHA-512 を確認。既定: WP_CLI_PHAR、なければ公式サイトから取得）",
    )
    parser.add_argument("--no-start", action="store_true", help="install: 入れるだけで起動しません")
    parser.set_defaults(handler=run)


def _install(home: Path, phar: Path | None, *, start: bool) -> None:
    """Debian packages that are missing, the verified WP-CLI, WordPress, then the sandbox started (and
    seeded) on the release just fetched (the site is made after the fetch: it runs the chosen release)."""
    from wp_agent.sandbox import SandboxSite, install
    from wp_agent.sandbox.wp_cli import PHAR_ENV

    say = terminal.err.line
    packages = install.missing_packages()
    if packages:
        say(f"サンドボックス用のパッケージを apt-get で入れます: {' '.join(packages)}")
        install.install_packages(packages, say)
    configured = os.environ.get(PHAR_ENV)
    install.install_phar(phar or (Path(configured).expanduser() if configured else None), say)
    _fetch_wordpress(say)
    if not start:
        return
    site = SandboxSite(home)
    if not site.status().seed:
        say("サンドボックスを準備しています（初回のみ、1分ほどかかることがあります）…")
    site.start()


def _fetch_wordpress(say: Callable[[str], None]) -> None:
    """The current WordPress from Debian's archive; without the archive, the system's (said so)."""
    from wp_agent.sandbox import SandboxError, release

    try:
        release.fetch_release(say)
    except SandboxError as exc:
        fallback = release.chosen_release()  # what the sandbox runs without this fetch
        say(
            f"{exc.message_ja} サンドボックスは {fallback.describe_ja()}で動かします"
            f"（後で `wp-agent sandbox install` をもう一度実行すると取得します）。"
        )


def run(args: argparse.Namespace, settings: CliSettings) -> int:
    # Imported here: the sandbox is local-only code (MariaDB, PHP) that other commands never need.
    from wp_agent.executors.sandbox import DEFAULT_SANDBOX_DIR
    from wp_agent.sandbox import SandboxError, SandboxSite

    site = SandboxSite(Path(settings.wp_agent_sandbox_site or DEFAULT_SANDBOX_DIR))
    try:
        if args.action == "install":
            _install(site.home, args.phar, start=not args.no_start)
            terminal.out.line(
                "サンドボックスに必要なものを入れました（起動は wp-agent sandbox start）。"
                if args.no_start
                else f"サンドボックスを使えるようにしました: {site.home}"
            )
        elif args.action == "status":
            for line in site.status().lines_ja():
                terminal.out.line(line)
        elif args.action == "start":
            if not site.status().seed:
                terminal.err.line("サンドボックスを準備しています（初回のみ、1分ほどかかることがあります）…")
            site.start()
            terminal.out.line(f"サンドボックスを起動しました: {site.home}")
        elif args.action == "reset":
            seconds = site.reset()
            terminal.out.line(f"サンドボックスをサンプルデータの状態に戻しました（{seconds:.1f}秒）。")
        else:
            stopped = site.stop()
            terminal.out.line(
                "サンドボックスのデータベースを停止しました。"
                if stopped
                else "サンドボックスは起動していません。"
            )
    except SandboxError as exc:
        terminal.err.line(f"サンドボックスエラー [{exc.cause}]: {exc.message_ja}")
        if exc.log:
            terminal.err.line(exc.log)
        return ExitCode.CONFIGURATION
    return ExitCode.OK
