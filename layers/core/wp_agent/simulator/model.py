"""Typed views over the stored site document (one JSON object, see `site.py`).

The document keeps WordPress's own shapes: `posts` rows are WP_Post fields, `options` rows are
wp_options rows, and so on. A network holds several blogs (multisite); each blog has its own
posts, terms, comments and options, while users, themes and plugins are network-wide.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypedDict, cast

JSONDict = dict[str, Any]


class PostRow(TypedDict):
    ID: int
    post_author: str
    post_date: str
    post_date_gmt: str
    post_content: str
    post_title: str
    post_excerpt: str
    post_status: str
    comment_status: str
    ping_status: str
    post_password: str
    post_name: str
    to_ping: str
    pinged: str
    post_modified: str
    post_modified_gmt: str
    post_content_filtered: str
    post_parent: int
    guid: str
    menu_order: int
    post_type: str
    post_mime_type: str
    comment_count: str
    filter: str


class TermRow(TypedDict):
    term_id: int
    name: str
    slug: str
    term_group: int
    term_taxonomy_id: int
    taxonomy: str
    description: str
    parent: int
    count: int
    filter: str


class MetaRow(TypedDict):
    meta_id: int
    object_id: int
    meta_key: str
    meta_value: Any


class OptionRow(TypedDict):
    option_id: int
    option_name: str
    option_value: Any
    autoload: str


class CommentRow(TypedDict):
    comment_ID: str
    comment_post_ID: str
    comment_author: str
    comment_author_email: str
    comment_author_url: str
    comment_author_IP: str
    comment_date: str
    comment_date_gmt: str
    comment_content: str
    comment_karma: str
    comment_approved: str
    comment_agent: str
    comment_type: str
    comment_parent: str
    user_id: str


class UserRow(TypedDict):
    ID: int
    user_login: str
    user_pass: str
    user_nicename: str
    user_email: str
    user_url: str
    user_registered: str
    user_activation_key: str
    user_status: int
    display_name: str
    roles: dict[str, list[str]]


class ThemeRow(TypedDict):
    stylesheet: str
    template: str
    name: str
    version: str
    author: str
    description: str
    tags: list[str]
    update_version: str | None
    menu_locations: dict[str, str]


class PluginRow(TypedDict):
    file: str
    title: str
    version: str
    author: str
    description: str
    update_version: str | None
    network_only: bool


class SiteRow(TypedDict):
    blog_id: int
    domain: str
    path: str
    registered: str
    last_updated: str
    public: int
    archived: int
    mature: int
    spam: int
    deleted: int
    lang_id: int


class CatalogEntry(TypedDict):
    slug: str
    name: str
    version: str
    author: str
    description: str
    rating: int
    num_ratings: int


class FaultRow(TypedDict, total=False):
    id: int
    command: str
    error: str | None
    exit_code: int
    delay_ms: int
    stdout_bytes: int
    times: int | None


class Blog:
    """One site's tables (a single-site install has exactly one)."""

    def __init__(self, raw: JSONDict, blog_id: int) -> None:
        self.raw = raw
        self.blog_id = blog_id

    def _next_id(self, counter: str) -> int:
        value = int(self.raw[counter])
        self.raw[counter] = value + 1
        return value

    # ---------------------------------------------------------------- posts

    @property
    def posts(self) -> list[PostRow]:
        return cast(list[PostRow], self.raw["posts"])

    def post(self, post_id: int) -> PostRow | None:
        for post in self.posts:
            if post["ID"] == post_id:
                return post
        return None

    def new_post_id(self) -> int:
        return self._next_id("next_post_id")

    def remove_post(self, post_id: int) -> None:
        self.raw["posts"] = [post for post in self.posts if post["ID"] != post_id]
        self.raw["postmeta"] = [row for row in self.postmeta if row["object_id"] != post_id]
        self.raw["term_relationships"] = [pair for pair in self.relationships if pair[0] != post_id]
        self.raw["comments"] = [c for c in self.comments if int(c["comment_post_ID"]) != post_id]

    # ---------------------------------------------------------------- post meta

    @property
    def postmeta(self) -> list[MetaRow]:
        return cast(list[MetaRow], self.raw["postmeta"])

    def meta_rows(self, post_id: int, key: str | None = None) -> list[MetaRow]:
        return [
            row
            for row in self.postmeta
            if row["object_id"] == post_id and (key is None or row["meta_key"] == key)
        ]

    def get_meta(self, post_id: int, key: str) -> Any:
        rows = self.meta_rows(post_id, key)
        return rows[0]["meta_value"] if rows else ""

    def add_meta(self, post_id: int, key: str, value: Any) -> int:
        meta_id = self._next_id("next_meta_id")
        self.postmeta.append(MetaRow(meta_id=meta_id, object_id=post_id, meta_key=key, meta_value=value))
        return meta_id

    def update_meta(self, post_id: int, key: str, value: Any) -> None:
        rows = self.meta_rows(post_id, key)
        if not rows:
            self.add_meta(post_id, key, value)
            return
        for row in rows:
            row["meta_value"] = value

    # ---------------------------------------------------------------- options

    @property
    def options(self) -> list[OptionRow]:
        return cast(list[OptionRow], self.raw["options"])

    def option_row(self, name: str) -> OptionRow | None:
        for row in self.options:
            if row["option_name"] == name:
                return row
        return None

    def get_option(self, name: str, default: Any = None) -> Any:
        row = self.option_row(name)
        return default if row is None else row["option_value"]

    def option_str(self, name: str) -> str:
        value = self.get_option(name, "")
        return value if isinstance(value, str) else str(value)

    def set_option(self, name: str, value: Any, autoload: str = "yes") -> None:
        row = self.option_row(name)
        if row is None:
            option_id = self._next_id("next_option_id")
            self.options.append(
                OptionRow(option_id=option_id, option_name=name, option_value=value, autoload=autoload)
            )
        else:
            row["option_value"] = value

    def delete_option(self, name: str) -> bool:
        if self.option_row(name) is None:
            return False
        self.raw["options"] = [row for row in self.options if row["option_name"] != name]
        return True

    @property
    def home_url(self) -> str:
        return self.option_str("home").rstrip("/")

    @property
    def site_url(self) -> str:
        return self.option_str("siteurl").rstrip("/")

    # ---------------------------------------------------------------- terms

    @property
    def terms(self) -> list[TermRow]:
        return cast(list[TermRow], self.raw["terms"])

    def terms_in(self, taxonomy: str) -> list[TermRow]:
        return [term for term in self.terms if term["taxonomy"] == taxonomy]

    def term(self, term_id: int, taxonomy: str | None = None) -> TermRow | None:
        for term in self.terms:
            if term["term_id"] == term_id and (taxonomy is None or term["taxonomy"] == taxonomy):
                return term
        return None

    def new_term_id(self) -> int:
        return self._next_id("next_term_id")

    @property
    def relationships(self) -> list[list[int]]:
        return cast(list[list[int]], self.raw["term_relationships"])

    def object_term_ids(self, object_id: int) -> list[int]:
        return [pair[1] for pair in self.relationships if pair[0] == object_id]

    def term_object_ids(self, term_taxonomy_id: int) -> list[int]:
        return [pair[0] for pair in self.relationships if pair[1] == term_taxonomy_id]

    # ---------------------------------------------------------------- comments

    @property
    def comments(self) -> list[CommentRow]:
        return cast(list[CommentRow], self.raw["comments"])

    def comment(self, comment_id: int) -> CommentRow | None:
        for comment in self.comments:
            if int(comment["comment_ID"]) == comment_id:
                return comment
        return None

    def new_comment_id(self) -> int:
        return self._next_id("next_comment_id")


class Network:
    """The whole stored document: network settings, blogs, users, themes, plugins, faults."""

    def __init__(self, raw: JSONDict) -> None:
        self.raw = raw

    @property
    def multisite(self) -> bool:
        return bool(self.raw.get("multisite"))

    @property
    def sites(self) -> list[SiteRow]:
        return cast(list[SiteRow], self.raw["sites"])

    def site(self, blog_id: int) -> SiteRow | None:
        for site in self.sites:
            if site["blog_id"] == blog_id:
                return site
        return None

    def blog(self, blog_id: int) -> Blog:
        return Blog(self.raw["blogs"][str(blog_id)], blog_id)

    def has_blog(self, blog_id: int) -> bool:
        return str(blog_id) in self.raw["blogs"]

    def blogs(self) -> Iterator[Blog]:
        for key in self.raw["blogs"]:
            yield Blog(self.raw["blogs"][key], int(key))

    @property
    def users(self) -> list[UserRow]:
        return cast(list[UserRow], self.raw["users"])

    def user(self, user_id: int) -> UserRow | None:
        for user in self.users:
            if user["ID"] == user_id:
                return user
        return None

    def new_id(self, counter: str) -> int:
        value = int(self.raw[counter])
        self.raw[counter] = value + 1
        return value

    @property
    def usermeta(self) -> list[MetaRow]:
        return cast(list[MetaRow], self.raw["usermeta"])

    @property
    def themes(self) -> list[ThemeRow]:
        return cast(list[ThemeRow], self.raw["themes"])

    def theme(self, stylesheet: str) -> ThemeRow | None:
        for theme in self.themes:
            if theme["stylesheet"] == stylesheet:
                return theme
        return None

    @property
    def plugins(self) -> list[PluginRow]:
        return cast(list[PluginRow], self.raw["plugins"])

    @property
    def network_active_plugins(self) -> list[str]:
        return cast(list[str], self.raw["network"]["active_sitewide_plugins"])

    def catalog(self, kind: str) -> list[CatalogEntry]:
        return cast(list[CatalogEntry], self.raw["catalog"][kind])

    @property
    def faults(self) -> list[FaultRow]:
        return cast(list[FaultRow], self.raw.setdefault("faults", []))

    @property
    def core_version(self) -> str:
        return str(self.raw.get("core_version", "6.5.5"))
