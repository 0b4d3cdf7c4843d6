"""Users and roles: role changes, credentials, new logins, deletions and what becomes of their posts."""

from __future__ import annotations

from typing import Any

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.approval_summary.common import IRREVERSIBLE, POST_STATUSES, listed, read_json
from wp_agent.policy.site_reads import StateReader

_ROLE_RANK = {"subscriber": 0, "contributor": 1, "author": 2, "editor": 3, "administrator": 4}


def _user(read: StateReader | None, user: str) -> dict[str, Any] | None:
    row = read_json(read, ["user", "get", user, "--fields=ID,user_login,user_email,roles", "--format=json"])
    return row if isinstance(row, dict) else None


def _role_rank(role: str) -> int:
    return _ROLE_RANK.get(role, 2)  # an unknown role is treated as one that can publish


def role_change(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    if path == ("user", "update"):
        users, new = args, parsed.option_values("role")
    else:  # user set-role <user> [<role>]
        users, new = args[:1], args[1:2]
    default = (read(["option", "get", "default_role"]) or "").strip() if read is not None and not new else ""
    target = new[0] if new else (default or "（既定の権限グループ）")
    described = [_one_role_change(read, user_ref, target) for user_ref in (users or ["?"])[:10]]
    if len(described) == 1:
        return described[0]
    return "、".join(d[0] for d in described), " ".join(dict.fromkeys(d[1] for d in described))


def _one_role_change(read: StateReader | None, user_ref: str, target: str) -> tuple[str, str]:
    current = _user(read, user_ref)
    before = [r.strip() for r in str(current.get("roles", "")).split(",") if r.strip()] if current else []
    who = f"ユーザー（{current.get('user_login', user_ref) if current else user_ref}）"
    if current is None:
        return (
            f"{who}の権限グループを「{target}」に変更します（現在の権限グループは確認できませんでした）",
            "権限が上がる（サイトの操作が増える）か、下がる（管理できなくなる）可能性があります。",
        )
    if before == [target]:
        return f"{who}の権限グループは既に「{target}」です（変更はありません）", "変更はありません。"
    was = "・".join(before) or "なし"
    if target == "administrator":
        return f"{who}の権限グループを「{was}」から「administrator」に変更し、管理者権限を付与します", (
            "サイトの全ての操作（ユーザー・プラグイン・設定の変更）ができる権限になります。"
        )
    demoted = any(_role_rank(r) > _role_rank(target) for r in before)
    impact = "できる操作が減ります。" if demoted else "できる操作が増えます。"
    if "administrator" in before:
        impact = "管理者の権限を失い、設定・プラグイン・ユーザーを管理できなくなります（最後の管理者なら誰もサイトを管理できなくなります）。"
    change = "（降格）" if demoted else "（昇格）"
    return f"{who}の権限グループを「{was}」から「{target}」に変更します{change}", impact


def add_role(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    roles = args[1:]
    grants_admin = "administrator" in roles
    return (
        f"ユーザー（{args[0] if args else '?'}）に権限グループ「{listed(roles)}」を追加します",
        "サイトの全ての操作ができる権限になります。"
        if grants_admin
        else "投稿の公開など、できる操作が増えます。",
    )


def remove_role(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    """`user remove-role <user> [<role>...]`: without a role WP-CLI removes every role."""
    current = _user(read, args[0]) if args else None
    who = f"ユーザー（{current.get('user_login', args[0]) if current else (args[0] if args else '?')}）"
    before = [r.strip() for r in str(current.get("roles", "")).split(",") if r.strip()] if current else None
    removed = args[1:] or (before if before is not None else ["全て"])
    left = [r for r in before if r not in removed] if before is not None else None
    state = ""
    if before is not None and left is not None:
        state = f"（現在: {'・'.join(before) or 'なし'} → 残り: {'・'.join(left) or 'なし'}）"
    impact = (
        "権限グループがなくなり、サイトで何もできなくなります（ログインはできます）。"
        if left == [] or (not args[1:] and before is None)
        else "外した権限グループでできた操作ができなくなります。"
    )
    return f"{who}から権限グループ「{listed(removed)}」を外します{state}", impact


def user_credentials(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    if parsed.has_flag("role"):
        return role_change(parsed, path, args, read)
    emails, changes, impacts = parsed.option_values("user_email"), [], []
    current = _user(read, args[0]) if len(args) == 1 else None
    who = f"ユーザー（{current.get('user_login', args[0]) if current else listed(args)}）"
    if emails:
        before = current.get("user_email") if current else None
        changes.append(f"メールアドレスを{f'「{before}」から' if before else ''}「{emails[0]}」に変更")
        impacts.append(
            "パスワード再設定のメールは新しいアドレスに届くようになります（アカウントを引き継げるアドレスです）。"
        )
    if parsed.has_flag("user_pass"):
        changes.append("パスワードを変更")
        impacts.append("現在のパスワードではログインできなくなります。")
    if parsed.has_flag("spam"):
        changes.append("スパムに指定")
        impacts.append("このユーザーはログインできなくなります。")
    if not changes:
        return None
    return f"{who}の" + "、".join(changes) + "します", "".join(impacts)


def user_create(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    login = args[0] if args else "?"
    roles = parsed.option_values("role")
    role = roles[0] if roles else (read(["option", "get", "default_role"]) if read else None)
    role = (role or "").strip() or "（サイトの既定の権限グループ）"
    impact = {
        "administrator": "サイトの全ての操作ができる管理者アカウントになります。",
        "editor": "全ての投稿・固定ページの編集と公開ができるアカウントになります。",
        "author": "自分の投稿を公開できるアカウントになります。",
    }.get(role, "このサイトにログインできるアカウントが増えます。")
    source = "" if roles else "（指定がないためサイトの既定の権限グループ）"
    email = args[1] if len(args) > 1 else "（指定なし）"
    return (
        f"ログインできる新しいアカウント（ユーザー名: {login}、メールアドレス: {email}）を「{role}」の権限で作成します{source}",
        impact,
    )


def user_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    """WordPress's wp_delete_user without `--reassign`: each post and page of the user goes to the
    trash, everything else of theirs (media with its files, posts already in the trash, other types)
    is deleted for good. On a network the account stays (it leaves this site) unless `--network`."""
    users = [_user(read, ref) for ref in args[:10]]
    names = [str((u or {}).get("user_login") or ref) for u, ref in zip(users, args, strict=False)]
    who = f"ユーザー（{listed(names)}）"
    if parsed.has_flag("network"):
        sites = read_json(read, ["site", "list", "--fields=url", "--format=json"])
        urls = [str(r.get("url")) for r in sites if isinstance(r, dict)] if isinstance(sites, list) else []
        fates = [_posts_fate(read, users, f"--url={url}", url) for url in urls[:20]]
        told = (
            " ".join(f for f in fates if f)
            or "各サイトのこのユーザーの投稿はゴミ箱へ移り、ゴミ箱にあるもの・投稿と固定ページ以外（メディアなど）は完全に削除されます。"
        )
        return (
            f"{who}をネットワークの全てのサイトから外し、アカウントを削除します",
            f"全てのサイトでログインできなくなります。{told}" + IRREVERSIBLE,
        )
    network = read is not None and read(["core", "is-installed", "--network"]) is not None
    leaves = "このサイトから外します（アカウントはネットワークに残ります）" if network else "削除します"
    reassign = parsed.option_values("reassign")
    if reassign:
        heir = _user(read, reassign[0])
        heir_name = f"{heir.get('user_login')}（ID {reassign[0]}）" if heir else f"ID {reassign[0]}"
        return f"{who}を{leaves}", f"このユーザーの投稿はユーザー {heir_name} に引き継がれます。" + (
            "" if network else IRREVERSIBLE
        )
    fate = _posts_fate(read, users, None, None)
    told = (
        fate
        if fate is not None
        else (
            "このユーザーの投稿はゴミ箱へ移り、ゴミ箱にあるもの・投稿と固定ページ以外（メディアなど）は完全に削除されます（現在の投稿を確認できませんでした）。"
        )
    )
    return f"{who}を{leaves}", told + ("" if network else "アカウントは" + IRREVERSIBLE)


def _posts_fate(
    read: StateReader | None, users: list[dict[str, Any] | None], url: str | None, site: str | None
) -> str | None:
    """What wp_delete_user does to the users' posts on one site, by ID (None: not readable)."""
    trashed: list[str] = []
    gone: list[str] = []
    files: list[str] = []
    for user in users:
        if user is None or read is None:
            return None
        rows = read_json(read, ["post", "list", f"--author={user['ID']}", "--post_type=any",
                            f"--post_status={POST_STATUSES}", "--fields=ID,post_type,post_status",
                            "--format=json", *([url] if url else [])])  # fmt: skip
        if not isinstance(rows, list):
            return None
        for row in rows:
            post_id, kind = str(row.get("ID")), row.get("post_type")
            if kind in ("post", "page") and row.get("post_status") != "trash":
                trashed.append(post_id)
            else:
                gone.append(post_id)
                if kind == "attachment":
                    files.append(post_id)
    where = f"{site} の" if site else ""
    if not trashed and not gone:
        return f"{where}このユーザーの投稿はありません。" if not site else ""
    parts = []
    if trashed:
        parts.append(f"{where}投稿 ID {listed(trashed)} はゴミ箱へ移動します（復元できます）。")
    if gone:
        parts.append(f"{where}ID {listed(gone)} は完全に削除されます。")
    if files:
        parts.append(f"メディア ID {listed(files)} はファイルも削除されます。")
    return "".join(parts)


def session_destroy(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    """`user session destroy <user> [<token>] [--all]`: one user's sessions (`--all`: every one of them)."""
    current = _user(read, args[0]) if args else None
    who = f"ユーザー（{current.get('user_login', args[0]) if current else (args[0] if args else '?')}）"
    if parsed.has_flag("all"):
        return (
            f"{who}の全てのログインセッションを破棄します",
            "このユーザーは全ての端末でログアウトされます。",
        )
    which = "指定したログインセッション" if len(args) > 1 else "最も新しいログインセッション"
    return f"{who}の{which}を破棄します", "その端末ではログアウトされます。"


def reset_password(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    names = [str((_user(read, ref) or {}).get("user_login") or ref) for ref in args[:10]]
    mail = (
        "新しいパスワードは誰にも知らされません（--skip-email）。本人はパスワードの再設定をするまでログインできません。"
        if parsed.has_flag("skip-email")
        else "新しいパスワードは本人にメールで送られます。"
    )
    return (
        f"ユーザー（{listed(names)}）のパスワードを新しいものに変更します",
        "現在のパスワードではログインできなくなります。" + mail,
    )


def role_create(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    if len(args) < 2:
        return None
    return (
        f"権限グループ「{args[0]}」（表示名「{args[1]}」）を、権限を1つも持たない状態で作成します",
        "このグループに割り当てたユーザーは何もできません。ユーザーへの割り当て（user set-role）は別に承認が必要です。",
    )


def role_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    if not args:
        return None
    return (
        f"権限グループ「{'」「'.join(args)}」を削除します",
        "このグループのユーザーはその権限をすべて失います（ログインはできますが、管理画面でできることがなくなります）。"
        + IRREVERSIBLE,
    )


def cap_remove(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    if len(args) < 2:
        return None
    return (
        f"権限グループ「{args[0]}」から権限「{'」「'.join(args[1:])}」を外します",
        f"「{args[0]}」のユーザー全員がこの権限を使えなくなります。",
    )
