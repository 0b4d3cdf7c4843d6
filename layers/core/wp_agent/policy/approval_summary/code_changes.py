"""Code and language: plugin and theme activation and installs, core updates, language switches, and the
guard plan (probe, keep, take back) the executors follow around them."""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.approval_summary.common import listed
from wp_agent.policy.site_reads import StateReader

# What the executors do around a change of code (executors/code_guard.py), told before it is approved.
GUARD_PLAN_JA = (
    "実行の手順: 変更前にサイト（トップページ・最新の投稿・ログイン後の管理画面・REST API・ログイン画面・PHPのエラーログ）を確認し、"
    "{kept}を控えてから変更します。変更後に同じ確認をして、悪くなっていれば"
    "自動で変更前の状態に戻し、結果を報告します。"
)


EXTENSIONS_KEPT = "対象のファイル・サイトの設定（オプション）・有効なプラグインとテーマ"


LANGUAGE_KEPT = "言語ファイル（languages フォルダ全体）・サイトの設定（オプション）とサイトの言語"


# A core update's plan: its database is backed up only for another branch (a minor one changes files).
CORE_GUARD_PLAN_JA = (
    "実行の手順: 変更前にサイト（トップページ・最新の投稿・ログイン後の管理画面・REST API・ログイン画面・PHPのエラーログ）を確認し、"
    "WordPress本体のファイル{database}をサーバー上に控えてから更新し、データベースの更新（core update-db）まで行います。"
    "変更後に同じ確認をして、悪くなっていれば自動で{back}を変更前の版に戻し、結果を報告します。"
)


def _theme_activate(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    active = (
        read(["theme", "list", "--status=active", "--field=name", "--skip-update-check"]) if read else None
    )
    was = f"「{active.strip()}」から" if active and active.strip() else ""
    if path == ("theme", "install"):
        return (
            f"テーマ「{listed(args)}」を wordpress.org からインストールし、{was}切り替えます",
            "テーマのPHPファイルがサーバーに置かれ、有効化するとそのコードが実行されます。"
            "サイトの見た目やレイアウトが変わります。ウィジェットやメニューの配置が外れることがあります。",
        )
    return (
        f"テーマを{was}「{listed(args)}」に切り替えます",
        "サイトの見た目やレイアウトが変わります。ウィジェットやメニューの配置が外れることがあります。",
    )


def language_switch(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    language = args[-1] if args else ""
    current = read(["option", "get", "WPLANG"]) if read else None
    was = f"「{current.strip() or 'en_US'}」から" if current is not None else ""
    return (
        f"サイトの言語を{was}「{language}」に切り替えます",
        "サイトを訪れる人に見える表示と、管理画面の言語が変わります（もう一度切り替えれば戻せます）。",
    )


def extension(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    """Plugins and themes put third-party code on the server; activating a plugin runs it."""
    kind = "プラグイン" if path[0] == "plugin" else "テーマ"
    names = f"{kind}「{listed(args)}」"
    network = "ネットワーク全体で" if parsed.has_flag("network", "activate-network") else ""
    if path[1] == "activate" or parsed.has_flag("activate", "activate-network"):
        verb = "インストールして" if path[1] == "install" else ""
        return (
            f"{names}を{verb}{network}有効化します",
            "有効化するとプラグイン自身のコード（有効化処理を含む）が実行され、サイトのデータが変わることがあります。"
            "何が変わるかは事前に確認できません。",
        )
    if path[1] == "install" and path[0] == "plugin":
        return (
            f"{names}を wordpress.org からインストールします（有効化はしません）",
            "プラグインのPHPファイルがサーバーに置かれ、Webから直接アクセスできるようになります。",
        )
    return None


def core_update(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    """Which release WordPress goes to: the one named, the newest fix of its branch, or the newest."""
    current = (read(["core", "version"]) or "").strip() if read else ""
    was = f"（現在 {current}）" if current else ""
    versions = parsed.option_values("version")
    if versions:
        to = f"バージョン {versions[-1]} に"
    elif parsed.has_flag("minor"):
        branch = ".".join(current.split(".")[:2]) if current else ""
        to = f"同じ系列{f'（{branch}.x）' if branch else ''}の最新の修正版に"
    else:
        to = "WordPress.org が提供している最新版に"
    return (
        f"WordPress本体{was}を{to}更新します",
        "WordPress本体のPHPファイルが新しい版に置き換わり、新しい系列への更新ではデータベースの構造も更新されます。",
    )


def core_guard_plan(parsed: ParsedCommand, read: StateReader | None) -> str:
    versions = parsed.option_values("version")
    current = (read(["core", "version"]) or "").strip() if read else ""
    same_branch = parsed.has_flag("minor") or bool(
        versions and current and versions[-1].split(".")[:2] == current.split(".")[:2]
    )
    if same_branch:
        return CORE_GUARD_PLAN_JA.format(database="とサイトの設定（オプション）", back="ファイルと設定")
    return CORE_GUARD_PLAN_JA.format(
        database="（新しい系列への更新ではデータベースの全テーブルも）", back="ファイルとデータベース"
    )


def theme_switch(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    """`theme activate`, and `theme install --activate` (an install alone is told as any install)."""
    if path == ("theme", "install") and not parsed.has_flag("activate"):
        return None
    return _theme_activate(parsed, path, args, read)
