"""Declared effects of comment and menu writes. (See declaration.py for what a declaration means.)"""

from __future__ import annotations

from collections.abc import Mapping

from wp_agent.policy.effects.content import COUNTS, LAST_UPDATED
from wp_agent.policy.effects.declaration import ANY, NEW, Arg, Effect, Flag, Names, Rows, post_types
from wp_agent.policy.effects.values import (
    BARE,
    DATE,
    EMAIL,
    ID,
    SHOWN_IN_MENUS,
    SHOWN_WITH_COMMENTS,
    ValueCheck,
    int_range,
    one_of,
    plain_text,
    text,
    visible_text,
    visible_url,
)

_COMMENT_FIELDS: dict[str, ValueCheck] = {
    "comment_post_id": ID,  # flag names compare lower-cased (WordPress reads comment_post_ID)
    "comment_content": visible_text(SHOWN_WITH_COMMENTS),
    # WP-CLI stores comments with wp_insert_comment(), past the filters WordPress runs on a comment's
    # author, address and URL (pre_comment_author_* : kses, sanitize): themes print them as stored.
    "comment_author": plain_text(245),
    "comment_author_email": EMAIL,
    "comment_author_url": visible_url(SHOWN_WITH_COMMENTS),
    "comment_approved": one_of("0", "1", "hold", "approve"),
    "comment_parent": ID,
    "comment_type": one_of("comment"),
    "comment_date": DATE,
    "comment_date_gmt": DATE,
}
_COMMENT_STATE_META = Names(("_wp_trash_meta_*", "_wp_trash_meta_status", "_wp_trash_meta_time", "_wp_*"))


def _comment_changes(objects: tuple[Arg | str, ...]) -> tuple[Rows, ...]:
    return (
        Rows("comments", objects),
        Rows("commentmeta", objects, keys=(_COMMENT_STATE_META,)),
        Rows("posts", (ANY,), columns=frozenset({"comment_count"})),
        Rows("options", keys=(Names(("_transient_*", "_site_transient_*")),)),
        LAST_UPDATED,
    )


_MENU_ITEM_FIELDS: Mapping[str, ValueCheck] = {
    "title": visible_text(SHOWN_IN_MENUS, 1_000),
    "link": visible_url(SHOWN_IN_MENUS),
    "description": visible_text(SHOWN_IN_MENUS),
    "attr-title": visible_text(SHOWN_IN_MENUS, 1_000),
    "target": one_of("_blank", ""),
    "classes": plain_text(500),
    "position": int_range(0, 100_000),
    "parent-id": ID,
    "porcelain": BARE,
}


def _menu_item_changes(objects: tuple[Arg | str, ...]) -> tuple[Rows, ...]:
    return (
        Rows("posts", objects, where=post_types("nav_menu_item")),
        Rows(
            "posts",
            (ANY,),
            columns=frozenset({"menu_order", "post_modified", "post_modified_gmt"}),
            where=post_types("nav_menu_item"),
        ),
        # A saved item is re-dated to now (wp_update_nav_menu_item): WordPress keeps the day it had.
        Rows("postmeta", objects, keys=(Names(("_menu_item_*", "_wp_old_date")),)),
        Rows("term_relationships", objects),
        COUNTS,
    )


COMMENT_AND_MENU_EFFECTS: dict[tuple[str, ...], Effect] = {
    ("comment", "create"): Effect(
        summary_ja="新しいコメント1件",
        changes=(
            *_comment_changes((NEW,)),
            Rows("posts", (Flag("comment_post_id"),), columns=frozenset({"comment_count"})),
        ),
        fields={**_COMMENT_FIELDS, "porcelain": BARE},
        match=("comment create --comment_post_ID=1 --comment_content=ありがとうございます --porcelain",),
        not_match=(
            "comment create --comment_post_ID=1 --comment_content=x --comment_author='<img src=x onerror=alert(1)>'",
            "comment create --comment_post_ID=1 --comment_content=x --comment_author_url=javascript:alert(1)",
            "comment create --comment_post_ID=1 --comment_content=x --user_id=1",
            "comment create --comment_post_ID=1 --comment_content=x --comment_author_IP=1.2.3.4",
        ),
    ),
    ("comment", "update"): Effect(
        summary_ja="指定したコメントの項目",
        changes=_comment_changes((Arg(0, rest=True),)),
        fields=_COMMENT_FIELDS,
        args=(ID,),
        repeat=True,
        match=("comment update 3 --comment_content=修正しました",),
        not_match=("comment update 3 --user_id=1", "comment update 3 --comment_type=pingback"),
    ),
    **{
        ("comment", verb): Effect(
            summary_ja="指定したコメントの承認状態",
            changes=_comment_changes((Arg(0, rest=True),)),
            args=(ID,),
            repeat=True,
            match=(f"comment {verb} 3",),
            not_match=(f"comment {verb} 3 --comment_approved=1",),
        )
        for verb in ("approve", "unapprove", "spam", "unspam", "untrash", "recount")
    },
    ("menu", "create"): Effect(
        summary_ja="新しいメニュー1件",
        changes=(Rows("terms", (NEW,)), Rows("term_taxonomy", (NEW,))),
        fields={"porcelain": BARE},
        args=(visible_text(SHOWN_IN_MENUS, 200),),
        match=("menu create メインメニュー --porcelain",),
        not_match=("menu create x --slug=y",),
    ),
    ("menu", "item", "add-post"): Effect(
        summary_ja="メニューに項目1件（投稿へのリンク）",
        changes=_menu_item_changes((NEW,)),
        fields=_MENU_ITEM_FIELDS,
        args=(text(200), ID),
        match=("menu item add-post main-menu 45 --title=新着",),
        not_match=("menu item add-post main-menu 45 --link=javascript:alert(1)",),
    ),
    ("menu", "item", "add-term"): Effect(
        summary_ja="メニューに項目1件（カテゴリ・タグへのリンク）",
        changes=_menu_item_changes((NEW,)),
        fields=_MENU_ITEM_FIELDS,
        args=(text(200), one_of("category", "post_tag"), ID),
        match=("menu item add-term main-menu category 3",),
        not_match=("menu item add-term main-menu nav_menu 10",),
    ),
    ("menu", "item", "add-custom"): Effect(
        summary_ja="メニューに項目1件（任意のURLへのリンク）",
        changes=_menu_item_changes((NEW,)),
        fields=_MENU_ITEM_FIELDS,
        args=(text(200), visible_text(SHOWN_IN_MENUS, 1_000), visible_url(SHOWN_IN_MENUS)),
        match=("menu item add-custom main-menu 公式 https://example.com/",),
        not_match=("menu item add-custom main-menu x 'javascript:alert(1)'",),
    ),
    ("menu", "item", "update"): Effect(
        summary_ja="指定したメニュー項目のタイトル・リンク・位置など",
        changes=_menu_item_changes((Arg(0),)),
        fields={k: v for k, v in _MENU_ITEM_FIELDS.items() if k != "porcelain"},
        args=(ID,),
        match=("menu item update 61 --title=ホーム --position=1",),
        not_match=("menu item update 61 --link=javascript:alert(1)",),
    ),
    **{
        ("menu", "location", verb): Effect(
            summary_ja="テーマのメニュー位置の割り当て（テーマ設定 nav_menu_locations）",
            changes=(Rows("options", keys=(Names(("theme_mods_*",)),)),),
            args=(text(200), text(100)),
            match=(f"menu location {verb} main-menu primary",),
            not_match=(f"menu location {verb} main-menu primary --all",),
        )
        for verb in ("assign", "remove")
    },
}
