"""One-line Japanese summary and impact of a destructive command, built from its argv alone.

Never from the model's words: an approver must see what will actually run.
"""

from __future__ import annotations

from wp_agent.policy.command_policy import PolicyDecision
from wp_agent.policy.masking import mask_argv
from wp_agent.policy.parsed_command import ParsedCommand

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
}


def _list(values: list[str]) -> str:
    shown = values[:10]
    rest = f" ほか{len(values) - len(shown)}件" if len(values) > len(shown) else ""
    return "、".join(shown) + rest


def describe(decision: PolicyDecision) -> tuple[str, str]:
    """(summary, impact) for the approval prompt."""
    argv = mask_argv(list(decision.argv))
    parsed = ParsedCommand.from_argv(tuple(argv))
    path = decision.command_path
    args = list(parsed.args_after(path))
    everything = parsed.has_flag("all")
    force = parsed.has_flag("force")
    noun = _OBJECT_NAMES.get(path[0] if path else "", "対象")
    label = decision.label_ja or "操作"

    if path[-1:] == ("delete",) and path[0] in {"post", "comment"}:
        targets = f"{noun}（ID: {_list(args)}）" if args else f"全ての{noun}"
        if force:
            return f"{targets}を完全に削除します", "ゴミ箱を経由せずに削除するため、元に戻せません。"
        return f"{targets}をゴミ箱へ移動します", "ゴミ箱から復元できますが、サイトからは見えなくなります。"
    if path == ("post", "update"):
        return (
            f"投稿（ID: {_list(args)}）をゴミ箱へ移動します",
            "ゴミ箱から復元できますが、サイトからは見えなくなります。",
        )
    if path == ("term", "delete"):
        taxonomy = args[0] if args else ""
        return (
            f"{taxonomy} のターム（ID: {_list(args[1:])}）を削除します",
            "削除したカテゴリ・タグは元に戻せません。記事との関連付けも外れます。",
        )
    if path == ("user", "delete"):
        reassign = parsed.option_values("reassign")
        impact = (
            f"このユーザーの投稿はユーザーID {reassign[0]} に引き継がれます。"
            if reassign
            else "このユーザーの投稿も削除されます。元に戻せません。"
        )
        return f"ユーザー（{_list(args)}）を削除します", impact
    if path == ("theme", "activate") or (path == ("theme", "install") and parsed.has_flag("activate")):
        return (
            f"テーマを「{_list(args)}」に切り替えます",
            "サイトの見た目やレイアウトが変わります。サイト表示に影響する可能性があります。",
        )
    if path in {
        ("plugin", "deactivate"),
        ("plugin", "toggle"),
        ("plugin", "uninstall"),
        ("plugin", "delete"),
    }:
        target = "全てのプラグイン" if everything else f"プラグイン「{_list(args)}」"
        verb = {
            "deactivate": "無効化します",
            "toggle": "有効・無効を切り替えます",
            "uninstall": "アンインストールします",
            "delete": "削除します",
        }[path[1]]
        return f"{target}を{verb}", "プラグインの機能が停止し、サイト表示や動作に影響する可能性があります。"
    if path[:1] == ("option",) and args:
        key = args[0]
        value = f"「{args[1]}」に" if len(args) > 1 and path[1] != "delete" else ""
        verb = "削除します" if path[1] == "delete" else "変更します"
        return f"サイト設定「{key}」を{value}{verb}", _IMPACT_BY_OPTION.get(
            key, "サイト全体の動作に影響する可能性があります。"
        )
    if path == ("search-replace",) and len(args) >= 2:
        return (
            f"データベース内の「{args[0]}」を「{args[1]}」に置換します",
            "多数のデータが書き換わります。元に戻すにはバックアップが必要です。",
        )
    if path in {("user", "create"), ("user", "update"), ("user", "set-role"), ("user", "add-role")}:
        return (
            f"ユーザー（{_list(args[:1])}）に管理者権限を付与します",
            "サイトの全ての操作ができる権限になります。",
        )
    if everything:
        return f"全ての対象に対して「{label}」を実行します", "一括操作のため、多数のデータに影響します。"
    target = f"（{_list(args)}）" if args else ""
    return f"{label}{target}を実行します", decision.reason_ja
