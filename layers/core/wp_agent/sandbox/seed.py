"""The sandbox's Japanese sample network, declared as data and built with real WP-CLI commands.

`install_commands()` installs WordPress (Japanese) and converts it to a subdirectory multisite;
`plan()` is everything after that — options, users with roles, categories and tags, posts, pages
and drafts at fixed IDs (`post create --import_id`), real media files, comments, menus, transients,
two more sites — each step one WP-CLI argv (run in one process by provision.php).

What tests may rely on is in `SEED_FACTS`; provisioning checks every fact against the finished site
(IDs WordPress assigns itself — attachments, menu items, comments, terms — are looked up, not assumed).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

HOME = "https://example.test"
NETWORK_TITLE = "Argo Note ネットワーク"
ADMIN_EMAIL = "admin@example.test"


@dataclass(frozen=True)
class User:
    login: str
    email: str
    display_name: str
    first_name: str
    last_name: str
    role: str  # on the main site
    other_sites: tuple[tuple[int, str], ...] = ()  # (blog id, role)


@dataclass(frozen=True)
class Term:
    taxonomy: str
    name: str
    slug: str
    description: str = ""
    parent: str | None = None  # slug of the parent, created just before


@dataclass(frozen=True)
class Post:
    id: int
    title: str
    date: str
    status: str = "publish"
    type: str = "post"
    author: str = "admin"
    slug: str | None = None
    body: str | None = None  # one paragraph, wrapped in block markup
    content: str | None = None  # raw post_content (when not a paragraph)
    categories: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    meta: dict[str, str] = field(default_factory=dict)

    def post_content(self) -> str:
        if self.content is not None:
            return self.content
        return f"<!-- wp:paragraph -->\n<p>{self.body or ''}</p>\n<!-- /wp:paragraph -->"


@dataclass(frozen=True)
class Media:
    file: str  # name in the uploads folder
    title: str
    attached_to: int  # post ID (the upload folder follows that post's date)
    alt: str = ""
    featured: bool = False
    image: tuple[int, int, tuple[int, int, int]] | None = None  # width, height, colour
    text: str | None = None  # for non-image files


@dataclass(frozen=True)
class Comment:
    post: int
    author: str
    email: str
    content: str
    date: str
    approved: str = "1"  # 1, 0 (pending), spam, or trash (created, then `comment trash`)
    user: str | None = None


USERS = (
    User("hanako", "hanako@example.test", "山田 花子", "花子", "山田", "editor"),
    User("taro", "taro@example.test", "佐藤 太郎", "太郎", "佐藤", "author", ((2, "author"),)),
    User("yuki", "yuki@example.test", "鈴木 ゆき", "ゆき", "鈴木", "subscriber"),
)
# `core install` makes admin user 1; the others follow in order (checked after provisioning).
USER_IDS = {"admin": 1, **{user.login: index + 2 for index, user in enumerate(USERS)}}

TERMS = (
    Term("category", "WordPress", "wordpress", "WordPress の使い方"),
    Term("category", "お知らせ", "news"),
    Term("category", "マーケティング", "marketing", "集客と分析"),
    Term("category", "SEO", "seo", "検索エンジン最適化", parent="marketing"),
    Term("post_tag", "初心者", "beginner"),
    Term("post_tag", "チュートリアル", "tutorial"),
    Term("post_tag", "自動化", "automation"),
    Term("post_tag", "生成AI", "generative-ai"),
)

# Created with --import_id in ascending order before anything that takes an automatic ID
# (revisions, attachments, menu items), so these IDs are exactly these and 47 stays unused.
POSTS = (
    Post(5, "会社概要", "2024-02-01 10:00:00", type="page", slug="about",
         body="Argo Note は日本語で WordPress を運用するためのサービスです。"),
    Post(6, "お問い合わせ", "2024-02-01 10:05:00", type="page", slug="contact",
         content="<!-- wp:paragraph -->\n<p>お問い合わせは admin@example.test までメールでお送りください。</p>\n<!-- /wp:paragraph -->"),
    Post(10, "WordPressの始め方ガイド", "2024-03-05 10:00:00", author="hanako", slug="getting-started",
         body="サーバーの準備からテーマの選び方まで、WordPress を始める手順を解説します。",
         categories=("wordpress",), tags=("beginner", "tutorial"),
         meta={"subtitle": "初心者向け完全ガイド", "views": "1520"}),
    Post(11, "SEO対策の基本10選", "2024-03-20 11:30:00", author="taro", slug="seo-basics",
         body="検索エンジンに評価されるための基本的な SEO 対策を 10 個紹介します。",
         categories=("marketing", "seo"), meta={"views": "980"}),
    Post(12, "ブログ記事の書き方のコツ", "2024-04-02 09:15:00", author="taro", slug="writing-tips",
         body="読みやすい記事を書くための構成と見出しのコツをまとめました。",
         categories=("wordpress",), tags=("tutorial",)),
    Post(15, "社内向け：編集ルール", "2024-04-15 18:00:00", status="private", author="hanako",
         slug="editorial-rules", body="表記ゆれを防ぐための社内編集ルールです。"),
    Post(18, "画像の最適化で表示速度を改善する方法", "2024-05-10 08:00:00", slug="image-optimization",
         body="WebP 形式と遅延読み込みで、ページの表示速度を改善できます。", categories=("wordpress",)),
    Post(20, "レビュー待ち：プラグイン比較記事", "2024-06-01 14:00:00", status="pending", author="taro",
         body="人気のバックアップ用プラグインを比較しました。", categories=("wordpress",)),
    # Published now, moved to the trash after the posts exist (as a person would).
    Post(22, "古いキャンペーンのお知らせ", "2023-12-01 12:00:00", slug="old-campaign",
         body="このキャンペーンは終了しました。", categories=("news",)),
    Post(25, "年末年始の営業時間のお知らせ", "2030-12-25 09:00:00", status="future", slug="new-year-holidays",
         body="年末年始の営業時間についてお知らせします。", categories=("news",)),
    Post(40, "Gutenbergブロックエディタ入門", "2024-07-01 10:00:00", status="draft",
         body="ブロックエディタの基本操作を画面付きで説明します。",
         categories=("wordpress",), tags=("tutorial",)),
    Post(41, "ChatGPTで記事作成を効率化する", "2024-07-10 16:20:00", status="draft", author="taro",
         body="生成 AI を下書き作成に活用する方法を紹介します。",
         categories=("wordpress",), tags=("generative-ai",)),
    Post(45, "AIで変わるコンテンツ制作の未来", "2024-08-01 10:00:00", status="draft", author="hanako",
         body="生成 AI と編集者が協働する、これからのコンテンツ制作について考えます。",
         tags=("generative-ai",), meta={"subtitle": "生成AIと編集者の協働"}),
    Post(46, "WP-CLIで始める運用自動化", "2024-08-05 15:45:00", status="draft",
         body="WP-CLI を使って WordPress の定型作業を自動化する方法を紹介します。",
         categories=("wordpress",), tags=("automation",), meta={"subtitle": "定型作業をコマンドで"}),
    Post(48, "夏季休業のお知らせ", "2024-08-09 09:00:00", slug="summer-holidays",
         body="8月13日から16日まで夏季休業とさせていただきます。", categories=("news",)),
    Post(55, "サイトリニューアルのお知らせ", "2024-09-01 09:00:00", slug="site-renewal",
         body="デザインを一新しました。今後ともよろしくお願いいたします。", categories=("news",)),
)  # fmt: skip
TRASHED_POST_IDS = (22,)
# WordPress's own first post and pages (IDs 1-3 of a new install), given the sample site's words.
WELCOME = Post(1, "Argo Note へようこそ", "2024-01-10 09:00:00", slug="welcome",
               body="WordPress へようこそ。こちらは最初の投稿です。編集または削除してから、コンテンツ作成を始めてください。")  # fmt: skip

MEDIA = (
    Media("hero-image.jpg", "hero-image", 18, alt="トップページのヒーロー画像", featured=True,
          image=(1200, 630, (38, 70, 140))),
    Media("logo.png", "logo", 1, image=(512, 512, (240, 120, 40))),
    Media("company-profile.pdf", "company-profile", 5, text="%PDF-1.4\n% Argo Note 会社案内\n%%EOF\n"),
)  # fmt: skip

COMMENTS = (
    Comment(10, "鈴木一郎", "ichiro@example.jp", "とても分かりやすい記事でした！", "2024-03-06 12:10:00"),
    Comment(10, "田中", "tanaka@example.jp", "テーマの選び方についても詳しく知りたいです。", "2024-03-07 08:45:00",
            approved="0"),
    Comment(11, "cheap-seo", "spam@spam.example", "激安SEOツールはこちら http://spam.example/", "2024-03-21 03:00:00",
            approved="spam"),
    Comment(12, "佐藤 太郎", "taro@example.test", "補足：見出しは h2 から始めましょう。", "2024-04-03 10:00:00",
            user="taro"),
    Comment(11, "匿名", "anon@example.jp", "削除予定のコメント", "2024-03-22 09:00:00", approved="trash"),
)  # fmt: skip

# (slug, name, location, items): items are page IDs or (title, URL) links.
MENUS: tuple[tuple[str, str, str, tuple[int | tuple[str, str], ...]], ...] = (
    ("main-menu", "メインメニュー", "primary", (5, ("ブログ", f"{HOME}/blog/"))),
    ("footer-menu", "フッターメニュー", "footer", (6,)),
)

# blog id -> (path, title, description, theme, locale)
SITES = {
    1: ("/", "Argo Note サンプルサイト", "AIと一緒に育てるWordPressサイト", "twentytwentyone", "ja"),
    2: ("/en/", "Argo Note English", "WordPress with AI, in English", "twentytwentythree", "en_US"),
    3: ("/shop/", "Argo Note ショップ", "公式オンラインショップ", "twentytwentytwo", "ja"),
}

SEED_FACTS: dict[str, Any] = {
    "home": HOME,
    "draft_post_ids": [40, 41, 45, 46],
    "missing_post_id": 47,
    "publish_post_ids": [1, 10, 11, 12, 18, 48, 55],
    "future_post_ids": [25],
    "private_post_ids": [15],
    "pending_post_ids": [20],
    "trash_post_ids": list(TRASHED_POST_IDS),
    "page_ids": [2, 3, 5, 6],
    "users": dict(USER_IDS),
    "multisite_urls": [f"{HOME}{path}" for path, *_ in SITES.values()],
    "blogname": SITES[1][1],
}


def _post_create(post: Post) -> list[str]:
    argv = [
        "post",
        "create",
        f"--import_id={post.id}",
        f"--post_type={post.type}",
        f"--post_status={post.status}",
        f"--post_title={post.title}",
        f"--post_content={post.post_content()}",
        f"--post_date={post.date}",
        f"--post_author={USER_IDS[post.author]}",
    ]
    if post.slug:
        argv.append(f"--post_name={post.slug}")
    if post.categories:
        argv.append(f"--post_category={','.join(post.categories)}")
    if post.tags:
        argv.append(f"--tags_input={','.join(post.tags)}")
    if post.meta:
        argv.append(f"--meta_input={json.dumps(post.meta, ensure_ascii=False)}")
    return [*argv, "--porcelain"]


def _options(blog: int) -> list[list[str]]:
    _, title, description, theme, locale = SITES[blog]
    steps = [
        ["option", "update", "blogname", title],
        ["option", "update", "blogdescription", description],
        ["option", "update", "timezone_string", "Asia/Tokyo"],
        ["option", "update", "date_format", "Y年n月j日" if locale == "ja" else "F j, Y"],
        ["option", "update", "time_format", "H:i"],
        ["option", "update", "start_of_week", "1"],
        ["rewrite", "structure", "/%postname%/"],
        ["theme", "activate", theme],
    ]
    if locale != "ja":
        steps.append(["site", "switch-language", locale])
    return steps


def _comment_steps() -> list[list[str]]:
    steps: list[list[str]] = []
    for comment in COMMENTS:
        approved = "1" if comment.approved == "trash" else comment.approved
        argv = ["comment", "create", f"--comment_post_ID={comment.post}", f"--comment_author={comment.author}",
                f"--comment_author_email={comment.email}", f"--comment_content={comment.content}",
                f"--comment_date={comment.date}", f"--comment_approved={approved}",
                "--comment_author_IP=203.0.113.10", "--porcelain"]  # fmt: skip
        if comment.user:
            argv.append(f"--user_id={USER_IDS[comment.user]}")
        steps.append(argv)
        if comment.approved == "trash":
            steps.append(["comment", "trash", "{{last}}"])
    return steps


def _menu_steps() -> list[list[str]]:
    steps: list[list[str]] = []
    for slug, name, location, items in MENUS:
        steps += [
            ["menu", "create", name, "--porcelain"],
            ["term", "update", "nav_menu", "{{last}}", f"--slug={slug}"],
        ]
        for item in items:
            if isinstance(item, int):
                steps.append(["menu", "item", "add-post", slug, str(item), "--porcelain"])
            else:
                steps.append(["menu", "item", "add-custom", slug, item[0], item[1], "--porcelain"])
        steps.append(["menu", "location", "assign", slug, location])
    return steps


def _main_site() -> list[list[str]]:
    steps = _options(1)
    for user in USERS:
        steps.append(
            ["user", "create", user.login, user.email, f"--role={user.role}",
             f"--display_name={user.display_name}", f"--first_name={user.first_name}",
             f"--last_name={user.last_name}", "--porcelain"]
        )  # fmt: skip
    for term in TERMS:
        parent = ["--parent={{last}}"] if term.parent else []
        steps.append(
            ["term", "create", term.taxonomy, term.name, f"--slug={term.slug}",
             f"--description={term.description}", *parent, "--porcelain"]
        )  # fmt: skip
    steps += [_post_create(post) for post in POSTS]
    # Only now may WordPress hand out automatic IDs (revisions, attachments, menu items, comments).
    steps.append(
        ["post", "update", "1", f"--post_title={WELCOME.title}", f"--post_name={WELCOME.slug}",
         f"--post_content={WELCOME.post_content()}", f"--post_date={WELCOME.date}"]
    )  # fmt: skip
    steps += [["post", "delete", str(post_id)] for post_id in TRASHED_POST_IDS]
    for media in MEDIA:
        argv = ["media", "import", "{{media}}/" + media.file, f"--post_id={media.attached_to}",
                f"--title={media.title}", "--porcelain"]  # fmt: skip
        if media.alt:
            argv.append(f"--alt={media.alt}")
        if media.featured:
            argv.append("--featured_image")
        steps.append(argv)
    steps += _comment_steps()
    steps += _menu_steps()
    steps += [
        ["plugin", "activate", "akismet"],
        ["transient", "set", "argo_note_feed_cache", "cached-feed-body"],
        # An expired transient: reading it makes WordPress delete it (a real site has these).
        ["transient", "set", "argo_note_stale_cache", "stale-body", "3600"],
        ["option", "update", "_transient_timeout_argo_note_stale_cache", "1700000000"],
    ]
    for blog in (2, 3):
        path, title, *_ = SITES[blog]
        steps.append(
            ["site", "create", f"--slug={path.strip('/')}", f"--title={title}", f"--email={ADMIN_EMAIL}"]
        )
    # A site's own metadata (blogmeta), as plugins keep per-site records there.
    steps.append(
        ["site", "meta", "add", "2", "argo_note_plan", '{"tier":"standard","seats":3}', "--format=json"]
    )
    return steps


def _other_sites() -> list[tuple[int, list[str]]]:
    english = [
        ["post", "update", "1", "--post_title=Welcome to Argo Note", "--post_name=welcome",
         "--post_content=<!-- wp:paragraph -->\n<p>This is the English edition of Argo Note.</p>\n<!-- /wp:paragraph -->",
         "--post_date=2024-05-01 09:00:00"],
        ["post", "update", "2", "--post_title=About us", "--post_name=about"],
        ["post", "create", "--post_title=Automating WordPress with WP-CLI", "--post_status=draft",
         f"--post_author={USER_IDS['taro']}", "--post_date=2024-05-20 10:00:00", "--porcelain"],
    ]  # fmt: skip
    shop = [
        ["post", "update", "1", "--post_title=ショップオープンのお知らせ", "--post_name=shop-open",
         "--post_content=<!-- wp:paragraph -->\n<p>オンラインショップをオープンしました。</p>\n<!-- /wp:paragraph -->",
         "--post_date=2024-06-01 10:00:00"],
        ["post", "update", "2", "--post_title=商品一覧", "--post_name=products"],
    ]  # fmt: skip
    steps: list[tuple[int, list[str]]] = []
    for blog, content in ((2, english), (3, shop)):
        steps += [(blog, argv) for argv in [*_options(blog), *content]]
    for user in USERS:
        steps += [(blog, ["user", "set-role", user.login, role]) for blog, role in user.other_sites]
    return steps


def install_commands(admin_password: str) -> list[list[str]]:
    """Before the plan: a Japanese single site, then a subdirectory network (wp-config follows)."""
    return [
        ["core", "install", f"--url={HOME}", f"--title={SITES[1][1]}", "--admin_user=admin",
         f"--admin_password={admin_password}", f"--admin_email={ADMIN_EMAIL}", "--locale=ja", "--skip-email"],
        ["core", "multisite-convert", f"--title={NETWORK_TITLE}", "--skip-config"],
    ]  # fmt: skip


# provision.php runs these as their own process: WP-CLI ends the process after an update or delete
# (CommandWithDBObject calls exit()), and menu locations are those of the theme the process loaded —
# the one the plan activated is only loaded by a new process.
_OWN_PROCESS = {("post", "update"), ("post", "delete"), ("user", "update"), ("user", "delete"),
                ("comment", "update"), ("comment", "delete"), ("site", "delete"), ("menu", "location")}  # fmt: skip


def plan(media_dir: str, wp: list[str]) -> dict[str, Any]:
    """The provision.php plan: sample files to write into `media_dir`, then every step; `wp` is the
    WP-CLI command line (with --path) for steps that need their own process."""
    steps = [(1, argv) for argv in _main_site()] + _other_sites()
    files: list[dict[str, Any]] = []
    for media in MEDIA:
        path = f"{media_dir}/{media.file}"
        if media.image is not None:
            width, height, rgb = media.image
            fmt = "png" if media.file.endswith(".png") else "jpeg"
            files.append({"path": path, "width": width, "height": height, "rgb": list(rgb), "format": fmt})
        else:
            files.append({"path": path, "text": media.text})
    return {
        "wp": wp,
        "files": files,
        "steps": [
            {
                "blog": blog,
                "argv": [word.replace("{{media}}", media_dir) for word in argv],
                "launch": tuple(argv[:2]) in _OWN_PROCESS,
            }
            for blog, argv in steps
        ],
    }


def fingerprint() -> str:
    """Changes whenever the seed changes (part of the cache key of the seeded dump)."""
    definition = json.dumps(
        {"install": install_commands("*"), "plan": plan("/media", ["wp"]), "facts": SEED_FACTS},
        ensure_ascii=False,
        sort_keys=True,
    )
    return hashlib.sha256(definition.encode()).hexdigest()[:16]
