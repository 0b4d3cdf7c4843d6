"""Declared effects of content writes: posts and pages, their meta and terms, media, categories and
tags, comments, menus. (See declaration.py for what a declaration means.)"""

from __future__ import annotations

import json
from collections.abc import Callable

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy import host_resolution
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.effects.declaration import (
    ANY,
    GLOBAL_FLAGS,
    NEW,
    Arg,
    Effect,
    Flag,
    JsonKeys,
    Names,
    Rows,
    post_types,
)
from wp_agent.policy.effects.media_files import regenerate_site_checks
from wp_agent.policy.effects.meta_keys import listed_site_check, meta_key_verdict
from wp_agent.policy.effects.values import (
    BARE,
    DATE,
    ID,
    OPEN_CLOSED,
    PAGE_TEMPLATE,
    SHOWN_WITH_MEDIA,
    SHOWN_WITH_POSTS,
    SHOWN_WITH_TERMS,
    AbsentPost,
    SiteCheck,
    ValueCheck,
    content,
    fetched_by_server,
    fetched_url,
    int_range,
    one_of,
    plain_text,
    text,
    visible_text,
)
from wp_agent.policy.fetches import hosts_fetched
from wp_agent.policy.rule import Verdict

B = PolicyCategory.BLOCKED
D = PolicyCategory.DESTRUCTIVE

# What WordPress itself writes when a post is saved, published, scheduled or trashed: old slugs and
# dates (redirects), pings and enclosures queued for cron, trash bookkeeping, the site's post count,
# the cron events of scheduled posts, term counters, caches kept in transients.
POST_BOOKKEEPING_META = Names(
    ("_pingme", "_encloseme", "_wp_old_slug", "_wp_old_date", "_wp_desired_post_slug",
     "_wp_trash_meta_*", "_edit_last", "_edit_lock")
)  # fmt: skip
SITE_BOOKKEEPING_OPTIONS = Names(
    ("cron", "post_count", "_transient_*", "_site_transient_*", "category_children")
)
CRON_HOOKS_OF_POSTS = ("publish_future_post", "do_pings")
COUNTS = Rows("term_taxonomy", (ANY,), columns=frozenset({"count"}))
LAST_UPDATED = Rows("blogs", (ANY,), columns=frozenset({"last_updated"}))

# Post types a write may create or convert to without approval; attachments are created only by
# `media import` (a created attachment names a file), WordPress's internal types are refused.
_POST_TYPES = one_of("post", "page")
_POST_STATUSES = one_of("publish", "draft", "pending", "private", "future")
_TAXONOMIES = one_of("category", "post_tag", "post_format")
_FILE_FIELD = (
    "ファイルを指定する項目（--file）は使用できません（投稿に任意のファイルを結び付け、"
    "WordPressがそのファイルを扱うようになるため）"
)

# Every status a post may have, including those `any` leaves out (trash, auto-draft) and the privacy
# requests' own: the site checks look a post up whatever its state.
ALL_POST_STATUSES = (
    "publish,future,draft,pending,private,trash,auto-draft,inherit,"
    "request-pending,request-confirmed,request-failed,request-completed"
)
_TERM_TEXT = visible_text(SHOWN_WITH_TERMS)
_MEDIA_TEXT_FIELDS = frozenset({"post_title", "post_excerpt", "post_content"})
_MEDIA_TEXT_COLUMNS = _MEDIA_TEXT_FIELDS | {"post_modified", "post_modified_gmt"}

POST_FIELDS: dict[str, ValueCheck] = {
    "post_title": visible_text(SHOWN_WITH_POSTS),
    "post_content": content(SHOWN_WITH_POSTS, published_links=True),
    "post_excerpt": visible_text(SHOWN_WITH_POSTS),
    "post_status": _POST_STATUSES,
    "post_type": _POST_TYPES,
    "post_name": text(200),
    "post_date": DATE,
    "post_date_gmt": DATE,
    "post_author": ID,
    "post_parent": ID,
    "menu_order": int_range(-1_000_000, 1_000_000),
    "comment_status": OPEN_CLOSED,
    "ping_status": OPEN_CLOSED,
    "post_password": text(255),
    "post_category": text(1_000),  # existing categories by ID or name (WP-CLI refuses unknown ones)
    "tags_input": visible_text(SHOWN_WITH_TERMS, 1_000),  # tags by name, created when new
    "page_template": PAGE_TEMPLATE,
    "meta_input": text(),  # every key judged below
}
_POST_COLUMNS = frozenset(
    {"post_title", "post_content", "post_excerpt", "post_status", "post_type", "post_name", "post_date",
     "post_date_gmt", "post_author", "post_parent", "menu_order", "comment_status", "ping_status",
     "post_password", "post_modified", "post_modified_gmt", "comment_count"}
)  # fmt: skip


def _meta_input_pairs(cmd: ParsedCommand) -> list[tuple[str, object]] | Verdict:
    pairs: list[tuple[str, object]] = []
    for option in (o for o in cmd.options if o.name == "meta_input"):
        try:
            data = json.loads(option.value) if option.value is not None else None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return Verdict(
                D,
                "confirm.effect.meta_input",
                "--meta_input はキーと値のJSONオブジェクトのときだけ内容を確認できます。それ以外は承認が必要です",
                option.token,
            )
        pairs += list(data.items())
    return pairs


def _scalar(value: object) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    return str(value) if isinstance(value, (str, int, float)) else None


def _meta_input(cmd: ParsedCommand) -> Verdict | None:
    pairs = _meta_input_pairs(cmd)
    if isinstance(pairs, Verdict):
        return pairs
    for key, value in pairs:
        scalar = _scalar(value)
        # A nested value is stored as it is: judged by every text inside it, as JSON.
        shown = scalar if scalar is not None else json.dumps(value, ensure_ascii=False)
        verdict = meta_key_verdict("post", key, shown, structured=scalar is None)
        if verdict is not None:
            return verdict
    return None


def _post_write(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if cmd.has_flag("file"):
        return Verdict(B, "blocked.effect.field", _FILE_FIELD, "--file")
    if any(v.strip().lower() == "attachment" for v in cmd.option_values("post_type")):
        return Verdict(
            B,
            "blocked.post.attachment_type",
            "添付ファイル（attachment）の投稿は作成・変換できません。メディアは media import で追加してください",
            "--post_type=attachment",
        )
    return _meta_input(cmd)


def _type_among(types: frozenset[str]) -> Callable[[str | None], bool]:
    # A read that fails confirms nothing by itself; whether "no such post" may run is AbsentPost's.
    return lambda stdout: stdout is not None and stdout.strip() in types


def post_type_read(post_id: str) -> tuple[str, ...]:
    """The read of a post's type (on the command's site, `on_the_same_site`); the role check of an
    editor's write asks the same, so one read in the round answers both."""
    return ("post", "get", post_id, "--field=post_type")


def _addressed_post_types(cmd: ParsedCommand, path: tuple[str, ...]) -> list[SiteCheck]:
    """`post update <id>…` is declared for posts and pages (and a media item's texts): the site must
    confirm each ID is one. The argv does not show the type — an ID may be a menu item, a reusable
    block, a plugin's order or form — and an allow-list of types is the declaration."""
    ids = cmd.args_after(path)
    if not ids or not all(ID.accepts(i) for i in ids):
        return []  # the argument check holds the command already
    given = {o.name for o in cmd.options if o.name not in GLOBAL_FLAGS}
    types = {"post", "page", "attachment"} if given <= _MEDIA_TEXT_FIELDS else {"post", "page"}
    return [
        SiteCheck(
            argv=post_type_read(post_id),
            confirms=_type_among(frozenset(types)),
            reason_ja=(
                f"ID {post_id} は投稿・固定ページ（タイトル・本文・抜粋だけの変更ならメディアも）ではありません"
                "（メニュー項目やプラグインのデータなど、承認なしで変更できる範囲の外です）"
            ),
            absent=AbsentPost(post_id, first_in_command=post_id == ids[0]),  # WP-CLI goes in order
        )
        for post_id in dict.fromkeys(ids)
    ]


def _not_revision(stdout: str | None) -> bool:
    return stdout is not None and stdout.strip() != "revision"  # "no such post": see AbsentPost


def _not_a_revision(post_id: str, *, first_in_command: bool = True) -> SiteCheck:
    """WordPress writes the meta of a revision to the post it belongs to (update_post_meta() swaps
    the ID: on the real network `post meta update 3 views 7` changed post 1, whose revision 3 is),
    so a meta write runs without approval only on a post that is not a revision."""
    return SiteCheck(
        argv=post_type_read(post_id),
        confirms=_not_revision,
        reason_ja=(
            f"ID {post_id} は投稿の履歴（リビジョン）です。WordPressはこのメタを元の投稿に書き込むため、"
            "指定した対象とは別の投稿が変わります"
        ),
        absent=AbsentPost(post_id, first_in_command=first_in_command),
    )


def _post_update_site_checks(cmd: ParsedCommand, path: tuple[str, ...]) -> list[SiteCheck]:
    return _addressed_post_types(cmd, path) + _meta_input_site_checks(cmd, path) + _published_links(cmd, path)


def _published_links(cmd: ParsedCommand, path: tuple[str, ...]) -> list[SiteCheck]:
    """Publishing a post makes the server ping every link of its content and ask each for enclosures.
    Content the write brings is judged as a value; content already stored (a draft a person wrote) is
    read first, and its links must go to public hosts as well."""
    publishing = any(v.strip() in {"publish", "future"} for v in cmd.option_values("post_status"))
    if not publishing or cmd.option_values("post_content"):
        return []
    ids = cmd.args_after(path)
    return [
        SiteCheck(
            argv=("post", "get", post_id, "--field=post_content"),
            confirms=_fetches_stay_public,
            absent=AbsentPost(post_id, first_in_command=post_id == ids[0]),  # WP-CLI refuses a missing post
            reason_ja=(
                f"公開すると、投稿 ID {post_id} の本文にあるリンクや埋め込みのURLをサーバーが取得します。その宛先に"
                "公開のホストではないもの（内部ネットワーク・解決できない名前など）があるか、本文を確認できませんでした"
            ),
        )
        for post_id in dict.fromkeys(ids)
        if ID.accepts(post_id)
    ]


def _fetches_stay_public(stdout: str | None) -> bool:
    urls = None if stdout is None else fetched_by_server(stdout, links=True)
    if urls is None:
        return False
    refused, names = hosts_fetched(list(urls))
    return not refused and not host_resolution.not_public(names, host_resolution.system_resolver)


def _meta_input_site_checks(cmd: ParsedCommand, path: tuple[str, ...]) -> list[SiteCheck]:
    pairs = _meta_input_pairs(cmd)
    if isinstance(pairs, Verdict):
        return []
    found: list[SiteCheck] = []
    for key, value in pairs:
        check = listed_site_check("post", key)
        scalar = _scalar(value)
        if check is not None and check.site_check is not None and scalar is not None:
            found.append(check.site_check(scalar))
    return found


def _post_changes(objects: tuple[Arg | str, ...]) -> tuple[Rows, ...]:
    media_texts = () if NEW in objects else (
        # A media item's title, caption and description (the site check admits nothing else).
        Rows("posts", objects, columns=_MEDIA_TEXT_COLUMNS, where=post_types("attachment")),
    )  # fmt: skip
    return (
        Rows("posts", objects, columns=_POST_COLUMNS, where=post_types("post", "page")),
        *media_texts,
        Rows("posts", (NEW,), where=post_types("revision")),
        Rows(
            "postmeta",
            objects,
            keys=(JsonKeys("meta_input"), POST_BOOKKEEPING_META, Names(("_wp_page_template",))),
        ),
        Rows("term_relationships", objects),
        Rows("terms", (NEW,)),  # new tags
        Rows("term_taxonomy", (NEW,)),
        COUNTS,
        LAST_UPDATED,
        Rows("options", keys=(SITE_BOOKKEEPING_OPTIONS,)),
    )


def meta_write(
    family: str, verb: str, *, match: tuple[str, ...] = (), not_match: tuple[str, ...] = ()
) -> Effect:
    """`<family> meta add|update <id> <key> [<value>]` and `… patch <action> <id> <key> <path>… [<value>]`."""
    key_at, value_at = (2, None) if verb == "patch" else (1, 2)

    def refine(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
        args = cmd.args_after(path)
        if len(args) <= key_at:
            return None
        key = args[key_at]
        structured = value_at is None or "json" in cmd.option_values("format")
        # patch: the value comes last, after the path inside the stored value
        at = value_at if value_at is not None else len(args) - 1
        value = args[at] if key_at < at < len(args) else ""
        return meta_key_verdict(family, key, value, structured=structured)

    def site_checks(cmd: ParsedCommand, path: tuple[str, ...]) -> list[SiteCheck]:
        args = cmd.args_after(path)
        found = [_not_a_revision(args[owner.index])] if family == "post" and len(args) > owner.index else []
        if value_at is None or len(args) <= value_at:
            return found
        check = listed_site_check(family, args[key_at])
        return (
            found if check is None or check.site_check is None else [*found, check.site_check(args[value_at])]
        )

    patch = value_at is None
    owner = Arg(1 if patch else 0)
    table = {"post": "postmeta", "term": "termmeta", "user": "usermeta"}[family]
    # <id> is a user's ID, login or email for user meta; patch: <action> first, values of any shape.
    ref = text(255) if family == "user" else ID
    args = (one_of("insert", "update"), ref, text(255), text()) if patch else (ref, text(255), text())
    action = "insert " if patch else ""
    default_match = (f"{family} meta {verb} {action}3 subtitle{' a' if patch else ''} x",)
    return Effect(
        summary_ja="指定した1件のメタの値（公開キーと、値を確認できる保護キー）",
        changes=(Rows(table, (owner,), keys=(Arg(key_at),)),),
        fields={"format": one_of("plaintext", "json")},
        args=args,
        repeat=patch,
        refine=refine,
        site_checks=site_checks,
        match=match or default_match,
        not_match=not_match
        or (f"{family} meta {verb} 3 {'insert ' if patch else ''}_private_key{' a' if patch else ''} x",),
    )


def _term_changes(objects: tuple[Arg | str, ...], columns: frozenset[str] | None = None) -> tuple[Rows, ...]:
    return (
        Rows("terms", objects, columns=columns),
        Rows("term_taxonomy", objects, columns=frozenset({"description", "parent", "count"})),
        Rows("options", keys=(Names(("category_children", "_transient_*")),)),
    )


def _post_meta(verb: str) -> Effect:
    return meta_write(
        "post",
        verb,
        match=(
            f"post meta {verb} 45 description 説明文",
            f"post meta {verb} 45 _thumbnail_id 58",
            f"post meta {verb} 58 _wp_attachment_image_alt 'ヒーロー画像'",
            f"post meta {verb} 45 subtitle '../../../../wp-config.php'",
        ),
        not_match=(
            f"post meta {verb} 58 _wp_attachment_metadata '{{}}' --format=json",
            f"post meta {verb} 58 _WP_Attached_File ../../wp-config.php",
            f"post meta {verb} 45 _thumbnail_id abc",
            f"post meta {verb} 45 _elementor_data x",
            f"post meta {verb} 45 download_path /etc/passwd",
        ),
    )


_MEDIA_REGENERATE = Effect(
    summary_ja="画像のサムネイル（アップロード先の画像ファイルと、その画像の _wp_attachment_metadata）",
    changes=(Rows("postmeta", (Arg(0, rest=True),), keys=(Names(("_wp_attachment_metadata",)),)),),
    fields={
        "image_size": one_of("thumbnail", "medium", "medium_large", "large", "1536x1536", "2048x2048"),
        "skip-delete": BARE,
        "only-missing": BARE,
        "yes": BARE,
    },
    args=(ID,),
    repeat=True,
    site_checks=regenerate_site_checks,
    files=("wp-content/uploads",),
    match=("media regenerate 58 --yes", "media regenerate 58 59 --only-missing"),
    not_match=("media regenerate hero --yes", "media regenerate 58 --image_size=../../x"),
)

CONTENT_EFFECTS: dict[tuple[str, ...], Effect] = {
    ("post", "create"): Effect(
        summary_ja="新しい投稿・固定ページ1件（本文・メタ・カテゴリ・タグを含む）",
        changes=_post_changes((NEW,)),
        cron_hooks=CRON_HOOKS_OF_POSTS,
        fields={**POST_FIELDS, "porcelain": BARE},
        refused_fields={"file": _FILE_FIELD},
        refine=_post_write,
        site_checks=_meta_input_site_checks,
        match=(
            "post create --post_title=お知らせ --post_content='<p>本文</p>' --post_status=draft",
            "post create --post_type=page --post_title=会社概要 --porcelain",
            'post create --post_title=x --meta_input=\'{"subtitle":"../../etc/passwd"}\'',
        ),
        not_match=(
            "post create --post_type=attachment --post_title=x",
            "post create --post_title=x --post_mime_type=image/jpeg",
            'post create --post_title=x --meta_input=\'{"_wp_attached_file":"../../wp-config.php"}\'',
            "post create --from-post=58",
            "post create --post_title=x --guid=https://evil.example/",
        ),
    ),
    ("post", "update"): Effect(
        summary_ja="指定した投稿・固定ページの項目（タイトル・本文・状態・日時・メタ・カテゴリ・タグ）",
        changes=_post_changes((Arg(0, rest=True),)),
        cron_hooks=CRON_HOOKS_OF_POSTS,
        fields={**POST_FIELDS, "defer-term-counting": BARE, "edit_date": text(10)},
        refused_fields={"file": _FILE_FIELD},
        args=(ID,),
        repeat=True,
        refine=_post_write,
        site_checks=_post_update_site_checks,
        match=(
            "post update 45 --post_title=新しいタイトル",
            "post update 45 --post_status=future --post_date='2026-12-01 09:00:00' --edit_date=1",
            'post update 45 --meta_input=\'{"_thumbnail_id":"58"}\'',
        ),
        not_match=(
            'post update 58 --meta_input=\'{"_wp_attachment_metadata":{"file":"x"}}\'',
            "post update 58 --file=../../wp-config.php",
            "post update 45 --post_type=attachment",
            "post update 45 --post_type=shop_order",
            "post update 45 --to_ping=http://169.254.169.254/",
        ),
    ),
    **{("post", "meta", verb): _post_meta(verb) for verb in ("add", "update")},
    ("post", "meta", "patch"): meta_write("post", "patch"),
    ("post", "term", "add"): Effect(
        summary_ja="指定した投稿のカテゴリ・タグ（新しいタグの作成を含む）",
        changes=(
            Rows("term_relationships", (Arg(0),)),
            Rows("terms", (NEW,)),
            Rows("term_taxonomy", (NEW,)),
            COUNTS,
            Rows("options", keys=(Names(("category_children", "_transient_*")),)),
        ),
        fields={"by": one_of("slug", "id")},
        args=(ID, _TAXONOMIES, visible_text(SHOWN_WITH_TERMS, 200)),
        repeat=True,
        match=("post term add 45 category news", "post term add 45 post_tag 新着 --by=slug"),
        not_match=("post term add 45 nav_menu main-menu", "post term add 45 wp_theme twentytwentyone"),
    ),
    ("media", "import"): Effect(
        summary_ja="新しいメディア1件（アップロード先のファイル、添付ファイルの投稿とそのメタ、アイキャッチ画像の指定）",
        changes=(
            Rows("posts", (NEW,), where=post_types("attachment")),
            Rows(
                "postmeta",
                (NEW,),
                keys=(Names(("_wp_attached_file", "_wp_attachment_metadata", "_wp_attachment_image_alt")),),
            ),
            Rows("postmeta", (Flag("post_id"),), keys=(Names(("_thumbnail_id",)),)),
            Rows("options", keys=(SITE_BOOKKEEPING_OPTIONS,)),
            LAST_UPDATED,
        ),
        fields={
            "post_id": ID,
            "post_name": text(200),
            "title": visible_text(SHOWN_WITH_MEDIA, 1_000),
            "caption": visible_text(SHOWN_WITH_MEDIA),
            "alt": plain_text(500),
            "desc": visible_text(SHOWN_WITH_MEDIA),
            "featured_image": BARE,
            "preserve-filetime": BARE,
            "porcelain": ValueCheck("値なし、または出力する項目名", lambda v: v is None or v.isidentifier()),
        },
        args=(fetched_url(),),  # where from: media_source (source_rules.py) admits public http(s) URLs only
        repeat=True,
        refused_fields={
            "skip-copy": "取り込み元のファイルをそのまま使う指定（--skip-copy）は使用できません（サーバー上の任意のファイルが添付ファイルになるため）",
            "file_name": "保存するファイル名の指定（--file_name）は使用できません",
        },
        files=("wp-content/uploads",),
        # The featured image goes through update_post_meta(): a revision's would land on its post.
        site_checks=lambda cmd, path: [
            # the import creates its attachment before it reaches the post
            _not_a_revision(p, first_in_command=False)
            for p in cmd.option_values("post_id")
            if ID.accepts(p)
        ],
        match=("media import https://example.com/a.jpg --post_id=45 --featured_image --porcelain",),
        not_match=("media import https://example.com/a.jpg --skip-copy",),
    ),
    ("media", "regenerate"): _MEDIA_REGENERATE,
    ("term", "create"): Effect(
        summary_ja="新しいカテゴリ・タグ1件",
        changes=(Rows("terms", (NEW,)), Rows("term_taxonomy", (NEW,)), *_term_changes((NEW,))[2:]),
        fields={"slug": text(200), "description": _TERM_TEXT, "parent": ID, "porcelain": BARE},
        args=(one_of("category", "post_tag"), visible_text(SHOWN_WITH_TERMS, 200)),
        match=("term create category お知らせ", "term create post_tag 新着 --slug=new --porcelain"),
        not_match=("term create nav_menu x", "term create wp_theme x"),
    ),
    ("term", "update"): Effect(
        summary_ja="指定したカテゴリ・タグの名前・スラッグ・説明・親",
        changes=_term_changes((Arg(1),), frozenset({"name", "slug"})),
        fields={
            "by": one_of("slug", "id"),
            "name": visible_text(SHOWN_WITH_TERMS, 200),
            "slug": text(200),
            "description": _TERM_TEXT,
            "parent": ID,
        },
        args=(one_of("category", "post_tag"), text(200)),
        match=(
            "term update category 3 --name=ニュース",
            "term update post_tag tutorial --by=slug --description=x",
        ),
        not_match=("term update nav_menu 10 --name=x", "term update category 3 --term_group=5"),
    ),
    ("term", "recount"): Effect(
        summary_ja="カテゴリ・タグの投稿数",
        changes=(COUNTS,),
        args=(one_of("category", "post_tag", "post_format", "nav_menu"),),
        repeat=True,
        match=("term recount category post_tag",),
        not_match=("term recount product_cat",),
    ),
    **{("term", "meta", verb): meta_write("term", verb) for verb in ("add", "update", "patch")},
}
for _verb in ("set", "remove"):
    CONTENT_EFFECTS[("post", "term", _verb)] = Effect(
        summary_ja="指定した投稿のカテゴリ・タグ",
        changes=CONTENT_EFFECTS[("post", "term", "add")].changes,
        fields={"by": one_of("slug", "id")},
        args=(ID, _TAXONOMIES, visible_text(SHOWN_WITH_TERMS, 200)),
        repeat=True,
        match=(f"post term {_verb} 45 category news",),
        not_match=(f"post term {_verb} 45 nav_menu main-menu",),
    )
