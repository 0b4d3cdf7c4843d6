"""The site's options: what a changed setting does to the site."""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.masking import is_secret_name
from wp_agent.policy.approval_summary.common import IRREVERSIBLE, read_json
from wp_agent.policy.site_reads import StateReader

_IMPACT_BY_OPTION = {
    "siteurl": "サイトのURLが変わり、設定を誤るとサイトや管理画面にアクセスできなくなります。",
    "home": "サイトのURLが変わり、設定を誤るとサイトにアクセスできなくなります。",
    "blogname": "サイト名が変わり、全ページの表示に反映されます。",
    "blogdescription": "サイトのキャッチフレーズが変わります。",
    "users_can_register": "誰でもユーザー登録できるかどうかが変わります。",
    "default_role": "新規登録ユーザーの権限が変わります（管理者にすると重大な危険があります）。",
    "permalink_structure": "全ての記事のURLが変わり、既存のリンクが切れる可能性があります。",
    "ping_sites": "記事を公開するたびに、WordPressがここに書かれたURLへ更新通知を送信します。",
}


def option(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    key_at = 1 if path == ("option", "patch") else 0  # patch <action> <key> …
    if len(args) <= key_at:
        return None
    key = args[key_at]
    impact = _IMPACT_BY_OPTION.get(key, "サイト全体の動作に影響する可能性があります。")
    if path == ("option", "patch"):  # patch <insert|update|delete> <key> <key-path>... [<value>]
        action, rest = args[0], args[2:]
        value = rest[-1] if action != "delete" and len(rest) > 1 else None
        where = " > ".join(rest[:-1] if value is not None else rest) or "?"
        verb = {"insert": "を追加", "update": "を変更", "delete": "を削除"}.get(
            action, f"に「{action}」を実行"
        )
        shown = f"に値「{value}」" if value is not None else ""
        return f"サイト設定「{key}」の項目「{where}」{shown}{verb}します", impact
    args = args[key_at:]
    if path[1] == "delete":
        missing, note = _missing_options(read, args), ""
        if missing:
            present = [k for k in args if k not in missing]
            note = f"設定「{'」「'.join(missing)}」はこのサイトにないため、削除されません。"
            if not present:
                return (
                    f"サイト設定「{'」「'.join(args)}」を削除します（存在しないため変更はありません）",
                    note,
                )
            args = present
        keys = "」「".join(args)
        impacts = "".join(
            dict.fromkeys(
                _IMPACT_BY_OPTION.get(k, "サイト全体の動作に影響する可能性があります。") for k in args
            )
        )
        return f"サイト設定「{keys}」を削除します", impacts + "削除した値は" + IRREVERSIBLE + note
    before = read(["option", "get", key]) if read is not None and not is_secret_name(key) else None
    was = f"「{before.strip()}」から" if before is not None and len(before.strip()) <= 200 else ""
    value = f"{was}「{args[1]}」に" if len(args) > 1 else ""
    return f"サイト設定「{key}」を{value}変更します", impact


def _missing_options(read: StateReader | None, keys: list[str]) -> list[str]:
    """The keys the site has no option for (none when it cannot be read)."""
    missing = []
    for key in keys[:10]:
        rows = read_json(read, ["option", "list", f"--search={key}", "--fields=option_name", "--format=json"])
        if not isinstance(rows, list):
            return []
        names = {str(r.get("option_name", "")).casefold() for r in rows if isinstance(r, dict)}
        if key.casefold() not in names:
            missing.append(key)
    return missing
