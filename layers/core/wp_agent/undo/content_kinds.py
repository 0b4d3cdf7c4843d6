"""Posts and pages (menu items too), comments and terms, as kinds of changed things."""

from __future__ import annotations

import json
import re
from typing import Any

from wp_agent.executors.port import CommandResult
from wp_agent.models.undo import PlanStep
from wp_agent.undo.kind import (
    CaptureError,
    Kind,
    Parts,
    absent,
    created_or_gone,
    first_line,
    json_of,
    meta_steps,
    step,
)
from wp_agent.undo.sections import META, fields_and_meta, fields_and_meta_reads, wants, whole

# -- posts and pages (and menu items, which are posts) ------------------------------------------

POST_FIELDS = (
    "post_type", "post_title", "post_content", "post_excerpt", "post_status", "post_name", "post_author",
    "post_parent", "menu_order", "comment_status", "ping_status", "post_password", "post_date",
    "post_date_gmt", "post_mime_type", "to_ping", "pinged", "post_content_filtered",
)  # fmt: skip
POST_TAXONOMIES = ("category", "post_tag", "post_format")
POST_SECTIONS = ("fields", META, "terms")
_TRASHED_COMMENTS = "_wp_trash_meta_comments_status"
_OLD_SLUG = "_wp_old_slug"
_HIERARCHICAL = {"page"}  # WordPress keeps no old slugs for hierarchical types


def _post_reads(key: list[str], parts: Parts) -> list[list[str]]:
    post_id = key[0]
    reads = fields_and_meta_reads(
        parts, ["post", "get", post_id, "--format=json"], ["post", "meta", "list", post_id]
    )
    if wants(parts, "terms"):
        # `term list --object_ids` rather than `post term list`: that one refuses a taxonomy the
        # post's type does not have (pages, menu items).
        reads.append(
            ["term", "list", *POST_TAXONOMIES, f"--object_ids={post_id}", "--fields=term_id,taxonomy",
             "--format=json"]
        )  # fmt: skip
    return reads


def _post_parse(key: list[str], parts: Parts, results: list[CommandResult]) -> Any:
    # The first read tells a missing post (post get and post meta list say so; term list does not).
    if absent(POST, results):
        return None
    image, _, pending = fields_and_meta(parts, results, f"投稿 ID {key[0]}", POST_FIELDS)
    if wants(parts, "terms"):
        terms: dict[str, list[int]] = {}
        for row in json_of(next(pending), f"投稿 ID {key[0]} のカテゴリ・タグ") or []:
            terms.setdefault(str(row["taxonomy"]), []).append(int(row["term_id"]))
        image["terms"] = {tax: sorted(ids) for tax, ids in sorted(terms.items())}
    return image


def _post_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    post_id, label = key[0], _post_label(key)
    if before is None and current is None:
        return []
    if before is None:
        return [step(["post", "delete", post_id, "--force"], f"作成された{label}を削除")]
    if current is None:
        return _post_recreate(post_id, before, label)
    changed = {k: v for k, v in before.get("fields", {}).items() if current["fields"].get(k) != v}
    steps: list[PlanStep] = []
    if changed:
        # edit_date: WordPress otherwise gives a draft without a GMT date the current time.
        dated = ["--edit_date=1"] if "post_date" in changed or "post_date_gmt" in changed else []
        steps.append(
            step(["post", "update", post_id, *(f"--{k}={v}" for k, v in changed.items()), *dated],
                  f"{label}の{'・'.join(changed)}を元に戻す")
        )  # fmt: skip
        steps.extend(_old_slug_steps(post_id, before, current, label))
    meta = meta_steps("post", post_id, before.get(META, {}), current.get(META, {}), label)
    if current.get("fields", {}).get("post_status") == "trash" != before.get("fields", {}).get("post_status"):
        meta = [_as_trash_record(s, label) for s in meta]
    steps.extend(meta)
    # Trashing a post moved its comments to "post-trashed", remembering their status in this meta.
    trashed = current.get(META, {}).get(_TRASHED_COMMENTS, [])
    if trashed and not before.get(META, {}).get(_TRASHED_COMMENTS) and isinstance(trashed[0], dict):
        for comment_id, status in trashed[0].items():
            # As wp_untrash_post_comments() does: the status itself (the spam/trash verbs would record
            # "post-trashed" as the earlier status); approve/unapprove keep the comment's GMT date.
            verb = _MODERATION.get(str(status))
            argv = (
                ["comment", verb, str(comment_id)]
                if verb
                else ["comment", "update", str(comment_id), f"--comment_approved={status}"]
            )
            steps.append(step(argv, f"{label}のコメント ID {comment_id} の状態を元に戻す"))
    if "terms" in before:
        steps.extend(_term_steps(post_id, before["terms"], current["terms"], label))
    return steps


# What WordPress writes when it moves a post to the trash (and removes again when its own 復元 runs).
_TRASH_RECORDS = {
    "_wp_trash_meta_status": "元の公開状態",
    "_wp_trash_meta_time": "日時",
    "_wp_trash_meta_comments_status": "コメントの元の状態",
    "_wp_desired_post_slug": "元のスラッグ",
}


def _as_trash_record(planned: PlanStep, label: str) -> PlanStep:
    """A deletion of the trash's own record says what it is (not "a custom field")."""
    key = planned.argv[4] if planned.argv[2:3] == ["delete"] and len(planned.argv) >= 5 else ""
    if key not in _TRASH_RECORDS:
        return planned
    what = f"{label}をゴミ箱に入れたときにWordPressが残した記録「{_TRASH_RECORDS[key]}」（{key}）を削除"
    return planned.model_copy(update={"restores_ja": what})


def _old_slug_steps(post_id: str, before: Any, current: Any, label: str) -> list[PlanStep]:
    """Giving a published post its slug back makes WordPress remember the slug it had until then as
    an old one (`_wp_old_slug`, e.g. "hello__trashed" after the trash): removed again when the post
    did not have it before."""
    was, now = before["fields"], current["fields"]
    slug = now.get("post_name", "")
    remembered = before.get(META, {}).get(_OLD_SLUG, [])
    if (
        META not in before
        or "meta_keys" in before
        or not slug
        or slug == was.get("post_name")
        or was.get("post_status") != "publish"
        or was.get("post_type") in _HIERARCHICAL
        or slug in remembered
    ):
        return []
    return [
        step(
            ["post", "meta", "delete", post_id, _OLD_SLUG, slug],
            f"{label}の古いスラッグの記録「{slug}」を削除",
            optional=True,  # a custom hierarchical type: WordPress recorded none
        )
    ]


def _term_steps(
    post_id: str, before: dict[str, list[int]], current: dict[str, list[int]], label: str
) -> list[PlanStep]:
    steps = []
    for taxonomy in sorted(set(before) | set(current)):
        was = before.get(taxonomy, [])
        if was == current.get(taxonomy, []):
            continue
        if was:
            argv = ["post", "term", "set", post_id, taxonomy, *map(str, was), "--by=id"]
        else:
            argv = ["post", "term", "remove", post_id, taxonomy, "--all"]
        steps.append(step(argv, f"{label}の{taxonomy}を元に戻す"))
    return steps


def _post_recreate(post_id: str, before: Any, label: str) -> list[PlanStep]:
    if not whole(before, POST_SECTIONS):
        raise CaptureError(f"完全に削除された{label}は、記録した内容が一部のため作り直せません")
    fields = dict(before["fields"])
    argv = ["post", "create", f"--import_id={post_id}", *(f"--{k}={v}" for k, v in fields.items() if v != "")]
    # What the create itself can carry: single-valued meta (--meta_input, JSON) and the categories.
    single = {key: values[0] for key, values in before[META].items() if len(values) == 1}
    if single:
        argv.append(f"--meta_input={json.dumps(single, ensure_ascii=False)}")
    categories = before["terms"].get("category", [])
    if categories:
        argv.append(f"--post_category={','.join(map(str, categories))}")
    steps = [step([*argv, "--porcelain"], f"完全に削除された{label}を再作成（IDが変わる場合があります）")]
    # The rest needs the new ID, known only after the create ran: "{new}" is replaced by the runner.
    multiple = {key: values for key, values in before[META].items() if len(values) != 1}
    steps.extend(meta_steps("post", "{new}", multiple, {}, "再作成した投稿"))
    other_terms = {tax: ids for tax, ids in before["terms"].items() if tax != "category"}
    steps.extend(_term_steps("{new}", other_terms, {}, "再作成した投稿"))
    return steps


def _post_label(key: list[str]) -> str:
    return f"投稿 ID {key[0]}"


POST = Kind(
    "post", _post_reads, _post_parse, _post_restore, _post_label,
    missing=re.compile(r"Could not find the post"), sectioned=True,
)  # fmt: skip


# -- comments --------------------------------------------------------------------------------------

COMMENT_FIELDS = (
    "comment_post_ID", "comment_author", "comment_author_email", "comment_author_url",
    "comment_author_IP", "comment_date", "comment_date_gmt", "comment_content", "comment_karma",
    "comment_approved", "comment_agent", "comment_type", "comment_parent", "user_id",
)  # fmt: skip


def _comment_parse(key: list[str], parts: Parts, results: list[CommandResult]) -> Any:
    if absent(COMMENT, results):
        return None
    fields = json_of(results[0], f"コメント ID {key[0]}")
    return {"fields": {name: str(fields.get(name, "")) for name in COMMENT_FIELDS}}


# Trash and spam keep the previous status in comment meta (which the policy does not let us read or
# write): WordPress's own verbs move a comment in and out of them and keep that meta right.
_INTO = {"trash": "trash", "spam": "spam"}
_OUT_OF = {"trash": "untrash", "spam": "unspam"}
_MODERATION = {"1": "approve", "0": "unapprove"}


def _comment_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    comment_id, label = key[0], f"コメント ID {key[0]}"
    delete = ["comment", "delete", comment_id, "--force"]
    if (ends := created_or_gone(before, current, delete, label)) is not None:
        return ends
    steps = []
    was, now = before["fields"]["comment_approved"], current["fields"]["comment_approved"]
    if was != now and now in _OUT_OF:
        steps.append(step(["comment", _OUT_OF[now], comment_id], f"{label}を{now}から戻す"))
    if was != now and was in _INTO:
        steps.append(step(["comment", _INTO[was], comment_id], f"{label}を{was}に戻す"))
    elif was != now and was in _MODERATION:
        # optional: leaving the trash may already have brought the status back (then WP-CLI refuses)
        steps.append(
            step(["comment", _MODERATION[was], comment_id], f"{label}の承認状態を戻す", optional=True)
        )
    changed = {k: v for k, v in before["fields"].items() if current["fields"].get(k) != v}
    changed.pop("comment_approved", None)  # only through the verbs above: `comment update` re-dates it
    changed.pop("comment_date_gmt", None)  # WordPress derives it from comment_date and the timezone
    if changed:
        steps.append(
            step(["comment", "update", comment_id, *(f"--{k}={v}" for k, v in changed.items())],
                  f"{label}の{'・'.join(changed)}を元に戻す")
        )  # fmt: skip
    return steps


COMMENT = Kind(
    "comment",
    lambda key, parts: [["comment", "get", key[0], "--format=json"]],
    _comment_parse,
    _comment_restore,
    lambda key: f"コメント ID {key[0]}",
    missing=re.compile(r"Could not find the comment|Invalid comment ID"),
)


# -- terms: key = (taxonomy, term id) ------------------------------------------------------------

TERM_FIELDS = ("name", "slug", "description", "parent")


def _term_reads(key: list[str], parts: Parts) -> list[list[str]]:
    return fields_and_meta_reads(
        parts, ["term", "get", key[0], key[1], "--format=json"], ["term", "meta", "list", key[1]]
    )


def _term_parse(key: list[str], parts: Parts, results: list[CommandResult]) -> Any:
    if absent(TERM, results):
        return None
    return fields_and_meta(parts, results, f"ターム ID {key[1]}", TERM_FIELDS)[0]


def _term_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    taxonomy, term_id = key
    label = f"{taxonomy} ID {term_id}"
    delete = ["term", "delete", taxonomy, term_id]
    if (ends := created_or_gone(before, current, delete, label)) is not None:
        return ends
    changed = {k: v for k, v in before.get("fields", {}).items() if current["fields"].get(k) != v}
    steps = []
    if changed:
        steps.append(
            step(["term", "update", taxonomy, term_id, *(f"--{k}={v}" for k, v in changed.items())],
                  f"{label}の{'・'.join(changed)}を元に戻す")
        )  # fmt: skip
    return steps + meta_steps("term", term_id, before.get(META, {}), current.get(META, {}), label)


TERM = Kind(
    "term",
    _term_reads,
    _term_parse,
    _term_restore,
    lambda key: f"{key[0]} ID {key[1]}",
    missing=re.compile(r"Term doesn't exist|Invalid taxonomy"),
    sectioned=True,
)


# -- the set of terms of a taxonomy: key = (taxonomy,) -------------------------------------------
# `post term add/set` and `--tags_input` create the terms they name that do not exist yet.


def _terms_parse(key: list[str], parts: Parts, results: list[CommandResult]) -> Any:
    if not results[0].ok:
        raise CaptureError(f"{key[0]} の一覧を読み取れませんでした（{first_line(results[0].stderr)}）")
    return sorted(int(word) for word in results[0].stdout.split())


def _terms_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    if set(before) - set(current):
        raise CaptureError(f"削除された{key[0]}は元に戻せません")
    added = [str(i) for i in current if i not in before]
    return (
        [step(["term", "delete", key[0], *added], f"作成された{key[0]}（ID {', '.join(added)}）を削除")]
        if added
        else []
    )


TERMS = Kind(
    "terms",
    lambda key, parts: [["term", "list", key[0], "--format=ids"]],
    _terms_parse,
    _terms_restore,
    lambda key: f"{key[0]} の一覧",
)
