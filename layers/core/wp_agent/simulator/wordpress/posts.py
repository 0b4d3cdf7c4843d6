"""Posts: `wp_insert_post`, `wp_update_post`, `wp_delete_post`/`wp_trash_post`, `get_permalink`
and the subset of `WP_Query` arguments `wp post list` passes through.

WordPress details kept on purpose because agents trip over them in production:
drafts get an empty `post_name` and a zero `post_date_gmt`; publishing with a future date turns
the status into `future` (and `future` with a past date into `publish`); updating a draft
without `--edit_date` resets its date to now (WordPress's "clear_date"), so
`wp post update <draft> --post_status=future --post_date=...` publishes immediately.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from wp_agent.simulator.model import Blog, PostRow
from wp_agent.simulator.wordpress.clock import ZERO_DATE, Clock, gmt_from_local, local_from_gmt, parse_mysql
from wp_agent.simulator.wordpress.errors import WPError
from wp_agent.simulator.wordpress.slugs import sanitize_title, unique_slug
from wp_agent.simulator.wordpress.taxonomy import object_categories, set_object_terms, term_exists

FLOATING_STATUSES = ("draft", "pending", "auto-draft")
# Statuses WP_Query's 'any' leaves out (exclude_from_search).
HIDDEN_FROM_ANY = ("trash", "auto-draft")


@dataclass(frozen=True)
class PostType:
    name: str
    label: str
    description: str
    hierarchical: bool
    public: bool
    capability_type: str
    searchable: bool


POST_TYPES: dict[str, PostType] = {
    item.name: item
    for item in (
        PostType("post", "Posts", "", False, True, "post", True),
        PostType("page", "Pages", "", True, True, "page", True),
        PostType("attachment", "Media", "", False, True, "post", True),
        PostType("revision", "Revisions", "", False, False, "post", False),
        PostType("nav_menu_item", "Navigation Menu Items", "", False, False, "post", False),
        PostType("custom_css", "Custom CSS", "", False, False, "post", False),
        PostType("customize_changeset", "Changesets", "", False, False, "customize_changeset", False),
        PostType("oembed_cache", "oEmbed Responses", "", False, False, "post", False),
        PostType("user_request", "User Requests", "", False, False, "post", False),
        PostType("wp_block", "Patterns", "", False, False, "block", False),
        PostType(
            "wp_template", "Templates", "Templates to include in your theme.", False, False, "post", False
        ),
        PostType(
            "wp_template_part",
            "Template Parts",
            "Template parts to include in your templates.",
            False,
            False,
            "post",
            False,
        ),
        PostType(
            "wp_global_styles",
            "Global Styles",
            "Global styles to include in themes.",
            False,
            False,
            "post",
            False,
        ),
        PostType(
            "wp_navigation",
            "Navigation Menus",
            "Navigation menus that can be inserted into your site.",
            False,
            False,
            "post",
            False,
        ),
        PostType("wp_font_family", "Font Families", "", False, False, "post", False),
        PostType("wp_font_face", "Font Faces", "", False, False, "post", False),
    )
}

POST_FIELDS = (
    "ID",
    "post_author",
    "post_date",
    "post_date_gmt",
    "post_content",
    "post_title",
    "post_excerpt",
    "post_status",
    "comment_status",
    "ping_status",
    "post_password",
    "post_name",
    "to_ping",
    "pinged",
    "post_modified",
    "post_modified_gmt",
    "post_content_filtered",
    "post_parent",
    "guid",
    "menu_order",
    "post_type",
    "post_mime_type",
    "comment_count",
    "filter",
)


# ------------------------------------------------------------------------------- permalinks


def _page_path(blog: Blog, post: PostRow) -> str:
    parts = [post["post_name"]]
    parent_id = post["post_parent"]
    seen = {post["ID"]}
    while parent_id and parent_id not in seen:
        parent = blog.post(parent_id)
        if parent is None:
            break
        seen.add(parent_id)
        parts.insert(0, parent["post_name"])
        parent_id = parent["post_parent"]
    return "/".join(parts)


def default_guid(blog: Blog, post_id: int, post_type: str) -> str:
    """The guid WordPress gives a new post: its plain (query string) link."""
    key = "page_id" if post_type == "page" else "p"
    return f"{blog.home_url}/?{key}={post_id}"


def permalink(blog: Blog, post: PostRow) -> str:
    """`get_permalink()` for the permalink structures the sample sites use."""
    home = blog.home_url
    structure = blog.option_str("permalink_structure")
    post_type = post["post_type"]
    status = post["post_status"]
    if post_type == "attachment":
        parent = blog.post(post["post_parent"]) if post["post_parent"] else None
        if structure and parent is not None and parent["post_status"] == "publish" and post["post_name"]:
            return f"{permalink(blog, parent)}{post['post_name']}/"
        return f"{home}/?attachment_id={post['ID']}"
    if post_type == "page":
        if not structure or status in FLOATING_STATUSES or not post["post_name"]:
            return f"{home}/?page_id={post['ID']}"
        return f"{home}/{_page_path(blog, post)}/"
    if post_type != "post":
        return f"{home}/?p={post['ID']}"
    if not structure or status in (*FLOATING_STATUSES, "future") or not post["post_name"]:
        return f"{home}/?p={post['ID']}"
    date = parse_mysql(post["post_date"]) or datetime(1970, 1, 1)
    categories = object_categories(blog, post["ID"]) if "%category%" in structure else []
    replacements = {
        "%year%": f"{date.year:04d}",
        "%monthnum%": f"{date.month:02d}",
        "%day%": f"{date.day:02d}",
        "%hour%": f"{date.hour:02d}",
        "%minute%": f"{date.minute:02d}",
        "%second%": f"{date.second:02d}",
        "%post_id%": str(post["ID"]),
        "%postname%": post["post_name"],
        "%category%": categories[0]["slug"] if categories else "uncategorized",
        "%author%": post["post_author"],
    }
    path = structure
    for token, value in replacements.items():
        path = path.replace(token, value)
    return home + path


def find_by_url(blog: Blog, url: str) -> PostRow | None:
    """`url_to_postid()` for query-string and pretty permalinks."""
    home = blog.home_url
    for pattern in (r"[?&](?:p|page_id|attachment_id)=(\d+)",):
        match = re.search(pattern, url)
        if match:
            return blog.post(int(match.group(1)))
    if not url.startswith(home):
        return None
    path = url[len(home) :].split("?", maxsplit=1)[0].split("#", maxsplit=1)[0].strip("/")
    if not path:
        return None
    for post in blog.posts:
        if post["post_status"] in ("publish", "private", "inherit") and permalink(blog, post).rstrip("/") == (
            f"{home}/{path}"
        ):
            return post
    return None


# ------------------------------------------------------------------------------- WP_Query


def _as_list(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(item).strip() for item in value if str(item).strip()]
    if value is None or isinstance(value, bool):
        return []
    return [part.strip() for part in str(value).split(",") if part.strip()]


def _ints(value: Any) -> list[int]:
    result = []
    for item in _as_list(value):
        try:
            result.append(int(item))
        except ValueError:
            continue
    return result


def _matches_search(post: PostRow, search: str) -> bool:
    haystack = f"{post['post_title']}\n{post['post_excerpt']}\n{post['post_content']}".casefold()
    for word in search.split():
        negate = word.startswith("-") and len(word) > 1
        needle = word[1:] if negate else word
        found = needle.casefold() in haystack
        if found == negate:
            return False
    return True


def _sort(posts: list[PostRow], args: Mapping[str, Any], blog: Blog) -> list[PostRow]:
    orderby = str(args.get("orderby") or "date")
    descending = str(args.get("order") or "DESC").upper() != "ASC"
    if orderby == "post__in":
        order = _ints(args.get("post__in"))
        return sorted(posts, key=lambda post: order.index(post["ID"]) if post["ID"] in order else len(order))
    if orderby in ("none", "rand"):
        return sorted(posts, key=lambda post: post["ID"])
    keys: dict[str, Any] = {
        "ID": lambda post: post["ID"],
        "id": lambda post: post["ID"],
        "author": lambda post: int(post["post_author"] or 0),
        "title": lambda post: post["post_title"].casefold(),
        "name": lambda post: post["post_name"],
        "type": lambda post: post["post_type"],
        "date": lambda post: post["post_date"],
        "modified": lambda post: post["post_modified"],
        "parent": lambda post: post["post_parent"],
        "menu_order": lambda post: post["menu_order"],
        "comment_count": lambda post: int(post["comment_count"] or 0),
        "meta_value": lambda post: str(blog.get_meta(post["ID"], str(args.get("meta_key", "")))),
        "meta_value_num": lambda post: float(blog.get_meta(post["ID"], str(args.get("meta_key", ""))) or 0),
    }
    result = sorted(posts, key=lambda post: post["ID"], reverse=descending)
    for field in reversed(orderby.replace(",", " ").split()):
        key = keys.get(field.replace("post_", "") if field not in keys else field)
        if key is not None:
            result.sort(key=key, reverse=descending)
    return result


def query_posts(blog: Blog, args: Mapping[str, Any]) -> list[PostRow]:
    """The WP_Query arguments that matter for `wp post list --<field>=<value>`."""
    post_type = args.get("post_type", "post")
    if post_type == "any":
        types = {name for name, info in POST_TYPES.items() if info.searchable}
    else:
        types = set(_as_list(post_type)) or {"post"}
    statuses = _as_list(args.get("post_status", "any")) or ["any"]
    posts = [post for post in blog.posts if post["post_type"] in types]
    if "any" in statuses:
        posts = [
            post
            for post in posts
            if post["post_status"] not in HIDDEN_FROM_ANY or post["post_status"] in statuses
        ]
    else:
        posts = [post for post in posts if post["post_status"] in statuses]

    def keep(condition: Any) -> None:
        nonlocal posts
        posts = [post for post in posts if condition(post)]

    if args.get("post__in") not in (None, "", True):
        wanted = set(_ints(args["post__in"]))
        keep(lambda post: post["ID"] in wanted)
    if args.get("post__not_in") not in (None, "", True):
        unwanted = set(_ints(args["post__not_in"]))
        keep(lambda post: post["ID"] not in unwanted)
    for key in ("p", "page_id", "attachment_id"):
        if str(args.get(key, "")).strip().isdigit():
            wanted_id = int(str(args[key]))
            keep(lambda post, wanted_id=wanted_id: post["ID"] == wanted_id)
    if args.get("name"):
        slug = sanitize_title(str(args["name"]))
        keep(lambda post: post["post_name"] == slug)
    if "post_parent" in args and str(args["post_parent"]).strip().isdigit():
        parent = int(str(args["post_parent"]))
        keep(lambda post: post["post_parent"] == parent)
    if args.get("post_parent__in"):
        parents = set(_ints(args["post_parent__in"]))
        keep(lambda post: post["post_parent"] in parents)
    authors = _ints(args.get("author")) + _ints(args.get("author__in"))
    if authors:
        include = {a for a in authors if a > 0}
        exclude = {-a for a in authors if a < 0}
        if include:
            keep(lambda post: int(post["post_author"] or 0) in include)
        if exclude:
            keep(lambda post: int(post["post_author"] or 0) not in exclude)
    if args.get("post_mime_type"):
        mimes = _as_list(args["post_mime_type"])
        keep(
            lambda post: any(
                post["post_mime_type"] == m or post["post_mime_type"].startswith(m + "/") for m in mimes
            )
        )
    search = args.get("s")
    if isinstance(search, str) and search.strip():
        keep(lambda post: _matches_search(post, search))
    taxonomy_filters = (
        ("category_name", "category"),
        ("tag", "post_tag"),
        ("cat", "category"),
        ("tag_id", "post_tag"),
        ("category__in", "category"),
        ("tag__in", "post_tag"),
    )
    for key, taxonomy in taxonomy_filters:
        if args.get(key) in (None, "", True):
            continue
        term_ids: set[int] = set()
        for reference in _as_list(args[key]):
            term = term_exists(blog, int(reference) if reference.isdigit() else reference, taxonomy)
            if term is not None:
                term_ids.add(term["term_taxonomy_id"])
                if key in ("cat", "category_name"):
                    term_ids.update(
                        t["term_taxonomy_id"]
                        for t in blog.terms_in(taxonomy)
                        if t["parent"] == term["term_id"]
                    )
        keep(lambda post, ids=frozenset(term_ids): bool(ids.intersection(blog.object_term_ids(post["ID"]))))
    if args.get("meta_key"):
        meta_key = str(args["meta_key"])
        meta_value = args.get("meta_value")
        keep(
            lambda post: any(
                meta_value in (None, True) or str(row["meta_value"]) == str(meta_value)
                for row in blog.meta_rows(post["ID"], meta_key)
            )
        )
    for key, start, end in (("year", 0, 4), ("monthnum", 5, 7), ("day", 8, 10)):
        if str(args.get(key, "")).isdigit():
            number = int(str(args[key]))
            keep(
                lambda post, s=start, e=end, n=number: (
                    post["post_date"][s:e].isdigit() and int(post["post_date"][s:e]) == n
                )
            )

    posts = _sort(posts, args, blog)
    per_page_raw = str(args.get("posts_per_page", args.get("numberposts", -1)))
    nopaging = args.get("nopaging") not in (None, False, "", "0", "false")
    try:
        per_page = int(per_page_raw)
    except ValueError:
        per_page = -1
    offset = int(str(args.get("offset", 0))) if str(args.get("offset", "0")).isdigit() else 0
    if per_page >= 0 and not nopaging:
        paged = max(int(str(args.get("paged", 1))) if str(args.get("paged", "1")).isdigit() else 1, 1)
        start = offset if "offset" in args else (paged - 1) * per_page
        return posts[start : start + per_page]
    return posts[offset:]


# ------------------------------------------------------------------------------- writes


def _comment_default(blog: Blog, post_type: str, option: str) -> str:
    if post_type == "page":
        return "closed"
    return blog.option_str(option) or "open"


def _int_field(value: Any) -> int:
    """PHP's (int) cast of a CLI value."""
    if isinstance(value, bool) or value is None:
        return int(bool(value))
    if isinstance(value, int):
        return value
    match = re.match(r"\s*([+-]?\d+)", str(value))
    return int(match.group(1)) if match else 0


def _valid_date(text: str) -> bool:
    return parse_mysql(text) is not None


def _settle_status(status: str, post_type: str, date_gmt: str, clock: Clock) -> str:
    """Publish with a future date → future; future with a past date → publish (wp_insert_post)."""
    if post_type == "attachment" or date_gmt == ZERO_DATE:
        return status
    scheduled = parse_mysql(date_gmt)
    if scheduled is None:
        return status
    seconds_ahead = (scheduled - clock.now_utc.replace(tzinfo=None)).total_seconds()
    if status == "publish" and seconds_ahead >= 60:
        return "future"
    if status == "future" and seconds_ahead < 60:
        return "publish"
    return status


def _unique_post_name(blog: Blog, name: str, post: PostRow) -> str:
    if post["post_status"] in FLOATING_STATUSES or post["post_type"] == "nav_menu_item":
        return name
    hierarchical = POST_TYPES.get(post["post_type"], POST_TYPES["post"]).hierarchical

    def taken(candidate: str) -> bool:
        for other in blog.posts:
            if other["ID"] == post["ID"] or other["post_name"] != candidate:
                continue
            if post["post_type"] == "attachment" or other["post_type"] == "attachment":
                return True
            if other["post_type"] != post["post_type"]:
                continue
            if hierarchical and other["post_parent"] != post["post_parent"]:
                continue
            return True
        return False

    return unique_slug(name, taken)


def save_post(
    blog: Blog, clock: Clock, fields: Mapping[str, Any], *, existing: PostRow | None, current_user: int
) -> PostRow | WPError:
    """The part of `wp_insert_post()` shared by create and update."""
    post_type = str(fields.get("post_type") or (existing["post_type"] if existing else "post"))
    status = str(fields.get("post_status") or "draft")
    title = str(fields.get("post_title") or "")
    content = str(fields.get("post_content") or "")
    excerpt = str(fields.get("post_excerpt") or "")
    if post_type not in ("attachment", "nav_menu_item") and not (title or content or excerpt):
        return WPError("empty_content", "Content, title, and excerpt are empty.")
    if status == "inherit" and post_type != "attachment" and existing is None:
        status = "draft"

    post_date = str(fields.get("post_date") or "")
    post_date_gmt = str(fields.get("post_date_gmt") or "")
    if not post_date or post_date == ZERO_DATE:
        post_date = (
            local_from_gmt(blog, post_date_gmt)
            if post_date_gmt and post_date_gmt != ZERO_DATE
            else clock.local(blog)
        )
    if not _valid_date(post_date):
        return WPError("invalid_date", "Invalid date.")
    post_date = (parse_mysql(post_date) or datetime(1970, 1, 1)).strftime("%Y-%m-%d %H:%M:%S")
    if not post_date_gmt or post_date_gmt == ZERO_DATE:
        post_date_gmt = ZERO_DATE if status in FLOATING_STATUSES else gmt_from_local(blog, post_date)
    status = _settle_status(status, post_type, post_date_gmt, clock)

    post_name = str(fields.get("post_name") or "")
    if post_name:
        post_name = sanitize_title(post_name)
    elif status not in FLOATING_STATUSES:
        post_name = sanitize_title(title)
        if not post_name and existing is not None:
            post_name = str(existing["ID"])
    if status == "trash" and post_name and not post_name.endswith("__trashed"):
        post_name = f"{post_name}__trashed"

    post_id = existing["ID"] if existing is not None else blog.new_post_id()
    author = fields.get("post_author")
    if author in (None, "", True):
        author = existing["post_author"] if existing is not None else str(current_user)
    parent = fields.get("post_parent")
    row = PostRow(
        ID=post_id,
        post_author=str(author),
        post_date=post_date,
        post_date_gmt=post_date_gmt,
        post_content=content,
        post_title=title,
        post_excerpt=excerpt,
        post_status=status,
        comment_status=str(
            fields.get("comment_status") or _comment_default(blog, post_type, "default_comment_status")
        ),
        ping_status=str(
            fields.get("ping_status") or _comment_default(blog, post_type, "default_ping_status")
        ),
        post_password=str(fields.get("post_password") or ""),
        post_name=post_name,
        to_ping=str(fields.get("to_ping") or ""),
        pinged=str(fields.get("pinged") or ""),
        post_modified=clock.local(blog),
        post_modified_gmt=clock.gmt(),
        post_content_filtered=str(fields.get("post_content_filtered") or ""),
        post_parent=_int_field(parent),
        guid=str(
            fields.get("guid")
            or (existing["guid"] if existing is not None else default_guid(blog, post_id, post_type))
        ),
        menu_order=_int_field(fields.get("menu_order")),
        post_type=post_type,
        post_mime_type=str(fields.get("post_mime_type") or ""),
        comment_count=existing["comment_count"] if existing is not None else "0",
        filter="raw",
    )
    row["post_name"] = _unique_post_name(blog, post_name, row)
    if existing is None:
        blog.posts.append(row)
    else:
        existing.update(row)
        row = existing

    if post_type == "post":
        categories = fields.get("post_category")
        if isinstance(categories, list) and categories:
            set_object_terms(blog, post_id, [int(c) for c in categories], "category", append=False)
        elif not object_categories(blog, post_id):
            default = int(blog.option_str("default_category") or 1)
            set_object_terms(blog, post_id, [default], "category", append=False)
        tags = fields.get("tags_input")
        if isinstance(tags, str) and tags:
            set_object_terms(blog, post_id, [t.strip() for t in tags.split(",")], "post_tag", append=False)
    meta_input = fields.get("meta_input")
    if isinstance(meta_input, Mapping):
        for key, value in meta_input.items():
            blog.update_meta(post_id, str(key), value)
    return row


def insert_post(blog: Blog, clock: Clock, fields: Mapping[str, Any], current_user: int) -> PostRow | WPError:
    return save_post(blog, clock, fields, existing=None, current_user=current_user)


def update_post(blog: Blog, clock: Clock, changes: Mapping[str, Any], current_user: int) -> PostRow | WPError:
    """`wp_update_post()` including its "drafts keep floating dates" rule."""
    raw_id = str(changes.get("ID", ""))
    post = blog.post(int(raw_id)) if raw_id.strip().isdigit() else None
    if post is None:
        return WPError("invalid_post", "Invalid post ID.")
    clear_date = (
        post["post_status"] in FLOATING_STATUSES
        and changes.get("edit_date") in (None, False, "", "0")
        and post["post_date_gmt"] == ZERO_DATE
    )
    merged: dict[str, Any] = dict(post)
    merged.update(changes)
    if "post_category" not in changes:
        merged.pop("post_category", None)
    if clear_date:
        merged["post_date"] = clock.local(blog)
        merged["post_date_gmt"] = ""
    return save_post(blog, clock, merged, existing=post, current_user=current_user)


def trash_post(blog: Blog, clock: Clock, post: PostRow) -> None:
    blog.update_meta(post["ID"], "_wp_trash_meta_status", post["post_status"])
    blog.update_meta(post["ID"], "_wp_trash_meta_time", str(clock.timestamp()))
    post["post_status"] = "trash"
    if post["post_name"] and not post["post_name"].endswith("__trashed"):
        post["post_name"] = f"{post['post_name']}__trashed"


def delete_post(blog: Blog, clock: Clock, post_id: int, *, force: bool) -> PostRow | None:
    """`wp_delete_post()`: posts and pages go to the trash first unless forced."""
    post = blog.post(post_id)
    if post is None:
        return None
    if not force and post["post_type"] in ("post", "page") and post["post_status"] != "trash":
        trash_post(blog, clock, post)
        return post
    for other in blog.posts:
        if other["post_parent"] == post_id:
            other["post_parent"] = post["post_parent"]
    if post["post_type"] == "attachment":
        # wp_delete_attachment(): delete_metadata('post', null, '_thumbnail_id', $id, true), so
        # every post that used the file as its featured image loses that meta row.
        blog.raw["postmeta"] = [
            row
            for row in blog.postmeta
            if not (row["meta_key"] == "_thumbnail_id" and str(row["meta_value"]) == str(post_id))
        ]
    blog.remove_post(post_id)
    return post
