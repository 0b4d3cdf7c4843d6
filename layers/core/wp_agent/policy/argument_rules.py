"""Argument-level rules: flags and values that make an allowed command destructive or blocked."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.masking import is_secret_name
from wp_agent.policy.parsed_command import ParsedCommand

B = PolicyCategory.BLOCKED
D = PolicyCategory.DESTRUCTIVE


@dataclass(frozen=True)
class Verdict:
    category: PolicyCategory
    rule: str
    reason_ja: str
    pattern: str


# FR-5.3 important option keys (plus admin_email and theme/plugin switches that act like them).
IMPORTANT_OPTION_KEYS = frozenset(
    {
        "siteurl",
        "home",
        "blogname",
        "blogdescription",
        "users_can_register",
        "default_role",
        "permalink_structure",
        "admin_email",
        "active_plugins",
        "template",
        "stylesheet",
    }
)
# Global WP-CLI parameters that run code, reach other hosts or escape the configured install.
FORBIDDEN_GLOBALS = {
    "exec": "任意のPHPコードを実行するオプション（--exec）は使用できません",
    "require": "任意のPHPファイルを読み込むオプション（--require）は使用できません",
    "ssh": "別のサーバーへ接続するオプション（--ssh）は使用できません",
    "http": "別のサイトへ接続するオプション（--http）は使用できません",
    "path": "WordPressの場所を変えるオプション（--path）は使用できません（接続先の設定で決まります）",
    "prompt": "対話入力を求めるオプション（--prompt）は使用できません",
}
SECRET_USER_FIELDS = ("user_pass", "user_activation_key")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9_\-]*$")
_DIGITS = re.compile(r"^\d+$")
_ADMIN_ROLES = {"administrator", "super-admin", "super_admin"}

Rule = Callable[[ParsedCommand, tuple[str, ...]], Verdict | None]


def _forbidden_globals(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    for option in cmd.options:
        if option.name in FORBIDDEN_GLOBALS:
            return Verdict(
                B, f"blocked.global_option.{option.name}", FORBIDDEN_GLOBALS[option.name], f"--{option.name}"
            )
    return None


def _all_tables(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    for option in cmd.options:
        if option.name.startswith("all-tables"):
            return Verdict(
                B,
                "blocked.search_replace_all_tables",
                "全テーブルを対象にする置換（--all-tables）は破壊の恐れがあるため実行できません",
                f"--{option.name}",
            )
    return None


def _secret_user_fields(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    requested = cmd.option_values("field", "fields")
    if path[0] == "user":  # `user get 1 user_pass`-style positional field names
        requested += list(cmd.args_after(path))
    for value in requested:
        lowered = value.lower()
        for secret in SECRET_USER_FIELDS:
            if secret in lowered:
                return Verdict(
                    B, "blocked.secret_field", f"パスワード等の認証情報（{secret}）は出力できません", secret
                )
    return None


def _secret_option_read(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if path not in {("option", "get"), ("option", "pluck"), ("site", "option", "get")}:
        return None
    args = cmd.args_after(path)
    if args and is_secret_name(args[0]):
        return Verdict(
            B, "blocked.secret_option", f"認証情報を含む設定（{args[0]}）は読み出せません", args[0]
        )
    return None


def _important_option(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if path not in {("option", "update"), ("option", "add"), ("option", "patch"), ("option", "delete")}:
        return None
    args = cmd.args_after(path)
    if path == ("option", "patch"):
        args = args[1:]  # patch <action> <key> …
    if args and args[0].lower() in IMPORTANT_OPTION_KEYS:
        return Verdict(
            D,
            "confirm.option.important_key",
            f"サイト設定「{args[0]}」を変更します。サイト全体に影響するため承認が必要です",
            args[0],
        )
    return None


def _bulk_flags(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if cmd.has_flag("all"):
        return Verdict(
            D,
            "confirm.flag.all",
            "全ての対象に対して一括で操作を実行します（--all）。承認が必要です",
            "--all",
        )
    if cmd.has_flag("force"):
        return Verdict(
            D,
            "confirm.flag.force",
            "確認や安全装置を省略して実行します（--force）。承認が必要です",
            "--force",
        )
    return None


def _post_content_sources(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if path not in {("post", "create"), ("post", "update")}:
        return None
    if cmd.has_flag("edit"):
        return Verdict(
            B,
            "blocked.interactive_editor",
            "エディタを起動するオプション（--edit）は使用できません",
            "--edit",
        )
    args = cmd.args_after(path)
    files = args if path == ("post", "create") else [a for a in args if not _DIGITS.match(a)]
    if files:
        return Verdict(
            B,
            "blocked.file_argument",
            "サーバー上のファイルや標準入力から本文を読み込む指定はできません。--post_content で本文を指定してください",
            files[0],
        )
    return None


def _trash_by_update(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if path == ("post", "update") and "trash" in (v.lower() for v in cmd.option_values("post_status")):
        return Verdict(
            D, "confirm.post.trash_status", "投稿をゴミ箱へ移動します。承認が必要です", "--post_status=trash"
        )
    return None


def _install_source(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if path not in {("plugin", "install"), ("theme", "install")}:
        return None
    kind = "プラグイン" if path[0] == "plugin" else "テーマ"
    if cmd.has_flag("insecure"):
        return Verdict(
            B,
            "blocked.insecure_download",
            "TLS検証を無効にするオプション（--insecure）は使用できません",
            "--insecure",
        )
    sources = cmd.args_after(path)
    if not sources:
        return None
    for source in sources:
        if not _SLUG.match(source):
            return Verdict(
                B,
                "blocked.install_source",
                f"{kind}は公式ディレクトリのスラッグでのみインストールできます（URLやZIPファイルは不可）: {source}",
                source,
            )
    if path == ("theme", "install") and cmd.has_flag("activate"):
        return Verdict(
            D,
            "confirm.theme.install_activate",
            "テーマをインストールして有効化（切り替え）します。承認が必要です",
            "--activate",
        )
    return None


def _is_public_host(host: str) -> bool:
    lowered = host.lower().rstrip(".")
    if lowered in {"localhost", "metadata.google.internal"} or lowered.endswith(
        (".localhost", ".internal", ".local")
    ):
        return False
    try:
        address = ipaddress.ip_address(lowered.strip("[]"))
    except ValueError:
        return "." in lowered  # a DNS name; single-label names usually point inside the network
    return address.is_global


def _media_source(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if path != ("media", "import"):
        return None
    for source in cmd.args_after(path):
        parts = urlsplit(source)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            return Verdict(
                B,
                "blocked.media_source",
                f"メディアは http(s) のURLからのみ取り込めます（サーバー上のファイルは不可）: {source}",
                source,
            )
        if not _is_public_host(parts.hostname):
            return Verdict(
                B,
                "blocked.media_private_host",
                f"内部ネットワークのアドレスからは取り込めません: {parts.hostname}",
                parts.hostname,
            )
    return None


def _administrator_role(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    roles: list[str] = []
    if path in {("user", "create"), ("user", "update")}:
        roles = cmd.option_values("role")
    elif path in {("user", "set-role"), ("user", "add-role")}:
        roles = list(cmd.args_after(path)[1:])
    if any(r.lower() in _ADMIN_ROLES for r in roles):
        return Verdict(
            D, "confirm.user.administrator_role", "管理者権限を付与します。承認が必要です", "administrator"
        )
    return None


def _search_replace_export(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if path == ("search-replace",) and any(o.name.startswith("export") for o in cmd.options):
        return Verdict(
            B,
            "blocked.data_export",
            "置換結果のSQL書き出し（--export）は情報漏洩の恐れがあるため実行できません",
            "--export",
        )
    return None


# Order matters only for which reason is reported first among equal categories.
ARGUMENT_RULES: tuple[Rule, ...] = (
    _forbidden_globals,
    _all_tables,
    _secret_user_fields,
    _secret_option_read,
    _post_content_sources,
    _install_source,
    _media_source,
    _search_replace_export,
    _important_option,
    _administrator_role,
    _trash_by_update,
    _bulk_flags,
)


def is_dry_run_search_replace(cmd: ParsedCommand, path: tuple[str, ...]) -> bool:
    return path == ("search-replace",) and cmd.has_flag("dry-run")
