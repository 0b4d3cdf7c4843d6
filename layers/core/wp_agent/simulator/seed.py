"""The deterministic sample network "Argo Note サンプルサイト" (fixed dates, no randomness).

Facts tests rely on are listed in `SEED_FACTS`; `build_site()` returns a fresh document and
`generate_posts()` adds numbered posts (the benchmark's 1,000-post site).
"""

from __future__ import annotations

from typing import Any

from wp_agent.simulator.model import (
    Blog,
    CatalogEntry,
    CommentRow,
    JSONDict,
    PluginRow,
    PostRow,
    SiteRow,
    ThemeRow,
    UserRow,
)
from wp_agent.simulator.wordpress.clock import ZERO_DATE, gmt_from_local
from wp_agent.simulator.wordpress.posts import default_guid
from wp_agent.simulator.wordpress.taxonomy import term_row
from wp_agent.simulator.wordpress.users import hash_password

SITE_FORMAT = "wp-sim-site/1"
HOME = "https://example.test"
CORE_VERSION = "6.5.5"

SEED_FACTS: dict[str, Any] = {
    "draft_post_ids": [40, 41, 45, 46],
    "missing_post_id": 47,
    "publish_post_ids": [1, 10, 11, 12, 18, 48, 55],
    "future_post_ids": [25],
    "private_post_ids": [15],
    "pending_post_ids": [20],
    "trash_post_ids": [22],
    "page_ids": [2, 3, 5, 6],
    "attachment_ids": [30, 31, 32],
    "menu_item_ids": [50, 51, 52],
    "next_post_id": 57,
    "home": HOME,
    "users": {"admin": 1, "hanako": 2, "taro": 3, "yuki": 4},
    "multisite_urls": [f"{HOME}/", f"{HOME}/en/", f"{HOME}/shop/"],
}


# ------------------------------------------------------------------------------------ builders


def _post(
    blog: Blog,
    post_id: int,
    title: str,
    *,
    date: str,
    status: str = "publish",
    post_type: str = "post",
    content: str = "",
    name: str | None = None,
    author: int = 1,
    parent: int = 0,
    menu_order: int = 0,
    mime: str = "",
    guid: str | None = None,
    excerpt: str = "",
) -> PostRow:
    floating = status in ("draft", "pending", "auto-draft")
    date_gmt = ZERO_DATE if floating else gmt_from_local(blog, date)
    if guid is None:
        guid = default_guid(blog, post_id, post_type)
    if name is None:
        name = "" if floating else str(post_id)
    open_status = "closed" if post_type in ("page", "nav_menu_item") else "open"
    row = PostRow(
        ID=post_id,
        post_author=str(author),
        post_date=date,
        post_date_gmt=date_gmt,
        post_content=content,
        post_title=title,
        post_excerpt=excerpt,
        post_status=status,
        comment_status="open" if post_type in ("post", "attachment") else open_status,
        ping_status="open" if post_type == "post" else "closed",
        post_password="",
        post_name=name,
        to_ping="",
        pinged="",
        post_modified=date,
        post_modified_gmt=gmt_from_local(blog, date),
        post_content_filtered="",
        post_parent=parent,
        guid=guid,
        menu_order=menu_order,
        post_type=post_type,
        post_mime_type=mime,
        comment_count="0",
        filter="raw",
    )
    blog.posts.append(row)
    return row


def _term(
    blog: Blog, term_id: int, name: str, slug: str, taxonomy: str, description: str = "", parent: int = 0
) -> None:
    blog.terms.append(term_row(term_id, name, slug, taxonomy, description, parent))


def _relate(blog: Blog, object_id: int, *term_ids: int) -> None:
    for term_id in term_ids:
        blog.relationships.append([object_id, term_id])


def _comment(
    blog: Blog,
    comment_id: int,
    post_id: int,
    author: str,
    email: str,
    content: str,
    date: str,
    approved: str = "1",
    user_id: int = 0,
) -> None:
    blog.comments.append(
        CommentRow(
            comment_ID=str(comment_id),
            comment_post_ID=str(post_id),
            comment_author=author,
            comment_author_email=email,
            comment_author_url="",
            comment_author_IP="203.0.113.10",
            comment_date=date,
            comment_date_gmt=gmt_from_local(blog, date),
            comment_content=content,
            comment_karma="0",
            comment_approved=approved,
            comment_agent="Mozilla/5.0",
            comment_type="comment",
            comment_parent="0",
            user_id=str(user_id),
        )
    )


def _empty_blog() -> JSONDict:
    return {
        "options": [],
        "next_option_id": 1,
        "posts": [],
        "next_post_id": 1,
        "postmeta": [],
        "next_meta_id": 1,
        "terms": [],
        "next_term_id": 1,
        "term_relationships": [],
        "comments": [],
        "next_comment_id": 1,
    }


def _options(blog: Blog, *, home: str, name: str, description: str, theme: str, plugins: list[str]) -> None:
    values: list[tuple[str, Any]] = [
        ("siteurl", home),
        ("home", home),
        ("blogname", name),
        ("blogdescription", description),
        ("users_can_register", "0"),
        ("admin_email", "admin@example.test"),
        ("start_of_week", "1"),
        ("use_smilies", "1"),
        ("require_name_email", "1"),
        ("comments_notify", "1"),
        ("posts_per_rss", "10"),
        ("rss_use_excerpt", "0"),
        ("default_category", "1"),
        ("default_comment_status", "open"),
        ("default_ping_status", "open"),
        ("posts_per_page", "10"),
        ("date_format", "Y年n月j日"),
        ("time_format", "g:i A"),
        ("comment_moderation", "0"),
        ("moderation_notify", "1"),
        ("permalink_structure", "/%postname%/"),
        ("blog_charset", "UTF-8"),
        ("active_plugins", plugins),
        ("category_base", ""),
        ("gmt_offset", ""),
        ("template", theme if theme != "argo-note-child" else "twentytwentythree"),
        ("stylesheet", theme),
        ("comment_registration", "0"),
        ("default_role", "subscriber"),
        ("db_version", "57155"),
        ("uploads_use_yearmonth_folders", "1"),
        ("upload_path", ""),
        ("blog_public", "1"),
        ("show_on_front", "posts"),
        ("tag_base", ""),
        ("show_avatars", "1"),
        ("thumbnail_size_w", "150"),
        ("thumbnail_size_h", "150"),
        ("medium_size_w", "300"),
        ("medium_size_h", "300"),
        ("large_size_w", "1024"),
        ("large_size_h", "1024"),
        ("timezone_string", "Asia/Tokyo"),
        ("page_for_posts", "0"),
        ("page_on_front", "0"),
        ("default_post_format", "0"),
        ("WPLANG", "ja"),
        ("site_icon", "0"),
        ("initial_db_version", "56657"),
        ("recently_activated", []),
        ("fresh_site", "0"),
    ]
    for option_name, value in values:
        blog.set_option(option_name, value)


# ------------------------------------------------------------------------------------ blog 1


_ARTICLE = "<!-- wp:paragraph -->\n<p>{body}</p>\n<!-- /wp:paragraph -->"


def _main_blog() -> JSONDict:
    raw = _empty_blog()
    blog = Blog(raw, 1)
    _options(
        blog,
        home=HOME,
        name="Argo Note サンプルサイト",
        description="AIと一緒に育てるWordPressサイト",
        theme="twentytwentyfour",
        plugins=[
            "akismet/akismet.php",
            "contact-form-7/wp-contact-form-7.php",
            "wp-multibyte-patch/wp-multibyte-patch.php",
        ],
    )
    blog.set_option("theme_mods_twentytwentyfour", {"nav_menu_locations": {"primary": 11, "footer": 12}})
    blog.set_option("sticky_posts", [])
    blog.set_option("_transient_argo_note_feed_cache", "cached-feed-body", autoload="no")

    def article(text: str) -> str:
        return _ARTICLE.format(body=text)

    _post(
        blog,
        1,
        "Argo Note へようこそ",
        date="2024-01-10 09:00:00",
        name="welcome",
        content=article(
            "WordPress へようこそ。こちらは最初の投稿です。編集または削除してから、コンテンツ作成を始めてください。"
        ),
    )
    _post(
        blog,
        2,
        "サンプルページ",
        date="2024-01-10 09:00:00",
        post_type="page",
        name="sample-page",
        content=article("これはサンプルページです。同じ位置に固定され、サイトナビゲーションに表示されます。"),
    )
    _post(
        blog,
        3,
        "プライバシーポリシー",
        date="2024-01-10 09:00:00",
        post_type="page",
        status="draft",
        content=article("私たちのサイトアドレスは https://example.test です。"),
    )
    _post(
        blog,
        5,
        "会社概要",
        date="2024-02-01 10:00:00",
        post_type="page",
        name="about",
        content=article("Argo Note は日本語で WordPress を運用するためのサービスです。"),
    )
    _post(
        blog,
        6,
        "お問い合わせ",
        date="2024-02-01 10:05:00",
        post_type="page",
        name="contact",
        content='<!-- wp:shortcode -->\n[contact-form-7 id="7" title="お問い合わせ"]\n<!-- /wp:shortcode -->',
    )
    _post(
        blog,
        10,
        "WordPressの始め方ガイド",
        date="2024-03-05 10:00:00",
        author=2,
        name="getting-started",
        content=article("サーバーの準備からテーマの選び方まで、WordPress を始める手順を解説します。"),
    )
    _post(
        blog,
        11,
        "SEO対策の基本10選",
        date="2024-03-20 11:30:00",
        author=3,
        name="seo-basics",
        content=article("検索エンジンに評価されるための基本的な SEO 対策を 10 個紹介します。"),
    )
    _post(
        blog,
        12,
        "ブログ記事の書き方のコツ",
        date="2024-04-02 09:15:00",
        author=3,
        name="writing-tips",
        content=article("読みやすい記事を書くための構成と見出しのコツをまとめました。"),
    )
    _post(
        blog,
        15,
        "社内向け：編集ルール",
        date="2024-04-15 18:00:00",
        status="private",
        author=2,
        name="editorial-rules",
        content=article("表記ゆれを防ぐための社内編集ルールです。"),
    )
    _post(
        blog,
        18,
        "画像の最適化で表示速度を改善する方法",
        date="2024-05-10 08:00:00",
        name="image-optimization",
        content=article("WebP 形式と遅延読み込みで、ページの表示速度を改善できます。"),
    )
    _post(
        blog,
        20,
        "レビュー待ち：プラグイン比較記事",
        date="2024-06-01 14:00:00",
        status="pending",
        author=3,
        content=article("人気のバックアップ用プラグインを比較しました。"),
    )
    _post(
        blog,
        22,
        "古いキャンペーンのお知らせ",
        date="2023-12-01 12:00:00",
        status="trash",
        name="old-campaign__trashed",
        content=article("このキャンペーンは終了しました。"),
    )
    _post(
        blog,
        25,
        "年末年始の営業時間のお知らせ",
        date="2030-12-25 09:00:00",
        status="future",
        name="new-year-holidays",
        content=article("年末年始の営業時間についてお知らせします。"),
    )
    _post(
        blog,
        30,
        "hero-image",
        date="2024-05-10 07:55:00",
        status="inherit",
        post_type="attachment",
        name="hero-image",
        parent=18,
        mime="image/jpeg",
        guid=f"{HOME}/wp-content/uploads/2024/05/hero-image.jpg",
    )
    _post(
        blog,
        31,
        "logo",
        date="2024-01-12 10:00:00",
        status="inherit",
        post_type="attachment",
        name="logo",
        mime="image/png",
        guid=f"{HOME}/wp-content/uploads/2024/01/logo.png",
    )
    _post(
        blog,
        32,
        "company-profile",
        date="2024-02-01 09:50:00",
        status="inherit",
        post_type="attachment",
        name="company-profile",
        parent=5,
        mime="application/pdf",
        guid=f"{HOME}/wp-content/uploads/2024/02/company-profile.pdf",
    )
    _post(
        blog,
        40,
        "Gutenbergブロックエディタ入門",
        date="2024-07-01 10:00:00",
        status="draft",
        content=article("ブロックエディタの基本操作を画面付きで説明します。"),
    )
    _post(
        blog,
        41,
        "ChatGPTで記事作成を効率化する",
        date="2024-07-10 16:20:00",
        status="draft",
        author=3,
        content=article("生成 AI を下書き作成に活用する方法を紹介します。"),
    )
    _post(
        blog,
        45,
        "AIで変わるコンテンツ制作の未来",
        date="2024-08-01 10:00:00",
        status="draft",
        author=2,
        content=article("生成 AI と編集者が協働する、これからのコンテンツ制作について考えます。"),
    )
    _post(
        blog,
        46,
        "WP-CLIで始める運用自動化",
        date="2024-08-05 15:45:00",
        status="draft",
        content=article("WP-CLI を使って WordPress の定型作業を自動化する方法を紹介します。"),
    )
    _post(
        blog,
        48,
        "夏季休業のお知らせ",
        date="2024-08-09 09:00:00",
        name="summer-holidays",
        content=article("8月13日から16日まで夏季休業とさせていただきます。"),
    )
    for item_id, order in ((50, 1), (51, 2), (52, 1)):
        title = "ブログ" if item_id == 51 else ""
        _post(
            blog,
            item_id,
            title,
            date="2024-02-01 11:00:00",
            post_type="nav_menu_item",
            name=str(item_id),
            menu_order=order,
        )
    _post(
        blog,
        55,
        "サイトリニューアルのお知らせ",
        date="2024-09-01 09:00:00",
        name="site-renewal",
        content=article("デザインを一新しました。今後ともよろしくお願いいたします。"),
    )
    raw["next_post_id"] = SEED_FACTS["next_post_id"]

    meta: list[tuple[int, str, Any]] = [
        (10, "subtitle", "初心者向け完全ガイド"),
        (10, "views", "1520"),
        (11, "views", "980"),
        (18, "_thumbnail_id", "30"),
        (22, "_wp_trash_meta_status", "publish"),
        (22, "_wp_trash_meta_time", "1706745600"),
        (30, "_wp_attached_file", "2024/05/hero-image.jpg"),
        (30, "_wp_attachment_image_alt", "トップページのヒーロー画像"),
        (31, "_wp_attached_file", "2024/01/logo.png"),
        (32, "_wp_attached_file", "2024/02/company-profile.pdf"),
        (45, "subtitle", "生成AIと編集者の協働"),
        (45, "_edit_last", "2"),
        (46, "subtitle", "定型作業をコマンドで"),
    ]
    for item_id, item_type, object_type, object_id, url in (
        (50, "post_type", "page", "5", ""),
        (51, "custom", "custom", "51", f"{HOME}/blog/"),
        (52, "post_type", "page", "6", ""),
    ):
        meta += [
            (item_id, "_menu_item_type", item_type),
            (item_id, "_menu_item_menu_item_parent", "0"),
            (item_id, "_menu_item_object_id", object_id),
            (item_id, "_menu_item_object", object_type),
            (item_id, "_menu_item_target", ""),
            (item_id, "_menu_item_classes", [""]),
            (item_id, "_menu_item_xfn", ""),
            (item_id, "_menu_item_url", url),
        ]
    for post_id, key, value in meta:
        blog.add_meta(post_id, key, value)

    _term(blog, 1, "未分類", "uncategorized", "category")
    _term(blog, 3, "WordPress", "wordpress", "category", "WordPress の使い方")
    _term(blog, 4, "マーケティング", "marketing", "category", "集客と分析")
    _term(blog, 5, "お知らせ", "news", "category")
    _term(blog, 6, "SEO", "seo", "category", "検索エンジン最適化", parent=4)
    _term(blog, 7, "初心者", "beginner", "post_tag")
    _term(blog, 8, "チュートリアル", "tutorial", "post_tag")
    _term(blog, 9, "自動化", "automation", "post_tag")
    _term(blog, 10, "生成AI", "generative-ai", "post_tag")
    _term(blog, 11, "メインメニュー", "main-menu", "nav_menu")
    _term(blog, 12, "フッターメニュー", "footer-menu", "nav_menu")
    raw["next_term_id"] = 13
    for related_id, term_ids in (
        (1, (1,)),
        (10, (3, 7, 8)),
        (11, (4, 6)),
        (12, (3, 8)),
        (15, (1,)),
        (18, (3,)),
        (20, (3,)),
        (22, (5,)),
        (25, (5,)),
        (40, (3, 8)),
        (41, (3, 10)),
        (45, (1, 10)),
        (46, (3, 9)),
        (48, (5,)),
        (55, (5,)),
        (50, (11,)),
        (51, (11,)),
        (52, (12,)),
    ):
        _relate(blog, related_id, *term_ids)

    _comment(
        blog,
        1,
        1,
        "WordPress コメントの投稿者",
        "wapuu@wordpress.example",
        "こんにちは、これはコメントです。",
        "2024-01-10 09:00:00",
    )
    _comment(
        blog, 2, 10, "鈴木一郎", "ichiro@example.jp", "とても分かりやすい記事でした！", "2024-03-06 12:10:00"
    )
    _comment(
        blog,
        3,
        10,
        "田中",
        "tanaka@example.jp",
        "テーマの選び方についても詳しく知りたいです。",
        "2024-03-07 08:45:00",
        approved="0",
    )
    _comment(
        blog,
        4,
        11,
        "cheap-seo",
        "spam@spam.example",
        "激安SEOツールはこちら http://spam.example/",
        "2024-03-21 03:00:00",
        approved="spam",
    )
    _comment(
        blog,
        5,
        12,
        "佐藤 太郎",
        "taro@example.test",
        "補足：見出しは h2 から始めましょう。",
        "2024-04-03 10:00:00",
        user_id=3,
    )
    _comment(
        blog, 6, 11, "匿名", "anon@example.jp", "削除予定のコメント", "2024-03-22 09:00:00", approved="trash"
    )
    raw["next_comment_id"] = 7
    for post in blog.posts:
        approved = [
            c
            for c in blog.comments
            if c["comment_post_ID"] == str(post["ID"]) and c["comment_approved"] == "1"
        ]
        post["comment_count"] = str(len(approved))
    return raw


def _secondary_blog(blog_id: int, path: str, name: str, description: str, theme: str) -> JSONDict:
    raw = _empty_blog()
    blog = Blog(raw, blog_id)
    home = f"{HOME}{path.rstrip('/')}"
    _options(
        blog, home=home, name=name, description=description, theme=theme, plugins=["akismet/akismet.php"]
    )
    if blog_id == 2:
        _post(
            blog,
            1,
            "Welcome to Argo Note",
            date="2024-05-01 09:00:00",
            name="welcome",
            content=_ARTICLE.format(body="This is the English edition of Argo Note."),
        )
        _post(blog, 2, "About us", date="2024-05-01 09:00:00", post_type="page", name="about")
        _post(
            blog, 3, "Automating WordPress with WP-CLI", date="2024-05-20 10:00:00", status="draft", author=3
        )
    else:
        _post(
            blog,
            1,
            "ショップオープンのお知らせ",
            date="2024-06-01 10:00:00",
            name="shop-open",
            content=_ARTICLE.format(body="オンラインショップをオープンしました。"),
        )
        _post(blog, 2, "商品一覧", date="2024-06-01 10:00:00", post_type="page", name="products")
    raw["next_post_id"] = len(blog.posts) + 1
    _term(blog, 1, "未分類" if blog_id == 3 else "Uncategorized", "uncategorized", "category")
    raw["next_term_id"] = 2
    for post in blog.posts:
        if post["post_type"] == "post":
            _relate(blog, post["ID"], 1)
    return raw


# ------------------------------------------------------------------------------------ network


def _users() -> list[UserRow]:
    def user(
        user_id: int, login: str, email: str, display: str, registered: str, roles: dict[str, list[str]]
    ) -> UserRow:
        return UserRow(
            ID=user_id,
            user_login=login,
            user_pass=hash_password(f"argo-sample-{login}"),
            user_nicename=login,
            user_email=email,
            user_url="",
            user_registered=registered,
            user_activation_key="",
            user_status=0,
            display_name=display,
            roles=roles,
        )

    every = {"1": ["administrator"], "2": ["administrator"], "3": ["administrator"]}
    return [
        user(1, "admin", "admin@example.test", "管理者", "2024-01-10 00:00:00", every),
        user(2, "hanako", "hanako@example.test", "山田 花子", "2024-01-15 01:00:00", {"1": ["editor"]}),
        user(
            3,
            "taro",
            "taro@example.test",
            "佐藤 太郎",
            "2024-02-20 02:30:00",
            {"1": ["author"], "2": ["author"]},
        ),
        user(4, "yuki", "yuki@example.test", "鈴木 ゆき", "2024-06-10 05:00:00", {"1": ["subscriber"]}),
    ]


def _usermeta(users: list[UserRow]) -> list[dict[str, Any]]:
    names = {1: ("", ""), 2: ("花子", "山田"), 3: ("太郎", "佐藤"), 4: ("ゆき", "鈴木")}
    rows: list[dict[str, Any]] = []
    for user in users:
        first, last = names[user["ID"]]
        for key, value in (
            ("nickname", user["user_login"]),
            ("first_name", first),
            ("last_name", last),
            ("description", ""),
            ("rich_editing", "true"),
            ("locale", ""),
            ("show_admin_bar_front", "true"),
        ):
            rows.append(
                {"meta_id": len(rows) + 1, "object_id": user["ID"], "meta_key": key, "meta_value": value}
            )
    return rows


def _themes() -> list[ThemeRow]:
    def theme(
        slug: str,
        name: str,
        version: str,
        *,
        update: str | None = None,
        template: str | None = None,
        author: str = "the WordPress team",
        locations: dict[str, str] | None = None,
        description: str = "",
        tags: list[str] | None = None,
    ) -> ThemeRow:
        return ThemeRow(
            stylesheet=slug,
            template=template or slug,
            name=name,
            version=version,
            author=author,
            description=description or f"{name} theme.",
            tags=tags or ["blog", "one-column", "custom-colors"],
            update_version=update,
            menu_locations=locations
            if locations is not None
            else {"primary": "Primary Menu", "footer": "Footer Menu"},
        )

    return [
        theme(
            "argo-note-child",
            "Argo Note Child",
            "1.0.0",
            template="twentytwentythree",
            author="Argo Note",
            description="Twenty Twenty-Three をベースにした子テーマ。",
        ),
        theme("flavor", "Flavor", "1.0.0", author="Flavor Studio", locations={"header": "Header Menu"}),
        theme(
            "flavor-flavor",
            "Flavor Flavor",
            "2.1.0",
            author="Flavor Studio",
            locations={"header": "Header Menu"},
        ),
        theme(
            "flavor-flavor-flavor",
            "Flavor Flavor Flavor",
            "0.9.3",
            author="Flavor Studio",
            locations={"header": "Header Menu"},
        ),
        theme(
            "twentytwentyfour",
            "Twenty Twenty-Four",
            "1.1",
            update="1.2",
            description="Twenty Twenty-Four is designed to be flexible, versatile and applicable to any website.",
        ),
        theme(
            "twentytwentythree",
            "Twenty Twenty-Three",
            "1.4",
            description="Twenty Twenty-Three is designed to take advantage of the new design tools.",
        ),
        theme(
            "twentytwentytwo",
            "Twenty Twenty-Two",
            "1.7",
            description="Built on a solidly designed foundation, Twenty Twenty-Two embraces the idea that everyone deserves a truly unique website.",
        ),
    ]


def _plugins() -> list[PluginRow]:
    def plugin(
        file: str, title: str, version: str, author: str, description: str, update: str | None = None
    ) -> PluginRow:
        return PluginRow(
            file=file,
            title=title,
            version=version,
            author=author,
            description=description,
            update_version=update,
            network_only=False,
        )

    return [
        plugin(
            "akismet/akismet.php",
            "Akismet Anti-spam: Spam Protection",
            "5.3.2",
            "Automattic - Anti-spam Team",
            "Used by millions, Akismet is quite possibly the best way in the world to protect your blog from spam.",
            update="5.3.3",
        ),
        plugin(
            "classic-editor/classic-editor.php",
            "Classic Editor",
            "1.6.3",
            "WordPress Contributors",
            "Enables the WordPress classic editor and the old-style Edit Post screen.",
        ),
        plugin(
            "contact-form-7/wp-contact-form-7.php",
            "Contact Form 7",
            "5.9.3",
            "Takayuki Miyoshi",
            "Just another contact form plugin. Simple but flexible.",
            update="5.9.8",
        ),
        plugin(
            "hello-dolly/hello.php",
            "Hello Dolly",
            "1.7.2",
            "Matt Mullenweg",
            "This is not just a plugin, it symbolizes the hope and enthusiasm of an entire generation.",
        ),
        plugin(
            "wp-multibyte-patch/wp-multibyte-patch.php",
            "WP Multibyte Patch",
            "2.9",
            "Seisuke Kuraishi",
            "Multibyte functionality enhancement for the WordPress Japanese package.",
        ),
    ]


def _catalog() -> dict[str, list[CatalogEntry]]:
    def entry(
        slug: str, name: str, version: str, author: str, description: str, rating: int, ratings: int
    ) -> CatalogEntry:
        return CatalogEntry(
            slug=slug,
            name=name,
            version=version,
            author=author,
            description=description,
            rating=rating,
            num_ratings=ratings,
        )

    return {
        "plugins": [
            entry(
                "akismet",
                "Akismet Anti-spam: Spam Protection",
                "5.3.3",
                "Automattic - Anti-spam Team",
                "The best anti-spam protection to block spam comments.",
                92,
                1050,
            ),
            entry(
                "classic-editor",
                "Classic Editor",
                "1.6.4",
                "WordPress Contributors",
                'Enables the previous "classic" editor.',
                98,
                1200,
            ),
            entry(
                "contact-form-7",
                "Contact Form 7",
                "5.9.8",
                "Takayuki Miyoshi",
                "Just another contact form plugin. Simple but flexible.",
                80,
                2100,
            ),
            entry(
                "hello-dolly",
                "Hello Dolly",
                "1.7.2",
                "Matt Mullenweg",
                "This is not just a plugin, it symbolizes the hope and enthusiasm of an entire generation.",
                76,
                260,
            ),
            entry(
                "jetpack",
                "Jetpack – WP Security, Backup, Speed, & Growth",
                "13.6",
                "Automattic",
                "Improve your WP security with powerful one-click tools.",
                78,
                1900,
            ),
            entry(
                "wordpress-seo", "Yoast SEO", "23.1", "Team Yoast", "Improve your WordPress SEO.", 96, 27800
            ),
            entry(
                "woocommerce",
                "WooCommerce",
                "9.1.2",
                "Automattic",
                "Everything you need to launch an online store in days.",
                90,
                4500,
            ),
            entry(
                "wp-multibyte-patch",
                "WP Multibyte Patch",
                "2.9",
                "Seisuke Kuraishi",
                "Multibyte functionality enhancement for the WordPress Japanese package.",
                94,
                70,
            ),
            entry(
                "backwpup",
                "BackWPup – WordPress Backup & Restore Plugin",
                "4.1.2",
                "BackWPup",
                "Schedule complete automatic backups of your WordPress installation.",
                86,
                1100,
            ),
        ],
        "themes": [
            entry(
                "astra",
                "Astra",
                "4.7.3",
                "Brainstorm Force",
                "Astra is fast, fully customizable & beautiful.",
                98,
                5800,
            ),
            entry(
                "generatepress",
                "GeneratePress",
                "3.4.0",
                "Tom Usborne",
                "GeneratePress is a lightweight WordPress theme.",
                98,
                1800,
            ),
            entry("flavor", "Flavor", "1.0.0", "Flavor Studio", "A simple flavor.", 60, 3),
            entry("flavor-flavor", "Flavor Flavor", "2.1.0", "Flavor Studio", "Twice the flavor.", 70, 5),
            entry(
                "twentytwentyfour",
                "Twenty Twenty-Four",
                "1.2",
                "the WordPress team",
                "Twenty Twenty-Four is designed to be flexible.",
                88,
                120,
            ),
            entry(
                "twentytwentythree",
                "Twenty Twenty-Three",
                "1.4",
                "the WordPress team",
                "Twenty Twenty-Three is designed to take advantage of the new design tools.",
                72,
                180,
            ),
            entry(
                "twentytwentytwo",
                "Twenty Twenty-Two",
                "1.7",
                "the WordPress team",
                "Twenty Twenty-Two embraces the idea that everyone deserves a truly unique website.",
                70,
                200,
            ),
            entry(
                "twentytwentyone",
                "Twenty Twenty-One",
                "2.2",
                "the WordPress team",
                "Twenty Twenty-One is a blank canvas for your ideas.",
                84,
                320,
            ),
        ],
    }


def _sites() -> list[SiteRow]:
    def site(blog_id: int, path: str, registered: str) -> SiteRow:
        return SiteRow(
            blog_id=blog_id,
            domain="example.test",
            path=path,
            registered=registered,
            last_updated=registered,
            public=1,
            archived=0,
            mature=0,
            spam=0,
            deleted=0,
            lang_id=0,
        )

    return [
        site(1, "/", "2024-01-10 00:00:00"),
        site(2, "/en/", "2024-05-01 00:00:00"),
        site(3, "/shop/", "2024-06-01 01:00:00"),
    ]


def build_site() -> JSONDict:
    """A fresh copy of the sample network."""
    users = _users()
    return {
        "format": SITE_FORMAT,
        "core_version": CORE_VERSION,
        "bootstrap_ms": 0,
        "faults": [],
        "next_fault_id": 1,
        "multisite": True,
        "network": {
            "domain": "example.test",
            "path": "/",
            "site_name": "Argo Note ネットワーク",
            "active_sitewide_plugins": [],
            "next_blog_id": 4,
        },
        "sites": _sites(),
        "blogs": {
            "1": _main_blog(),
            "2": _secondary_blog(
                2, "/en/", "Argo Note English", "WordPress with AI, in English", "twentytwentythree"
            ),
            "3": _secondary_blog(3, "/shop/", "Argo Note ショップ", "公式オンラインショップ", "flavor"),
        },
        "users": users,
        "next_user_id": 5,
        "usermeta": _usermeta(users),
        "next_usermeta_id": 100,
        "themes": _themes(),
        "plugins": _plugins(),
        "catalog": _catalog(),
    }


def new_blog(blog_id: int, home: str, title: str) -> JSONDict:
    """What `wpmu_create_blog` installs: default options plus the stock first post and page."""
    raw = _empty_blog()
    blog = Blog(raw, blog_id)
    _options(blog, home=home, name=title, description="", theme="twentytwentyfour", plugins=[])
    return raw


def generate_posts(blog: Blog, count: int, *, status: str = "publish", post_type: str = "post") -> list[int]:
    """Append `count` numbered posts with fixed dates (deterministic)."""
    ids: list[int] = []
    start = len([p for p in blog.posts if p["post_type"] == post_type])
    for offset in range(count):
        number = start + offset + 1
        post_id = blog.new_post_id()
        day = 1 + number % 28
        month = 1 + (number // 28) % 12
        date = f"2023-{month:02d}-{day:02d} {8 + number % 10:02d}:{number % 60:02d}:00"
        _post(
            blog,
            post_id,
            f"サンプル記事 {number}",
            date=date,
            status=status,
            post_type=post_type,
            name=f"sample-post-{number}" if status not in ("draft", "pending") else "",
            content=_ARTICLE.format(body=f"これは自動生成されたサンプル記事 {number} の本文です。"),
        )
        if post_type == "post":
            _relate(blog, post_id, 1)
        ids.append(post_id)
    return ids
