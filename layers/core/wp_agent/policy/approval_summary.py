"""One-line Japanese summary and impact of a destructive command, built from its argv and, where
the effect depends on the site's state, from what read-only commands show before approval.

Never from the model's words: an approver must see what will actually happen. WP-CLI facts that
matter (checked on WordPress 6.1 / WP-CLI 2.10): `post delete <id>` of a post already in the trash
deletes it for good; without --force it refuses every type but post and page; `comment delete`
of a trashed or spam comment deletes it for good; `user set-role` replaces every role.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from wp_agent.command_line.code_changes import CODE_CHANGES, LANGUAGE_CHANGES
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.masking import is_secret_name, mask_argv
from wp_agent.policy.active_content import active_parts
from wp_agent.policy.approval_flags import described_flags
from wp_agent.policy.command_grammar import CommandReading, read_command
from wp_agent.policy.command_policy import PolicyDecision
from wp_agent.policy.command_table import ALLOWED_COMMANDS, NEWER_THAN_PINNED, SPELLED_OUT
from wp_agent.policy.effects.meta_keys import stored_texts
from wp_agent.policy.effects.site_address import RESERVED_SITE_NAMES, address_name
from wp_agent.policy.effects.table import site_checks
from wp_agent.policy.site_reads import StateReader

IRREVERSIBLE = "元に戻せません。"
# What the executors do around a change of code (executors/code_guard.py), told before it is approved.
GUARD_PLAN_JA = (
    "実行の手順: 変更前にサイト（トップページ・最新の投稿・ログイン後の管理画面・REST API・ログイン画面・PHPのエラーログ）を確認し、"
    "{kept}を控えてから変更します。変更後に同じ確認をして、悪くなっていれば"
    "自動で変更前の状態に戻し、結果を報告します。"
)
_EXTENSIONS_KEPT = "対象のファイル・サイトの設定（オプション）・有効なプラグインとテーマ"
_LANGUAGE_KEPT = "言語ファイル（languages フォルダ全体）・サイトの設定（オプション）とサイトの言語"
# A core update's plan: its database is backed up only for another branch (a minor one changes files).
CORE_GUARD_PLAN_JA = (
    "実行の手順: 変更前にサイト（トップページ・最新の投稿・ログイン後の管理画面・REST API・ログイン画面・PHPのエラーログ）を確認し、"
    "WordPress本体のファイル{database}をサーバー上に控えてから更新し、データベースの更新（core update-db）まで行います。"
    "変更後に同じ確認をして、悪くなっていれば自動で{back}を変更前の版に戻し、結果を報告します。"
)
# What undo can do for a post deleted for good (`post delete --force`, or from the trash): make it
# again from its before-image. WordPress deleted its comments and revisions with it (tried on the
# sandbox), and its ID is kept only when still free.
POST_RECREATED_ONLY = (
    "元に戻す操作（undo）では記録した本文・カスタムフィールド・カテゴリ・タグから投稿を作り直すだけで、"
    "コメントとリビジョンは戻らず、IDが変わる場合があります。"
)
_POST_STATUSES = "publish,future,draft,pending,private,trash,inherit,auto-draft"
_ROLE_RANK = {"subscriber": 0, "contributor": 1, "author": 2, "editor": 3, "administrator": 4}
_OBJECT_NAMES = {
    "post": "投稿",
    "comment": "コメント",
    "user": "ユーザー",
    "term": "カテゴリ・タグ",
    "menu": "メニュー",
    "site": "サイト",
    "plugin": "プラグイン",
    "theme": "テーマ",
    "option": "設定",
}
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
_IRREVERSIBLE_PATHS = {
    ("term", "delete"): "削除したカテゴリ・タグは元に戻せません。記事との関連付けも外れます。",
    ("plugin", "delete"): "プラグインのファイルが削除されます。" + IRREVERSIBLE,
    ("plugin", "uninstall"): "プラグインのファイルと設定データが削除されます。" + IRREVERSIBLE,
    ("theme", "delete"): "テーマのファイルが削除されます。" + IRREVERSIBLE,
    ("site", "delete"): "サイトの全ての投稿・設定・ユーザーとの関連付けが削除されます。" + IRREVERSIBLE,
    ("menu", "delete"): "メニューと全てのメニュー項目が削除されます。" + IRREVERSIBLE,
    ("comment", "meta", "delete"): "削除したコメントメタの値は" + IRREVERSIBLE,
}
# Deleted, but kept in the before-image: `wp-agent undo` puts the value back.
_DELETES: dict[tuple[str, ...], str] = {
    ("post", "meta", "delete"): "カスタムフィールドの値が削除されます。",
    ("term", "meta", "delete"): "タームメタの値が削除されます。",
    ("user", "meta", "delete"): "ユーザーメタの値が削除されます。",
}

# Side flags (policy/approval_flags.py lists which each held path may carry), in the person's words.
_FLAG_NOTES = {
    "all": "--all: 名前を指定せず、全ての{thing}が対象です。",
    "exclude": "--exclude: {value} は対象から除きます。",
    "network": "--network: ネットワーク全体（全てのサイト）が対象です。",
    "version": "--version: バージョン {value} を指定しています。",
    "force": "--force: 確認を省いて強制的に実行します。",
    "activate": "インストール後に有効化します（コードが実行されます）。",
    "activate-network": "インストール後にネットワーク全体で有効化します（コードが実行されます）。",
    "auto-update-indicated": (
        "--auto-update-indicated: 更新サーバーが自動更新を指示しているものだけを、指示されたバージョンに更新します（最新版とは限りません）。"
    ),
    "minor": "--minor: マイナーバージョンの更新だけを適用します。",
    "patch": "--patch: パッチバージョンの更新だけを適用します。",
    "disabled-only": "--disabled-only: 現在自動更新が無効なものだけが対象です。",
    "enabled-only": "--enabled-only: 現在自動更新が有効なものだけが対象です。",
    "uninstall": "--uninstall: 無効化のあとプラグインのアンインストール処理が実行され、プラグインのデータとファイルが削除されます。"
    + IRREVERSIBLE,
    "deactivate": "--deactivate: 有効なプラグインは先に無効化します。",
    "skip-delete": "--skip-delete: アンインストール処理（データの削除）は実行し、プラグインのファイルは残します。",
    "defer-term-counting": "--defer-term-counting: カテゴリ・タグの件数は最後にまとめて数え直します（結果は同じです）。",
    "by": "--by={value}: 対象を {value} で指定しています。",
    "role": "権限グループ: {value}。",
    "user_pass": "パスワードを指定しています（表示しません）。",
    "send-email": "--send-email: 新しいユーザーに通知メールを送ります。",
    "skip-email": "--skip-email: 本人への通知メールを送りません。",
    "slug": "対象のサイトをアドレス名「{value}」で指定しています。",
    "category-base": "カテゴリーのURLの前に付く文字が「{value}」に変わります。",
    "tag-base": "タグのURLの前に付く文字が「{value}」に変わります。",
    "hard": "--hard: .htaccess などの書き換えルールのファイルも更新します。",
    "dry-run": "--dry-run: 実際には置換せず、置換される件数を確認するだけです（何も変更されません）。",
    "precise": "--precise: 全ての行をPHPで1件ずつ置換します。",
    "no-precise": "--no-precise: 可能な行はSQLでまとめて置換します。",
    "recurse-objects": "--recurse-objects: シリアライズされたデータの中も置換します。",
    "no-recurse-objects": "--no-recurse-objects: シリアライズされたオブジェクトの中は置換しません。",
    "skip-tables": "--skip-tables: テーブル {value} は置換しません。",
    "skip-columns": "--skip-columns: 列 {value} は置換しません。",
    "include-columns": "--include-columns: 列 {value} だけを置換します。",
    "regex": "--regex: 置換前の文字列を正規表現として扱います（一致する範囲が広がることがあります）。",
    "regex-flags": "正規表現のフラグ: {value}。",
    "regex-delimiter": "正規表現の区切り文字: {value}。",
    "regex-limit": "1つの値の中で置換する回数の上限: {value}。",
    "report": "結果の表を表示します（置換内容は同じです）。",
    "no-report": "結果の表を表示しません（置換内容は同じです）。",
    "report-changed-only": "変更のあった表だけを表示します（置換内容は同じです）。",
    "verbose": "処理中の行を表示します（置換内容は同じです）。",
}
_PATH_FLAG_NOTES: dict[tuple[tuple[str, ...], str], str] = {
    (("theme", "delete"), "force"): "--force: 有効化されているテーマでも削除します。",
    (("maintenance-mode", "activate"), "force"): "--force: 既にメンテナンスモードでも開始し直します。",
    (("theme", "install"), "force"): "--force: 同じテーマがあれば上書きします。",
    (("plugin", "install"), "force"): "--force: 同じプラグインがあれば上書きします。",
    (("widget", "reset"), "inactive"): "--inactive: 使われていないサイドバーもあわせてリセットします。",
    (
        ("cron", "event", "delete"),
        "match-args",
    ): "--match-args: 引数が {value} と一致する予約だけを削除します。",
    (("user", "remove-cap"), "force"): (
        "--force: 権限名が権限グループ名と同じでも外します（そのユーザーはその権限グループからも外れます）。"
    ),
    (
        ("theme", "enable"),
        "activate",
    ): "--activate: このサイトのテーマとして有効化します（テーマのコードが実行されます）。",
    (("language", "core", "install"), "activate"): (
        "--activate: インストール後にサイトの言語をこの言語に切り替えます（訪問者と管理画面の表示言語が変わります）。"
    ),
}
_SITE_FLAG_EFFECTS = {
    "archive": "訪問者はサイトを閲覧できなくなります（アーカイブ解除で戻せます）。",
    "unarchive": "サイトが再び閲覧できるようになります。",
    "spam": "サイトがスパム扱いになり、閲覧できなくなります。",
    "unspam": "スパム扱いが解除され、サイトが閲覧できるようになります。",
    "deactivate": "サイトが無効になり、閲覧できなくなります。",
    "activate": "サイトが有効になり、閲覧できるようになります。",
    "private": "検索エンジンにサイトを登録しないよう求める設定になります。",
    "public": "検索エンジンにサイトが公開されます。",
}
# Flags a handler describes in its own sentence (no note is added for them).
_HANDLED: dict[tuple[str, ...], frozenset[str]] = {
    ("post", "delete"): frozenset({"force"}),
    ("comment", "delete"): frozenset({"force"}),
    ("user", "delete"): frozenset({"network", "reassign"}),
    ("site", "delete"): frozenset({"slug", "keep-tables"}),
    ("plugin", "install"): frozenset({"activate", "activate-network"}),
    ("core", "update"): frozenset({"minor", "version"}),  # (the release it goes to is the summary)
    ("theme", "install"): frozenset({"activate"}),
    ("user", "create"): frozenset({"role"}),
    ("post", "meta", "delete"): frozenset({"all"}),
    ("user", "session", "destroy"): frozenset({"all"}),
    ("user", "reset-password"): frozenset({"skip-email"}),
    **{("site", verb): frozenset({"slug"}) for verb in _SITE_FLAG_EFFECTS},
    ("term", "meta", "delete"): frozenset({"all"}),
}


def _list(values: list[str]) -> str:
    shown = values[:10]
    rest = f" ほか{len(values) - len(shown)}件" if len(values) > len(shown) else ""
    return "、".join(shown) + rest


def _json(read: StateReader | None, argv: list[str]) -> Any:
    """Parsed JSON of a read, or None (no reader, the read failed, or it was not JSON)."""
    stdout = read(argv) if read is not None else None
    if stdout is None:
        return None
    try:
        return json.loads(stdout)
    except ValueError:
        return None


def describe(decision: PolicyDecision, read: StateReader | None = None) -> tuple[str, str]:
    """(summary, impact) for the approval prompt, read on the site the command runs on."""
    argv = mask_argv(list(decision.argv))
    parsed = ParsedCommand.from_argv(tuple(argv))
    path = decision.command_path
    # The policy held the command only after reading it by its synopsis (command_grammar): its words fill
    # the arguments in order, so the masked argv's positionals are the reading's words.
    args = list(parsed.args_after(path))
    on_site = _on_site(read, parsed.url_tokens())
    described: tuple[str, str] | None = None
    for handler in summaries_of(path):
        described = handler(parsed, path, args, on_site)
        if described is not None:
            break
    text, impact = described or _generic(decision, parsed, path, args)
    if path in SPELLED_OUT and decision.rule != f"confirm.{'.'.join(path)}":
        impact = f"{decision.reason_ja} {impact}"  # a rule held it for a reason of its own: said first
    notes = _flag_notes(parsed, path) + _active_content_notes(parsed, path, impact)
    if notes:
        impact = " ".join([impact, *notes]).strip()
    if path == ("core", "update"):
        impact = f"{impact} {_core_guard_plan(parsed, on_site)}".strip()
    elif path in CODE_CHANGES:
        kept = _LANGUAGE_KEPT if path in LANGUAGE_CHANGES else _EXTENSIONS_KEPT
        impact = f"{impact} {GUARD_PLAN_JA.format(kept=kept)}".strip()
    urls = parsed.option_values("url")
    if urls:
        text = f"{text}（対象サイト: {urls[-1]}）"
    return text, impact


def _active_content_notes(parsed: ParsedCommand, path: tuple[str, ...], said: str) -> list[str]:
    """Whatever made a command wait, a value WordPress's kses would not let an author store (script,
    event handlers, javascript: links…) is named in the approval: the person approves a user, a site
    or a post knowing what it will run in the browsers of those who see it."""
    values = [(f"--{o.name} の値に", o.value) for o in parsed.options if o.value] + [
        (f"引数「{a[:40]}」に", a) for a in parsed.args_after(path)
    ]  # worded as the policy's own reasons (policy/effects/declaration.py), so one can say it already
    notes = []
    structured = "json" in parsed.option_values("format")  # WP-CLI decodes the values first
    for where, value in values:
        parts = [p for text in stored_texts(value, structured=structured) for p in active_parts(text)]
        found = f"{where}{'、'.join(parts[:3])}が含まれます"
        if parts and found not in said:  # the policy's own reason may have told it already
            notes.append(
                f"{found}（表示した訪問者や管理画面を開いた人のブラウザでスクリプトとして動くことがあります）。"
            )
    return notes


def _on_site(read: StateReader | None, url_tokens: tuple[str, ...]) -> StateReader | None:
    """`read` on the command's own site: every read carries the command's `--url` (on a network,
    post 5 of /en/ is not post 5 of the main site). One description asks the site each thing once
    (its handler and the plan may both need the same fact)."""
    if read is None:
        return None
    answers: dict[tuple[str, ...], str | None] = {}

    def on_site(argv: list[str]) -> str | None:
        key = (*argv, *url_tokens)
        if key not in answers:
            answers[key] = read(list(key))
        return answers[key]

    return on_site


def _flag_notes(parsed: ParsedCommand, path: tuple[str, ...]) -> list[str]:
    """What each described side flag given to the command changes, in the person's words (but the
    flags its handler tells in its own sentence), once per flag."""
    notes: dict[str, str] = {}
    thing = _OBJECT_NAMES.get(path[0], "対象") if path else "対象"
    for option in parsed.options:
        if (
            option.name not in described_flags(path)
            or option.name in _HANDLED.get(path, ())
            or path in SPELLED_OUT
        ):
            continue
        text = _PATH_FLAG_NOTES.get((path, option.name)) or _FLAG_NOTES.get(option.name)
        if text is None:
            text = "プロフィール項目（--{name}）も設定します。"
        notes[option.name] = text.format(value=option.value or "", name=option.name, thing=thing)
    return list(notes.values())


# -- posts and comments: trash, or gone for good -------------------------------------------------


def _post_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    ids = [a for a in args if a.isdigit()]
    rows = _json(read, ["post", "list", f"--post__in={','.join(ids)}", "--post_type=any",
                        f"--post_status={_POST_STATUSES}", "--fields=ID,post_status,post_type",
                        "--format=json"]) if ids and len(ids) == len(args) else None  # fmt: skip
    state = (
        {str(r.get("ID")): (r.get("post_status"), r.get("post_type")) for r in rows if isinstance(r, dict)}
        if isinstance(rows, list)
        else None
    )
    files = [i for i in ids if state is not None and state.get(i, (None, None))[1] == "attachment"]
    files_note = (
        f"ID {_list(files)} はメディア（添付ファイル）のため、サーバー上の画像などのファイルも全て削除され、"
        "元に戻す操作（undo）でも戻せません。"
        if files
        else ""
    )
    if parsed.has_flag("force"):
        if state is None:
            return (
                f"投稿（ID: {_list(args)}）を完全に削除します",
                "ゴミ箱を経由せずに削除するため、" + IRREVERSIBLE + POST_RECREATED_ONLY
                + "メディア（添付ファイル）であれば、そのファイルも削除されます。",
            )  # fmt: skip
        missing = [i for i in ids if i not in state]
        gone = [i for i in ids if i in state]
        text = f"投稿（ID: {_list(gone)}）を完全に削除します" if gone else "削除される投稿はありません"
        if missing:
            text += f"（ID {_list(missing)} は見つかりません）"
        return text, ("ゴミ箱を経由せずに削除するため、" + IRREVERSIBLE + POST_RECREATED_ONLY + files_note)
    if state is None:
        return (
            f"投稿（ID: {_list(args)}）をゴミ箱へ移動します（既にゴミ箱にあるものは完全に削除されます）",
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
        parts.append(f"ID {_list(gone)} はゴミ箱にあるため完全に削除")
        impacts.append(f"ID {_list(gone)} は" + IRREVERSIBLE + POST_RECREATED_ONLY)
    if trashed:
        parts.append(f"ID {_list(trashed)} はゴミ箱へ移動")
        impacts.append(f"ID {_list(trashed)} はゴミ箱から復元できますが、サイトからは見えなくなります。")
    if refused:
        parts.append(f"ID {_list(refused)} は削除されません（見つからないか、ゴミ箱に入れられない種類）")
    if gone and not trashed and not refused:
        return (
            f"投稿（ID: {_list(gone)}）を完全に削除します（既にゴミ箱にあるため）",
            IRREVERSIBLE + POST_RECREATED_ONLY,
        )
    if trashed and not gone and not refused:
        return (
            f"投稿（ID: {_list(trashed)}）をゴミ箱へ移動します",
            "ゴミ箱から復元できますが、サイトからは見えなくなります。",
        )
    return "投稿を削除します: " + "、".join(parts), " ".join(impacts) or "変更されるものはありません。"


def _comment_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    if parsed.has_flag("force"):
        return (
            f"コメント（ID: {_list(args)}）を完全に削除します",
            "ゴミ箱を経由せずに削除するため、" + IRREVERSIBLE,
        )
    statuses = {}
    for comment_id in args[:20]:
        row = _json(
            read, ["comment", "get", comment_id, "--fields=comment_ID,comment_approved", "--format=json"]
        )
        if isinstance(row, dict):
            statuses[comment_id] = str(row.get("comment_approved"))
    if len(statuses) != len(args):
        return (
            f"コメント（ID: {_list(args)}）をゴミ箱へ移動します（ゴミ箱・スパムにあるものは完全に削除されます）",
            "現在の状態を確認できませんでした。ゴミ箱・スパムのコメントは完全に削除され、" + IRREVERSIBLE,
        )
    gone = [i for i in args if statuses[i] in {"trash", "spam"}]
    if gone:
        return (
            f"コメント（ID: {_list(args)}）を削除します（ID {_list(gone)} はゴミ箱・スパムにあるため完全に削除）",
            f"ID {_list(gone)} は" + IRREVERSIBLE,
        )
    return (
        f"コメント（ID: {_list(args)}）をゴミ箱へ移動します",
        "ゴミ箱から復元できますが、サイトからは見えなくなります。",
    )


# -- users: roles, email, password, deletion -----------------------------------------------------


def _user(read: StateReader | None, user: str) -> dict[str, Any] | None:
    row = _json(read, ["user", "get", user, "--fields=ID,user_login,user_email,roles", "--format=json"])
    return row if isinstance(row, dict) else None


def _role_rank(role: str) -> int:
    return _ROLE_RANK.get(role, 2)  # an unknown role is treated as one that can publish


def _role_change(
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


def _add_role(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    roles = args[1:]
    grants_admin = "administrator" in roles
    return (
        f"ユーザー（{args[0] if args else '?'}）に権限グループ「{_list(roles)}」を追加します",
        "サイトの全ての操作ができる権限になります。"
        if grants_admin
        else "投稿の公開など、できる操作が増えます。",
    )


def _remove_role(
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
    return f"{who}から権限グループ「{_list(removed)}」を外します{state}", impact


def _user_credentials(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    if parsed.has_flag("role"):
        return _role_change(parsed, path, args, read)
    emails, changes, impacts = parsed.option_values("user_email"), [], []
    current = _user(read, args[0]) if len(args) == 1 else None
    who = f"ユーザー（{current.get('user_login', args[0]) if current else _list(args)}）"
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


def _user_create(
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


def _site_create(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    emails = parsed.option_values("email")
    slug = next(iter(parsed.option_values("slug")), "?")
    if emails or parsed.has_flag("email"):
        return (
            f"新しいサイト（{slug}）を作成し、メールアドレス {emails[0] if emails else '（空）'} のアカウントをその管理者にします",
            "そのアドレスのユーザーがいなければ、ログインできるアカウントが新しく作成され、パスワードがそのアドレスにメールで送られます。"
            "既存のユーザーであれば、そのユーザーが新しいサイトの管理者になります。",
        )
    what = f"新しいサイトをアドレス「/{slug.lower()}/」に作成します"
    if slug.lower() in RESERVED_SITE_NAMES:
        return what, (
            "このアドレスはWordPress自身が使う名前（管理画面・REST API・フィードなど）です。作成すると、"
            "このアドレスへのアクセスが新しいサイトに向かい、元の機能が使えなくなります。"
        )
    if read is not None:
        for check in site_checks(tuple(parsed.argv), path):
            pages = read(list(check.argv))
            if check.confirms(pages):
                continue
            ids = pages.split() if pages else []
            found = (
                f"メインサイトに同じアドレスの固定ページ（ID: {_list(ids)}）があります"
                if ids and all(i.isdigit() for i in ids)
                else "メインサイトに同じアドレスの固定ページがないことを確認できませんでした"
            )
            return (
                what,
                f"{found}。作成すると、その固定ページはこのアドレスで表示されなくなります（新しいサイトが表示されます）。",
            )
    return None


def _user_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    """WordPress's wp_delete_user without `--reassign`: each post and page of the user goes to the
    trash, everything else of theirs (media with its files, posts already in the trash, other types)
    is deleted for good. On a network the account stays (it leaves this site) unless `--network`."""
    users = [_user(read, ref) for ref in args[:10]]
    names = [str((u or {}).get("user_login") or ref) for u, ref in zip(users, args, strict=False)]
    who = f"ユーザー（{_list(names)}）"
    if parsed.has_flag("network"):
        sites = _json(read, ["site", "list", "--fields=url", "--format=json"])
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
        rows = _json(read, ["post", "list", f"--author={user['ID']}", "--post_type=any",
                            f"--post_status={_POST_STATUSES}", "--fields=ID,post_type,post_status",
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
        parts.append(f"{where}投稿 ID {_list(trashed)} はゴミ箱へ移動します（復元できます）。")
    if gone:
        parts.append(f"{where}ID {_list(gone)} は完全に削除されます。")
    if files:
        parts.append(f"メディア ID {_list(files)} はファイルも削除されます。")
    return "".join(parts)


def _site_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    """The site named by ID or `--slug`, as the network knows it now."""
    slugs = parsed.option_values("slug")
    sites = _network_sites(read)
    matched = _matching_sites(sites, args[:1], slugs[0] if slugs else None) if sites is not None else []
    found = matched[-1] if matched else None
    named = args[0] if args else f"アドレス名「{slugs[0] if slugs else '?'}」"
    what = f"サイト（{found}）" if found else f"サイト（{named}。現在のサイト一覧で確認できませんでした）"
    if parsed.has_flag("keep-tables"):
        return (
            f"{what}をネットワークから削除します（データベースのテーブルは残します）",
            "サイトにはアクセスできなくなります。テーブルは残りますが、サイトの登録は" + IRREVERSIBLE,
        )
    return (
        f"{what}を削除します",
        "サイトの全ての投稿・設定・ユーザーとの関連付けが削除されます。" + IRREVERSIBLE,
    )


def _menu_item_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    """Named with their titles as the site has them (the turn refused IDs that are not menu items)."""
    rows = _json(read, ["post", "list", f"--post__in={','.join(args)}", "--post_type=nav_menu_item",
                        "--post_status=any", "--fields=ID,post_title", "--format=json"])  # fmt: skip
    titles = (
        {str(r.get("ID")): str(r.get("post_title") or "") for r in rows if isinstance(r, dict)}
        if isinstance(rows, list)
        else {}
    )
    named = [f"{i}{f'「{titles[i]}」' if titles.get(i) else ''}" for i in args]
    return (
        f"メニュー項目（ID: {_list(named)}）を削除します",
        "メニューからリンクが外れ、残りの項目の並び順が詰められます（リンク先の投稿やページは削除されません）。"
        + IRREVERSIBLE,
    )


# -- settings and appearance ------------------------------------------------------------------------


def _option(
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


def _meta_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    """`<post|term|user> meta delete <id> [<key> [<value>]] [--all]`: whose fields, which keys."""
    if not args:
        return None
    kind = {"post": "投稿", "term": "カテゴリ・タグ", "user": "ユーザー"}.get(path[0], "対象")
    whose = f"{kind}（ID: {args[0]}）"
    impact = _DELETES.get(path) or _IRREVERSIBLE_PATHS.get(path, "")
    if parsed.has_flag("all"):
        rows = _json(read, [*path[:2], "list", args[0], "--fields=meta_key", "--format=json"])
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
        named = f"（{_list(keys)}）" if keys else "（現在のキーは確認できませんでした）"
        return f"{whose}のカスタムフィールドを全て{named}削除します", impact
    if len(args) < 2:
        return None
    only = f"のうち値が「{args[2]}」のもの" if len(args) > 2 else ""
    return f"{whose}のカスタムフィールド「{args[1]}」{only}を削除します", impact


def _network_sites(read: StateReader | None) -> dict[str, str] | None:
    """blog_id -> URL of every site of the network (None when it cannot be read)."""
    rows = _json(read, ["site", "list", "--fields=blog_id,url", "--format=json"])
    if not isinstance(rows, list):
        return None
    return {str(r.get("blog_id")): str(r.get("url", "")) for r in rows if isinstance(r, dict)}


def _matching_sites(sites: dict[str, str], ids: list[str], slug: str | None) -> list[str]:
    """`ID <n>: <url>` of the listed sites a command names by ID, or by `--slug` (their address name)."""
    if slug is not None:
        return [f"ID {i}: {u}" for i, u in sites.items() if address_name(u) == slug.lower()]
    return [f"ID {i}: {sites[i]}" for i in ids if i in sites]


def _named_sites(read: StateReader | None, ids: list[str], slug: str | None) -> str:
    """The sites as the network lists them: by ID, or by the last part of their address (`--slug`)."""
    sites = _network_sites(read)
    if sites is None:
        return f"ID {_list(ids)}" if ids else f"アドレス名「{slug}」"
    if slug is not None:
        found = _matching_sites(sites, ids, slug)
        return _list(found) if found else f"アドレス名「{slug}」（見つかりません）"
    return _list([f"ID {i}: {sites[i]}" if i in sites else f"ID {i}（見つかりません）" for i in ids])


def _site_flag(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    slugs = parsed.option_values("slug")
    what = _named_sites(read, args, slugs[0] if slugs else None)
    label = {"archive": "アーカイブ", "unarchive": "アーカイブ解除", "spam": "スパムに設定", "unspam": "スパム解除",
             "deactivate": "無効化", "activate": "有効化", "private": "非公開化", "public": "公開"}[path[1]]  # fmt: skip
    return (
        f"サイト（{what}）を{label}します",
        _SITE_FLAG_EFFECTS[path[1]] + "ネットワーク上のサイトの状態（公開・利用の可否）が変わります。",
    )


def _menu_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    """Menus by ID, name or slug, named as the site has them, with how many items go with each."""
    rows = _json(read, ["menu", "list", "--fields=term_id,name,slug,count", "--format=json"])
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


def _session_destroy(
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


def _reset_password(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    names = [str((_user(read, ref) or {}).get("user_login") or ref) for ref in args[:10]]
    mail = (
        "新しいパスワードは誰にも知らされません（--skip-email）。本人はパスワードの再設定をするまでログインできません。"
        if parsed.has_flag("skip-email")
        else "新しいパスワードは本人にメールで送られます。"
    )
    return (
        f"ユーザー（{_list(names)}）のパスワードを新しいものに変更します",
        "現在のパスワードではログインできなくなります。" + mail,
    )


def _comment_trash(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    return (
        f"コメント（ID: {_list(args)}）をゴミ箱へ移動します",
        "ゴミ箱から復元できますが、サイトからは見えなくなります。",
    )


def _missing_options(read: StateReader | None, keys: list[str]) -> list[str]:
    """The keys the site has no option for (none when it cannot be read)."""
    missing = []
    for key in keys[:10]:
        rows = _json(read, ["option", "list", f"--search={key}", "--fields=option_name", "--format=json"])
        if not isinstance(rows, list):
            return []
        names = {str(r.get("option_name", "")).casefold() for r in rows if isinstance(r, dict)}
        if key.casefold() not in names:
            missing.append(key)
    return missing


def _theme_activate(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    active = (
        read(["theme", "list", "--status=active", "--field=name", "--skip-update-check"]) if read else None
    )
    was = f"「{active.strip()}」から" if active and active.strip() else ""
    if path == ("theme", "install"):
        return (
            f"テーマ「{_list(args)}」を wordpress.org からインストールし、{was}切り替えます",
            "テーマのPHPファイルがサーバーに置かれ、有効化するとそのコードが実行されます。"
            "サイトの見た目やレイアウトが変わります。ウィジェットやメニューの配置が外れることがあります。",
        )
    return (
        f"テーマを{was}「{_list(args)}」に切り替えます",
        "サイトの見た目やレイアウトが変わります。ウィジェットやメニューの配置が外れることがあります。",
    )


def _language_switch(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    language = args[-1] if args else ""
    current = read(["option", "get", "WPLANG"]) if read else None
    was = f"「{current.strip() or 'en_US'}」から" if current is not None else ""
    return (
        f"サイトの言語を{was}「{language}」に切り替えます",
        "サイトを訪れる人に見える表示と、管理画面の言語が変わります（もう一度切り替えれば戻せます）。",
    )


def _extension(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    """Plugins and themes put third-party code on the server; activating a plugin runs it."""
    kind = "プラグイン" if path[0] == "plugin" else "テーマ"
    names = f"{kind}「{_list(args)}」"
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


def _core_update(
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


def _core_guard_plan(parsed: ParsedCommand, read: StateReader | None) -> str:
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


def _spelled_out(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    """A held command no summary of ours explains: every argument by its synopsis name and every option
    with its value, as WP-CLI reads them (secrets masked), so the person approves exactly what runs."""
    reading = read_command(parsed, path)
    if not isinstance(reading, CommandReading):
        return None
    arguments = dict(reading.arguments)
    words_at = arguments.get("key-path", ())
    if path[-1] == "patch" and len(words_at) > 1 and reading.word("action") != "delete":
        # `patch insert|update … <key-path>… <value>`: WP-CLI takes the last word as the value
        arguments["key-path"], arguments["value"] = words_at[:-1], words_at[-1:]
    given = [
        f"{name}「{' > '.join(words) if name == 'key-path' else ' '.join(words)}」"
        for name, words in arguments.items()
    ]
    given += [f"--{name}" + (f"={value}" if value is not None else "") for name, value in reading.options.items()
              if name not in {"yes", "url"}]  # fmt: skip
    said = f"（{'、'.join(given)}）" if given else ""
    unproven = (
        "このコマンドはエージェントが動作を確かめたWP-CLI（2.10.0）より新しく、影響を事前に確かめられません。"
        if path in NEWER_THAN_PINNED
        else "このコマンドの影響はエージェントが事前に確かめていません。"
    )
    entry = ALLOWED_COMMANDS.get(path)
    label = entry.label_ja if entry is not None else "操作"
    return (
        f"{label}（wp {' '.join(path)}）{said}を実行します",
        unproven + "指定された内容をそのまま示しています。",
    )


def _generic(
    decision: PolicyDecision, parsed: ParsedCommand, path: tuple[str, ...], args: list[str]
) -> tuple[str, str]:
    everything = parsed.has_flag("all")
    label = decision.label_ja or "操作"
    impact = _IRREVERSIBLE_PATHS.get(path) or _DELETES.get(path)
    if impact is not None:
        target = f"全ての{_OBJECT_NAMES.get(path[0], '対象')}" if everything else f"（{_list(args)}）"
        return f"{label}{target}を実行します", impact
    if path[:1] == ("plugin",) and path[1:] in {("deactivate",), ("toggle",)}:
        target = "全てのプラグイン" if everything else f"プラグイン「{_list(args)}」"
        verb = "無効化します" if path[1] == "deactivate" else "有効・無効を切り替えます"
        return f"{target}を{verb}", "プラグインの機能が停止し、サイト表示や動作に影響する可能性があります。"
    if path == ("search-replace",) and len(args) >= 2:
        return (
            f"データベース内の「{args[0]}」を「{args[1]}」に置換します",
            "多数のデータが書き換わります。元に戻すにはバックアップが必要です。",
        )
    if path == ("post", "update") and decision.rule == "confirm.post.trash_status":
        return (
            f"投稿（ID: {_list(args)}）をゴミ箱へ移動します",
            "ゴミ箱から復元できますが、サイトからは見えなくなります。",
        )
    if everything:
        return f"全ての対象に対して「{label}」を実行します", "一括操作のため、多数のデータに影響します。"
    target = f"（{_list(args)}）" if args else ""
    return f"{label}{target}を実行します", decision.reason_ja


def _role_create(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    if len(args) < 2:
        return None
    return (
        f"権限グループ「{args[0]}」（表示名「{args[1]}」）を、権限を1つも持たない状態で作成します",
        "このグループに割り当てたユーザーは何もできません。ユーザーへの割り当て（user set-role）は別に承認が必要です。",
    )


def _role_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    if not args:
        return None
    return (
        f"権限グループ「{'」「'.join(args)}」を削除します",
        "このグループのユーザーはその権限をすべて失います（ログインはできますが、管理画面でできることがなくなります）。"
        + IRREVERSIBLE,
    )


def _cap_remove(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    if len(args) < 2:
        return None
    return (
        f"権限グループ「{args[0]}」から権限「{'」「'.join(args[1:])}」を外します",
        f"「{args[0]}」のユーザー全員がこの権限を使えなくなります。",
    )


Handler = Callable[[ParsedCommand, tuple[str, ...], list[str], StateReader | None], tuple[str, str] | None]


def _theme_switch(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    """`theme activate`, and `theme install --activate` (an install alone is told as any install)."""
    if path == ("theme", "install") and not parsed.has_flag("activate"):
        return None
    return _theme_activate(parsed, path, args, read)


def _paths(*names: str) -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(name.split()) for name in names)


# Each summary and the commands of the table it tells, in the order they are tried: the first with something
# to say tells the command (a spelled-out command that cannot be read by its synopsis is told by the next);
# a command none names is told by `_generic`. A command's row reads its own here (`summaries_of`).
_SUMMARIES: tuple[tuple[frozenset[tuple[str, ...]], Handler], ...] = (
    (SPELLED_OUT, _spelled_out),
    (_paths("role create"), _role_create),
    (_paths("role delete"), _role_delete),
    (_paths("cap remove"), _cap_remove),
    (_paths("post delete"), _post_delete),
    (_paths("comment delete"), _comment_delete),
    (_paths("user set-role"), _role_change),
    (_paths("user add-role"), _add_role),
    (_paths("user remove-role"), _remove_role),
    (_paths("user session destroy"), _session_destroy),
    (_paths("comment trash"), _comment_trash),
    (_paths("user reset-password"), _reset_password),
    (_paths("user update"), _user_credentials),
    (_paths("user create"), _user_create),
    (_paths("site create"), _site_create),
    (_paths("plugin activate", "plugin install"), _extension),
    (_paths("core update"), _core_update),
    (_paths("user delete"), _user_delete),
    (_paths("site delete"), _site_delete),
    (frozenset(("site", flag) for flag in _SITE_FLAG_EFFECTS), _site_flag),
    (_paths("menu delete"), _menu_delete),
    (_paths("language core activate", "site switch-language"), _language_switch),
    (frozenset(p for p in ALLOWED_COMMANDS if p[1:] == ("meta", "delete")), _meta_delete),
    (_paths("menu item delete"), _menu_item_delete),
    (_paths("option update", "option add", "option delete", "option patch"), _option),
    (_paths("theme activate", "theme install"), _theme_switch),
)
_SUMMARIES_OF: dict[tuple[str, ...], tuple[Handler, ...]] = {
    path: tuple(handler for paths, handler in _SUMMARIES if path in paths)
    for path in {path for paths, _ in _SUMMARIES for path in paths}
}


def _summaries_name_known_commands() -> None:
    """Checked as the table loads: a summary of a command the table lacks would tell nothing."""
    unknown = sorted(" ".join(path) for path in _SUMMARIES_OF if path not in ALLOWED_COMMANDS)
    if unknown:
        raise ValueError(f"approval summaries name commands the table lacks: {unknown}")


_summaries_name_known_commands()


def summaries_of(path: tuple[str, ...]) -> tuple[Handler, ...]:
    """The summaries that may tell this command's approval, in the order they are tried."""
    return _SUMMARIES_OF.get(path, ())


def summary_handler(path: tuple[str, ...]) -> str:
    """The summary that tells this command's approval first (`_generic` when none names it)."""
    return next((handler.__name__ for handler in summaries_of(path)), _generic.__name__)
