"""Posts, comments, menus and meta: to the trash, or gone for good (as the site's state decides)."""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.approval_summary.common import (
    DELETES,
    IRREVERSIBLE,
    IRREVERSIBLE_PATHS,
    POST_RECREATED_ONLY,
    POST_STATUSES,
    listed,
    read_json,
)
from wp_agent.policy.site_reads import StateReader


def post_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    ids = [a for a in args if a.isdigit()]
    rows = read_json(read, ["post", "list", f"--post__in={','.join(ids)}", "--post_type=any",
                        f"--post_status={POST_STATUSES}", "--fields=ID,post_status,post_type",
                        "--format=json"]) if ids and len(ids) == len(args) else None  # fmt: skip
    state = (
        {str(r.get("ID")): (r.get("post_status"), r.get("post_type")) for r in rows if isinstance(r, dict)}
        if isinstance(rows, list)
        else None
    )
    files = [i for i in ids if state is not None and state.get(i, (None, None))[1] == "attachment"]
    files_note = (
        f"ID {listed(files)} はメディア（添付ファイル）のため、サーバー上の画像などのファイルも全て削除され、"
        "元に戻す操作（undo）でも戻せません。"
        if files
        else ""
    )
    if parsed.has_flag("force"):
        if state is None:
            return (
                f"投稿（ID: {listed(args)}）を完全に削除します",
                "ゴミ箱を経由せずに削除するため、" + IRREVERSIBLE + POST_RECREATED_ONLY
                + "メディア（添付ファイル）であれば、そのファイルも削除されます。",
            )  # fmt: skip
        missing = [i for i in ids if i not in state]
        gone = [i for i in ids if i in state]
        text = f"投稿（ID: {listed(gone)}）を完全に削除します" if gone else "削除される投稿はありません"
        if missing:
            text += f"（ID {listed(missing)} は見つかりません）"
        return text, ("ゴミ箱を経由せずに削除するため、" + IRREVERSIBLE + POST_RECREATED_ONLY + files_note)
    if state is None:
        return (
            f"投稿（ID: {listed(args)}）をゴミ箱へ移動します（既にゴミ箱にあるものは完全に削除されます）",
            "現在の状態を確認できませんでした。ゴミ箱にある投稿は完全に削除され、"
            + IRREVERSIBLE
            + POST_RECREATED_ONLY
            + "それ以外はゴミ箱から復元できます。",
        )
    gone = [i for i in ids if state.get(i, (None, None))[0] == "trash"]
    trashed = [i for i in ids if i not in gone and state.get(i, (None, None))[1] in {"post", "page"}]
    refused = [i for i in ids if i not in gone and i not in trashed]
    parts, impacts = [], []
    if gone:
        parts.append(f"ID {listed(gone)} はゴミ箱にあるため完全に削除")
        impacts.append(f"ID {listed(gone)} は" + IRREVERSIBLE + POST_RECREATED_ONLY)
    if trashed:
        parts.append(f"ID {listed(trashed)} はゴミ箱へ移動")
        impacts.append(f"ID {listed(trashed)} はゴミ箱から復元できますが、サイトからは見えなくなります。")
    if refused:
        parts.append(f"ID {listed(refused)} は削除されません（見つからないか、ゴミ箱に入れられない種類）")
    if gone and not trashed and not refused:
        return (
            f"投稿（ID: {listed(gone)}）を完全に削除します（既にゴミ箱にあるため）",
            IRREVERSIBLE + POST_RECREATED_ONLY,
        )
    if trashed and not gone and not refused:
        return (
            f"投稿（ID: {listed(trashed)}）をゴミ箱へ移動します",
            "ゴミ箱から復元できますが、サイトからは見えなくなります。",
        )
    return "投稿を削除します: " + "、".join(parts), " ".join(impacts) or "変更されるものはありません。"


def comment_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    if parsed.has_flag("force"):
        return (
            f"コメント（ID: {listed(args)}）を完全に削除します",
            "ゴミ箱を経由せずに削除するため、" + IRREVERSIBLE,
        )
    statuses = {}
    for comment_id in args[:20]:
        row = read_json(
            read, ["comment", "get", comment_id, "--fields=comment_ID,comment_approved", "--format=json"]
        )
        if isinstance(row, dict):
            statuses[comment_id] = str(row.get("comment_approved"))
    if len(statuses) != len(args):
        return (
            f"コメント（ID: {listed(args)}）をゴミ箱へ移動します（ゴミ箱・スパムにあるものは完全に削除されます）",
            "現在の状態を確認できませんでした。ゴミ箱・スパムのコメントは完全に削除され、" + IRREVERSIBLE,
        )
    gone = [i for i in args if statuses[i] in {"trash", "spam"}]
    if gone:
        return (
            f"コメント（ID: {listed(args)}）を削除します（ID {listed(gone)} はゴミ箱・スパムにあるため完全に削除）",
            f"ID {listed(gone)} は" + IRREVERSIBLE,
        )
    return (
        f"コメント（ID: {listed(args)}）をゴミ箱へ移動します",
        "ゴミ箱から復元できますが、サイトからは見えなくなります。",
    )


def menu_item_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    """Named with their titles as the site has them (the turn refused IDs that are not menu items)."""
    rows = read_json(read, ["post", "list", f"--post__in={','.join(args)}", "--post_type=nav_menu_item",
                        "--post_status=any", "--fields=ID,post_title", "--format=json"])  # fmt: skip
    titles = (
        {str(r.get("ID")): str(r.get("post_title") or "") for r in rows if isinstance(r, dict)}
        if isinstance(rows, list)
        else {}
    )
    named = [f"{i}{f'「{titles[i]}」' if titles.get(i) else ''}" for i in args]
    return (
        f"メニュー項目（ID: {listed(named)}）を削除します",
        "メニューからリンクが外れ、残りの項目の並び順が詰められます（リンク先の投稿やページは削除されません）。"
        + IRREVERSIBLE,
    )


def meta_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    """`<post|term|user> meta delete <id> [<key> [<value>]] [--all]`: whose fields, which keys."""
    if not args:
        return None
    kind = {"post": "投稿", "term": "カテゴリ・タグ", "user": "ユーザー"}.get(path[0], "対象")
    whose = f"{kind}（ID: {args[0]}）"
    impact = DELETES.get(path) or IRREVERSIBLE_PATHS.get(path, "")
    if parsed.has_flag("all"):
        rows = read_json(read, [*path[:2], "list", args[0], "--fields=meta_key", "--format=json"])
        keys = (
            sorted({str(r.get("meta_key")) for r in rows if isinstance(r, dict)})
            if isinstance(rows, list)
            else None
        )
        if keys == []:
            return (
                f"{whose}のカスタムフィールドを全て削除します（現在はありません）",
                "変更されるものはありません。",
            )
        named = f"（{listed(keys)}）" if keys else "（現在のキーは確認できませんでした）"
        return f"{whose}のカスタムフィールドを全て{named}削除します", impact
    if len(args) < 2:
        return None
    only = f"のうち値が「{args[2]}」のもの" if len(args) > 2 else ""
    return f"{whose}のカスタムフィールド「{args[1]}」{only}を削除します", impact


def menu_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    """Menus by ID, name or slug, named as the site has them, with how many items go with each."""
    rows = read_json(read, ["menu", "list", "--fields=term_id,name,slug,count", "--format=json"])
    menus = [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
    named = []
    for ref in args:
        found = next((m for m in menus if ref in (str(m.get("term_id")), m.get("name"), m.get("slug"))), None)
        named.append(
            f"「{found.get('name')}」（ID {found.get('term_id')}、項目 {found.get('count')} 個）"
            if found
            else f"「{ref}」"
        )
    return (
        f"メニュー{'、'.join(named)}を削除します",
        "メニューと全てのメニュー項目が削除されます。" + IRREVERSIBLE,
    )


def comment_trash(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    return (
        f"コメント（ID: {listed(args)}）をゴミ箱へ移動します",
        "ゴミ箱から復元できますが、サイトからは見えなくなります。",
    )
