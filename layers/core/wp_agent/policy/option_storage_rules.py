"""Options that are storage of something with its own command and checks: upload locations, the
`cron` option (every scheduled hook with its arguments) and the widgets' data."""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.masking import folded
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.rule import OPTION_WRITES, Verdict, argument_rule, written_option

B = PolicyCategory.BLOCKED
D = PolicyCategory.DESTRUCTIVE

# Options whose value decides where uploads are written (a file in the web root is code), or which
# hook runs when (the `cron` option is every scheduled event with its arguments).
_PLACEMENT_OPTIONS = {
    "upload_path": "アップロード先のディレクトリ",
    "upload_url_path": "アップロードファイルのURL",
    "fileupload_url": "アップロードファイルのURL",
    "upload_filetypes": "アップロードできるファイルの種類",
    "cron": "予約イベント（任意のフックと引数を実行できます）",
}


@argument_rule(
    match=(
        "option update upload_path /var/www/html",
        "option set UPLOAD_URL_PATH https://evil.example",
        "option add upload_path wp-content/x",
        "option patch insert cron 1700000000 '{}' --format=json",
        "option update cron '{}' --format=json",
        "option delete cron",
    ),
    not_match=(
        "option get upload_path",
        "option update uploads_use_yearmonth_folders 1",
        "cron event list --format=json",
        "cron event delete wp_privacy_delete_old_export_files",
    ),
    paths=OPTION_WRITES,
)
def placement_and_hooks(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """Upload locations and the `cron` option, which is `cron event schedule` (a hard block: a hook
    runs with the arguments we give it — `importer_scheduled_cleanup --0=<ID>` deletes an attachment
    for good) written by hand."""
    key = written_option(cmd, path)
    meaning = _PLACEMENT_OPTIONS.get(folded(key)) if key is not None else None
    if key is None or meaning is None:
        return None
    return Verdict(
        B,
        "blocked.placement_option",
        f"設定「{key}」（{meaning}）は変更できません",
        key,
    )


@argument_rule(
    match=(
        'option update widget_custom_html \'{"2":{"content":"<script>x</script>"}}\' --format=json',
        "option set sidebars_widgets '{}' --format=json",
        "option patch update widget_text 2 text '<script>x</script>'",
        "option add Widget_Block x",
    ),
    not_match=("option get widget_custom_html --format=json", "widget add custom_html sidebar-1 --content=x"),
    paths=OPTION_WRITES,
)
def widget_storage(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """Widgets stored by hand skip what `widget add|update` does as the configured WordPress user:
    its capability check and HTML filter (on WordPress 6.1, as an editor without unfiltered_html,
    `widget add custom_html` stripped a <script>; `option update widget_custom_html` plus
    `sidebars_widgets` showed it on every page). Widget data is refused; placing existing instances
    (`sidebars_widgets`, as `widget move|deactivate` do, and as undo restores after a theme switch)
    waits for approval."""
    key = written_option(cmd, path)
    if key is not None and folded(key) == "sidebars_widgets":  # placement of existing instances only
        return Verdict(
            D,
            "confirm.widget_placement",
            "ウィジェットの配置（sidebars_widgets）をまとめて変更します。サイト全体に表示されるため承認が必要です",
            key,
        )
    if key is None or not folded(key).startswith("widget_"):
        return None
    return Verdict(
        B,
        "blocked.widget_storage",
        f"ウィジェットの保存データ（{key}）は直接変更できません。widget コマンドを使ってください",
        key,
    )


# WordPress's stored answers of its update API: each offer names the package URL the next `plugin update`
# or background update downloads and installs (update_many() reads the cache it finds, for 12 hours).
_UPDATE_OFFERS = frozenset({"update_plugins", "update_themes", "update_core"})
_TRANSIENT_WRITES = frozenset({("transient", "set"), ("transient", "patch")})


@argument_rule(
    match=(
        "transient patch update update_plugins response akismet/akismet.php package https://evil.example/x.zip --network",
        "transient set UPDATE_THEMES x --network",
        "option patch update _site_transient_update_plugins response x y",
        "site option update _site_transient_update_core x",
        "network meta update 1 _site_transient_update_plugins x",
    ),
    not_match=(
        "transient delete update_plugins --network",
        "transient set argo_cache x",
        "option get _site_transient_update_plugins",
    ),
    paths=OPTION_WRITES | _TRANSIENT_WRITES,
)
def update_offers(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """The update checks' results are written only by WordPress's own check, in every form they are stored."""
    if path in _TRANSIENT_WRITES:
        args = cmd.args_after(path)
        key = args[1 if path[-1] == "patch" else 0] if len(args) > (1 if path[-1] == "patch" else 0) else None
    else:
        key = written_option(cmd, path)
        key = (
            folded(key).removeprefix("_site_transient_").removeprefix("_transient_")
            if key is not None
            else None
        )
    if key is None or folded(key) not in _UPDATE_OFFERS:
        return None
    return Verdict(
        B,
        "blocked.update_offer",
        f"更新情報のキャッシュ（{key}）は書き換えられません（次の更新でダウンロードされるパッケージのURLが含まれます）。"
        "更新の確認は plugin list・theme list・core check-update で行ってください",
        key,
    )
