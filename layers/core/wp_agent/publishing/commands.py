"""The WP-CLI commands of the publish sequence (argv; the site's --url is added by the step runner)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from wp_agent.publishing.schedule import PostDates
from wp_agent.publishing.steps import PublishRun
from wp_agent.publishing.terms import Taxonomy, WantedTerm

# Hidden post meta that identifies the post of one publish: a create whose outcome is unknown
# (timeout, crash after the insert) can still be found, removed — or finished by a retry.
MARKER_META_KEY = "_wp_agent_publish_id"


def post_create_argv(run: PublishRun, dates: PostDates | None) -> list[str]:
    article = run.article
    meta = {key: value for key, value in (article.meta or {}).items() if value is not None}
    meta[MARKER_META_KEY] = run.token
    argv = [
        "post",
        "create",
        "--post_type=post",
        "--post_status=draft",
        f"--post_title={article.title}",
        f"--post_content={article.content}",
    ]
    if dates is not None:
        argv += [f"--post_date={dates.local}", f"--post_date_gmt={dates.gmt}"]
    argv += [f"--meta_input={json.dumps(meta, ensure_ascii=False, separators=(',', ':'))}", "--porcelain"]
    return argv


def media_import_argv(post_id: int, url: str) -> list[str]:
    return ["media", "import", url, f"--post_id={post_id}", "--featured_image", "--porcelain"]


def term_create_argv(term: WantedTerm) -> list[str]:
    # Categories arrive as slugs: the slug is kept exactly and doubles as the name.
    slug = [f"--slug={term.label}"] if term.taxonomy == "category" else []
    return ["term", "create", term.taxonomy, term.label, *slug, "--porcelain"]


def term_list_argv(taxonomy: Taxonomy) -> list[str]:
    """Every term of the taxonomy: ID, name and slug (publishing/terms.py parses it)."""
    return ["term", "list", taxonomy, "--fields=term_id,name,slug", "--format=json"]


def term_delete_argv(taxonomy: str, term_id: int) -> list[str]:
    return ["term", "delete", taxonomy, str(term_id)]


def post_term_set_argv(post_id: int, taxonomy: Taxonomy, ids: Sequence[str]) -> list[str]:
    return ["post", "term", "set", str(post_id), taxonomy, *ids, "--by=id"]


def post_terms_argv(post_id: int, taxonomies: Sequence[Taxonomy]) -> list[str]:
    """The IDs of the post's terms in these taxonomies (read back after setting them)."""
    return ["post", "term", "list", str(post_id), *taxonomies, "--fields=term_id", "--format=ids"]


def term_users_argv(taxonomy: Taxonomy, term_id: int) -> list[str]:
    """The posts of any type and status (but trash) that have the term."""
    by_term = "--cat" if taxonomy == "category" else "--tag_id"  # WP_Query's argument per taxonomy
    return ["post", "list", f"{by_term}={term_id}", "--post_type=any", "--post_status=any", "--format=ids"]


def post_update_argv(post_id: int, status: str, dates: PostDates | None) -> list[str]:
    # The draft was created with an explicit post_date_gmt when a date was given, so
    # wp_update_post's "drafts float" reset does not apply; without one, the date becomes now.
    argv = ["post", "update", str(post_id), f"--post_status={status}"]
    if dates is not None:
        argv += [f"--post_date={dates.local}", f"--post_date_gmt={dates.gmt}"]
    return argv


def marked_posts_argv(run: PublishRun) -> list[str]:
    """The posts carrying this publish's marker (in any status)."""
    return [
        "post",
        "list",
        "--post_type=post",
        "--post_status=any",
        f"--meta_key={MARKER_META_KEY}",
        f"--meta_value={run.token}",
        "--format=ids",
    ]


def marker_note(run: PublishRun) -> str:
    return f"投稿が作成されたかどうか確認できませんでした（投稿メタ {MARKER_META_KEY}={run.token} で検索できます）。"


def attachments_argv(post_id: int) -> list[str]:
    """The media attached to a post (a featured image imported for it has it as parent)."""
    return [
        "post",
        "list",
        "--post_type=attachment",
        "--post_status=inherit",
        f"--post_parent={post_id}",
        "--format=ids",
    ]
