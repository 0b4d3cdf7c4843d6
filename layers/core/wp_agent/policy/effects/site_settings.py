"""Declared effects of writes to the site's settings, appearance, extensions, users and network, and of
the lookups that store what they fetched. (See declaration.py for what a declaration means.)"""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.masking.secret_names import folded
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.effects.content import meta_write
from wp_agent.policy.effects.declaration import ANY, NEW, Arg, Effect, Names, Rows
from wp_agent.policy.effects.options import OPTIONS, THEME_MODS
from wp_agent.policy.effects.site_address import SITE_SLUG, site_address_checks
from wp_agent.policy.effects.values import ANY as ANY_VALUE
from wp_agent.policy.effects.values import (
    BARE,
    LANGUAGE,
    SHOWN_ON_EVERY_PAGE,
    SHOWN_WITH_SITES,
    SHOWN_WITH_USERS,
    SLUG,
    SiteCheck,
    ValueCheck,
    content,
    int_range,
    one_of,
    plain_text,
    text,
    visible_text,
    visible_url,
)
from wp_agent.policy.rule import Verdict

D = PolicyCategory.DESTRUCTIVE

# WordPress's update checks store what they fetched in site transients (the network's table on a
# multisite, the options table otherwise).
_UPDATE_CHECKS = (
    Rows("sitemeta", keys=(Names(("_site_transient_*",)),)),
    Rows("options", keys=(Names(("_site_transient_*", "_transient_*")),)),
)
_OUTPUT = {
    "format": one_of("table", "csv", "json", "yaml", "count", "ids"),
    "field": SLUG,
    "fields": text(1_000),
}
_EXTENSION_FILTERS = {
    name: text(200)
    for name in (
        "name", "status", "update", "version", "update_version", "title", "auto_update", "author",
        "description", "file", "update_package", "update_id", "tested_up_to", "requires", "requires_php",
        "wporg_status", "wporg_last_updated",
    )
}  # fmt: skip
# `--skip-update-check` given as a bare flag makes a listing a read (read_only_flags.py); any other
# spelling runs the update check, whose effect is declared here.
_UPDATE_CHECK_SWITCHES = {"skip-update-check": ANY_VALUE, "no-skip-update-check": ANY_VALUE}
_LANGUAGE_FILTERS = {
    name: text(200)
    for name in ("language", "english_name", "native_name", "status", "update", "updated", "plugin", "theme")
}


def _stores_update_check(
    summary: str, fields: dict[str, ValueCheck], example: str, near: str, *, named: bool = False
) -> Effect:
    """A lookup that stores the update check's result; `named`: it takes extension names."""
    return Effect(
        summary_ja=summary,
        changes=_UPDATE_CHECKS,
        fields=fields,
        args=(SLUG,) if named else (),
        repeat=named,
        match=(example,),
        not_match=(near,),
    )


def _option_refine(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    args = cmd.args_after(path)
    if not args:
        return None
    key = folded(args[0])
    check = OPTIONS.get(key)
    if check is None:
        return Verdict(
            D,
            "confirm.option.unlisted",
            f"設定「{args[0]}」は、承認なしで変更できる設定（表示件数・日付の形式・コメント・画像サイズなど）に"
            "含まれません。サイト全体の表示や動作が変わる恐れがあるため承認が必要です",
            args[0],
        )
    value = args[1] if len(args) > 1 else None
    if not check.accepts(value):
        return Verdict(
            D,
            "confirm.option.value",
            f"設定「{args[0]}」の値は{check.describe_ja}だけを承認なしで設定できます。それ以外は承認が必要です",
            args[0],
        )
    return None


def _theme_mod_refine(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    args = cmd.args_after(path)
    if not args:
        return None
    check = THEME_MODS.get(folded(args[0]))
    if check is None:
        return Verdict(
            D,
            "confirm.theme_mod.unlisted",
            f"テーマ設定「{args[0]}」は、承認なしで変更できる設定（背景色・ヘッダーの文字色・ロゴ）に含まれないため承認が必要です",
            args[0],
        )
    if not check.accepts(args[1] if len(args) > 1 else None):
        return Verdict(
            D,
            "confirm.theme_mod.value",
            f"テーマ設定「{args[0]}」の値は{check.describe_ja}だけを承認なしで設定できます",
            args[0],
        )
    return None


def _theme_mod_site_checks(cmd: ParsedCommand, path: tuple[str, ...]) -> list[SiteCheck]:
    args = cmd.args_after(path)
    check = THEME_MODS.get(folded(args[0])) if len(args) == 2 else None
    return [check.site_check(args[1])] if check is not None and check.site_check is not None else []


# Core widgets (their own settings go through the widget's update code as the configured user);
# the RSS widget is left out: it makes WordPress fetch its URL on every page view.
_CORE_WIDGETS = one_of(
    "archives", "block", "calendar", "categories", "custom_html", "media_audio", "media_gallery",
    "media_image", "media_video", "meta", "nav_menu", "pages", "recent-comments", "recent-posts",
    "search", "tag_cloud", "text", describe_ja="WordPress標準のウィジェット（RSSを除く）",
)  # fmt: skip
_WIDGET_SETTINGS = {
    # What WordPress shows as content (blocks, embeds: agent-checked for what the server fetches)
    "text": content(SHOWN_ON_EVERY_PAGE),
    "content": content(SHOWN_ON_EVERY_PAGE),
    **{name: visible_text(SHOWN_ON_EVERY_PAGE) for name in ("title", "caption", "alt", "image_title")},
    "link_url": visible_url(SHOWN_ON_EVERY_PAGE),
    # not `url`: the RSS widget fetches it on every page view (a URL checked now may resolve elsewhere)
    **{
        name: text()
        for name in (
            "filter",
            "visual",
            "count",
            "dropdown",
            "hierarchical",
            "sortby",
            "exclude",
            "number",
            "show_date",
            "nav_menu",
            "taxonomy",
            "attachment_id",
            "size",
            "link_type",
            "ids",
            "columns",
        )
    },
}
_WIDGET_OPTIONS = (Rows("options", keys=(Names(("widget_*", "sidebars_widgets")),)),)
_PROFILE_FIELDS = {
    "display_name": visible_text(SHOWN_WITH_USERS, 250),
    "nickname": visible_text(SHOWN_WITH_USERS, 250),
    "first_name": visible_text(SHOWN_WITH_USERS, 250),
    "last_name": visible_text(SHOWN_WITH_USERS, 250),
    "description": visible_text(SHOWN_WITH_USERS),
    "user_url": visible_url(SHOWN_WITH_USERS),
    "user_nicename": text(50),
    "rich_editing": one_of("true", "false"),
    "syntax_highlighting": one_of("true", "false"),
    "comment_shortcuts": one_of("true", "false"),
    "admin_color": plain_text(50),
    "use_ssl": one_of("0", "1"),
    "show_admin_bar_front": one_of("true", "false"),
    "locale": ValueCheck("言語コード", lambda v: v == "" or LANGUAGE.accepts(v)),
    "user_registered": text(30),
    "skip-email": BARE,
}
_PROFILE_META = Names(("first_name", "last_name", "nickname", "description", "rich_editing", "syntax_highlighting",
                       "comment_shortcuts", "admin_color", "use_ssl", "show_admin_bar_front", "locale"))  # fmt: skip
SITE_EFFECTS: dict[tuple[str, ...], Effect] = {
    # Lookups that store the update check's result (reads with --skip-update-check).
    ("theme", "list"): _stores_update_check(
        "テーマの更新確認の結果（サイトの一時データ）",
        {**_OUTPUT, **_EXTENSION_FILTERS, **_UPDATE_CHECK_SWITCHES},
        "theme list --status=active --format=json",
        "theme list --exec=x",
    ),
    ("theme", "get"): _stores_update_check(
        "テーマの更新確認の結果（サイトの一時データ）",
        _OUTPUT,
        "theme get twentytwentyone --format=json",
        "theme get twentytwentyone --force-check",
        named=True,
    ),
    ("theme", "status"): _stores_update_check(
        "テーマの更新確認の結果（サイトの一時データ）",
        {},
        "theme status twentytwentyone",
        "theme status --network",
        named=True,
    ),
    ("plugin", "list"): _stores_update_check(
        "プラグインの更新確認の結果（サイトの一時データ）",
        {**_OUTPUT, **_EXTENSION_FILTERS, **_UPDATE_CHECK_SWITCHES},
        "plugin list --status=active --format=json",
        "plugin list --exec=x",
    ),
    ("plugin", "status"): _stores_update_check(
        "プラグインの更新確認の結果（サイトの一時データ）",
        {},
        "plugin status akismet",
        "plugin status --network",
        named=True,
    ),
    ("core", "check-update"): _stores_update_check(
        "WordPressの更新確認の結果（サイトの一時データ）",
        {**_OUTPUT, "minor": BARE, "major": BARE, "force-check": BARE},
        "core check-update --format=json",
        "core check-update --version=1",
    ),
    ("language", "plugin", "list"): _stores_update_check(
        "言語パックの更新確認の結果（サイトの一時データ）",
        {**_OUTPUT, **_LANGUAGE_FILTERS},
        "language plugin list akismet --format=json",
        "language plugin list akismet --exec=x",
        named=True,
    ),
    ("language", "theme", "list"): _stores_update_check(
        "言語パックの更新確認の結果（サイトの一時データ）",
        {**_OUTPUT, **_LANGUAGE_FILTERS},
        "language theme list twentytwentyone --format=json",
        "language theme list twentytwentyone --exec=x",
        named=True,
    ),
    # Appearance
    ("theme", "mod", "set"): Effect(
        summary_ja="有効なテーマの設定のうち背景色・ヘッダーの文字色・ロゴ",
        # WordPress keeps the logo in the site_logo option as well (the block themes' setting).
        changes=(Rows("options", keys=(Names(("theme_mods_*", "site_logo")),)),),
        args=(text(200), text(200)),
        refine=_theme_mod_refine,
        site_checks=_theme_mod_site_checks,
        match=("theme mod set background_color '#ffffff'", "theme mod set custom_logo 59"),
        not_match=(
            "theme mod set header_image https://evil.example/x.png",
            "theme mod set custom_css_post_id 3",
        ),
    ),
    ("widget", "add"): Effect(
        summary_ja="サイドバーに標準ウィジェット1件（ウィジェット自身の保存処理を通ります）",
        changes=_WIDGET_OPTIONS,
        fields=_WIDGET_SETTINGS,
        args=(_CORE_WIDGETS, text(100), int_range(0, 1_000)),
        match=("widget add text sidebar-1 --title=お知らせ --text=本文",),
        not_match=(
            "widget add rss sidebar-1 --url=http://169.254.169.254/",
            "widget add akismet_widget sidebar-1",
        ),
    ),
    ("widget", "update"): Effect(
        summary_ja="指定したウィジェットの設定（ウィジェット自身の保存処理を通ります）",
        changes=_WIDGET_OPTIONS,
        fields=_WIDGET_SETTINGS,
        args=(text(100),),
        match=("widget update text-2 --title=お知らせ",),
        not_match=("widget update text-2 --callback=x",),
    ),
    ("widget", "move"): Effect(
        summary_ja="ウィジェットの配置",
        changes=_WIDGET_OPTIONS,
        fields={"position": int_range(0, 1_000), "sidebar-id": text(100)},
        args=(text(100),),
        match=("widget move text-2 --position=1",),
        not_match=("widget move text-2 --sidebar=x",),
    ),
    ("widget", "deactivate"): Effect(
        summary_ja="ウィジェットの配置（使用停止中へ移動）",
        changes=_WIDGET_OPTIONS,
        args=(text(100),),
        repeat=True,
        match=("widget deactivate text-2",),
        not_match=("widget deactivate text-2 --all",),
    ),
    # Users: profiles, their custom fields and the low roles (account_rules.py holds the approvals).
    **{("user", "meta", verb): meta_write("user", verb) for verb in ("add", "update", "patch")},
    ("user", "update"): Effect(
        summary_ja="指定したユーザーのプロフィール項目（表示名・氏名・URL・自己紹介など）",
        changes=(
            Rows(
                "users",
                (Arg(0, rest=True),),
                columns=frozenset({"display_name", "user_url", "user_nicename", "user_registered"}),
            ),
            Rows("usermeta", (Arg(0, rest=True),), keys=(_PROFILE_META,)),
        ),
        fields=_PROFILE_FIELDS,
        args=(text(100),),
        repeat=True,
        match=("user update 3 --display_name='山田 太郎' --user_url=https://example.com",),
        not_match=("user update 3 --user_email=x@example.com", "user update 3 --role=editor"),
    ),
    ("user", "add-role"): Effect(
        summary_ja="指定したユーザーに投稿を公開できない権限グループ（購読者・寄稿者）",
        changes=(Rows("usermeta", (Arg(0),), keys=(Names(("*capabilities", "*user_level")),)),),
        args=(text(100), one_of("subscriber", "contributor")),
        repeat=True,
        match=("user add-role 4 contributor",),
        not_match=("user add-role 4 editor",),
    ),
    # Options: the listed settings only.
    **{
        ("option", verb): Effect(
            summary_ja="承認なしで変更できる設定（表示件数・日付の形式・コメント・画像サイズなど）の値",
            changes=(Rows("options", keys=(Arg(0),)),),
            fields={"autoload": one_of("yes", "no")},
            args=(text(191), text()),
            refine=_option_refine,
            match=(f"option {verb} posts_per_page 10", f"option {verb} date_format 'Y年n月j日'"),
            not_match=(
                f"option {verb} html_type text/plain",
                f"option {verb} show_on_front page",
                f"option {verb} adminhash x",
                f"option {verb} posts_per_page 5 --format=json",
                f"option {verb} date_format '<script>'",
            ),
        )
        for verb in ("add", "update")
    },
    # Multisite: a new site for the network's administrators (with --email: account_rules.py).
    ("site", "create"): Effect(
        summary_ja="ネットワークに新しいサイト1件（その表と、サイトの管理者になる既存の特権管理者の権限）",
        changes=(
            Rows("blogs", (NEW,)),
            Rows("blogmeta", (NEW,)),
            Rows("registration_log", (NEW,)),
            Rows("site_tables", (NEW,)),
            Rows(
                "usermeta",
                (ANY,),
                keys=(Names(("*capabilities", "*user_level", "primary_blog", "source_domain")),),
            ),
            Rows("sitemeta", keys=(Names(("blog_count", "user_count", "_site_transient_*")),)),
            Rows("options", keys=(Names(("_transient_*", "_site_transient_*")),)),
        ),
        fields={
            "slug": SITE_SLUG,
            "title": visible_text(SHOWN_WITH_SITES, 200),
            "private": BARE,
            "porcelain": BARE,
        },
        site_checks=site_address_checks,
        match=("site create --slug=news --title=ニュース --porcelain",),
        not_match=(
            "site create --slug=evil --email=attacker@evil.test",
            "site create --slug=x --network_id=2",
            "site create --slug=wp-admin --title=x",
            "site create --slug='wp-admin\n' --title=x",  # a line end after a reserved name
            "site create --slug=news\u0661 --title=x",  # another script's digit
            "site create --slug=Blog_1",
        ),
    ),
    # Maintenance
    ("cache", "flush"): Effect(
        summary_ja="オブジェクトキャッシュ（データベースとファイルは変わりません）",
        changes=(),
        match=("cache flush",),
        not_match=("cache flush --all",),
    ),
    ("transient", "get"): Effect(
        summary_ja="期限切れの一時データ（読み出すと削除されます）",
        changes=(Rows("options", keys=(Names(("_transient_*",)),)),),
        fields={"format": text(20)},
        args=(text(172),),
        match=("transient get argo_note_feed_cache",),
        not_match=("transient get x --network",),
    ),
    ("transient", "delete"): Effect(
        summary_ja="このサイトの一時データ（キャッシュ）",
        changes=(Rows("options", keys=(Names(("_transient_*", "_site_transient_*")),)),),
        fields={"expired": BARE},
        args=(text(172),),
        match=("transient delete argo_note_feed_cache", "transient delete --expired"),
        not_match=("transient delete --all", "transient delete x --network"),
    ),
    ("rewrite", "flush"): Effect(
        summary_ja="パーマリンクのリライトルール（rewrite_rules）",
        changes=(Rows("options", keys=(Names(("rewrite_rules",)),)),),
        match=("rewrite flush",),
        not_match=("rewrite flush --hard",),
    ),
    ("maintenance-mode", "deactivate"): Effect(
        summary_ja="メンテナンスモードのファイル（.maintenance）の削除",
        changes=(),
        files=(".maintenance",),
        match=("maintenance-mode deactivate",),
        not_match=("maintenance-mode deactivate --all",),
    ),
}
