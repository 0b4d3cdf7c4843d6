"""The side flags a held command carries, told in the person's words, and active content a value would store."""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.active_content import active_parts
from wp_agent.policy.approval_flags import described_flags
from wp_agent.policy.approval_summary.common import IRREVERSIBLE, OBJECT_NAMES
from wp_agent.policy.approval_summary.sites import SITE_FLAG_EFFECTS
from wp_agent.policy.command_table import SPELLED_OUT
from wp_agent.policy.effects.meta_keys import stored_texts

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
    **{("site", verb): frozenset({"slug"}) for verb in SITE_FLAG_EFFECTS},
    ("term", "meta", "delete"): frozenset({"all"}),
}


def active_content_notes(parsed: ParsedCommand, path: tuple[str, ...], said: str) -> list[str]:
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


def flag_notes(parsed: ParsedCommand, path: tuple[str, ...]) -> list[str]:
    """What each described side flag given to the command changes, in the person's words (but the
    flags its handler tells in its own sentence), once per flag."""
    notes: dict[str, str] = {}
    thing = OBJECT_NAMES.get(path[0], "対象") if path else "対象"
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
