"""The kinds of things a command changes, as data: how to read one with read-only WP-CLI commands,
how to tell that it does not exist, and which WP-CLI commands set it back to an earlier state.

A snapshot is plain JSON (None: the thing does not exist). Restoring compares the before-image with
the current state and emits only what differs, so a kind works for every command that touches it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from wp_agent.executors.port import CommandResult
from wp_agent.undo.model import EntityRef, PlanStep

# Runs one read-only argv on the site (scoped like the command); raises CaptureError when the read
# was refused or the site could not be reached. A non-zero exit is returned, not raised.
Read = Callable[[list[str]], CommandResult]


class CaptureError(Exception):
    """A before/after image could not be read; the command is then marked not revertible."""

    def __init__(self, reason_ja: str) -> None:
        super().__init__(reason_ja)
        self.reason_ja = reason_ja


@dataclass(frozen=True)
class Kind:
    name: str
    reads: Callable[[list[str]], list[list[str]]]
    parse: Callable[[list[str], list[CommandResult]], Any]
    restore: Callable[[list[str], Any, Any], list[PlanStep]]
    label: Callable[[list[str]], str]
    # stderr of the first read when the thing does not exist (real WP-CLI 2.10 messages)
    missing: re.Pattern[str] | None = None


def _json(result: CommandResult, what: str) -> Any:
    if not result.ok:
        raise CaptureError(f"{what}を読み取れませんでした（{_first_line(result.stderr)}）")
    try:
        return json.loads(result.stdout or "null")
    except ValueError:
        raise CaptureError(f"{what}の読み取り結果を解釈できませんでした") from None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:200]


def _absent(kind: Kind, results: list[CommandResult]) -> bool:
    first = results[0]
    return not first.ok and kind.missing is not None and bool(kind.missing.search(first.stderr))


def value_args(value: Any) -> list[str]:
    """A stored value as WP-CLI takes it: text as it is, anything else as JSON with --format=json."""
    if isinstance(value, str):
        return [value]
    return [json.dumps(value, ensure_ascii=False), "--format=json"]


def _step(argv: Sequence[str], restores_ja: str, *, optional: bool = False) -> PlanStep:
    return PlanStep(argv=list(argv), restores_ja=restores_ja, optional=optional)


def _created_or_gone(before: Any, current: Any, delete: list[str], label: str) -> list[PlanStep] | None:
    """The steps when the run created or deleted the thing (None: it exists before and now).
    Created: delete it again. Deleted for good: it cannot be brought back."""
    if before is None and current is None:
        return []
    if before is None:
        return [_step(delete, f"作成された{label}を削除")]
    if current is None:
        raise CaptureError(f"完全に削除された{label}は元に戻せません")
    return None


# -- meta of any object: {key: [values…]} --------------------------------------------------------


def _meta_rows(rows: Any, what: str) -> dict[str, list[Any]]:
    if not isinstance(rows, list):
        raise CaptureError(f"{what}を解釈できませんでした")
    meta: dict[str, list[Any]] = {}
    for row in rows:
        meta.setdefault(str(row["meta_key"]), []).append(row["meta_value"])
    return meta


def meta_steps(
    obj: str, object_id: str, before: dict[str, list[Any]], current: dict[str, list[Any]], label: str
) -> list[PlanStep]:
    """Commands that make the object's meta equal `before` again (only keys that differ)."""
    steps: list[PlanStep] = []
    for key in sorted(set(before) | set(current)):
        was, now = before.get(key, []), current.get(key, [])
        if was == now:
            continue
        what = f"{label}のメタ「{key}」"
        if not was:
            # optional: WordPress may already have removed it while restoring something else
            steps.append(
                _step([obj, "meta", "delete", object_id, key], f"{what}を削除（実行前はなし）", optional=True)
            )
        elif len(was) == 1 and len(now) == 1:
            steps.append(
                _step([obj, "meta", "update", object_id, key, *value_args(was[0])], f"{what}を元の値に戻す")
            )
        else:
            if now:
                steps.append(_step([obj, "meta", "delete", object_id, key], f"{what}をいったん削除"))
            steps.extend(
                _step([obj, "meta", "add", object_id, key, *value_args(v)], f"{what}を元の値で追加")
                for v in was
            )
    return steps


# -- posts and pages (and menu items, which are posts) ------------------------------------------

POST_FIELDS = (
    "post_type", "post_title", "post_content", "post_excerpt", "post_status", "post_name", "post_author",
    "post_parent", "menu_order", "comment_status", "ping_status", "post_password", "post_date",
    "post_date_gmt", "post_mime_type", "to_ping", "pinged", "post_content_filtered",
)  # fmt: skip
POST_TAXONOMIES = ("category", "post_tag", "post_format")
_TRASHED_COMMENTS = "_wp_trash_meta_comments_status"


def _post_reads(key: list[str]) -> list[list[str]]:
    post_id = key[0]
    return [
        ["post", "get", post_id, "--format=json"],
        ["post", "meta", "list", post_id, "--format=json", "--unserialize"],
        # `term list --object_ids` rather than `post term list`: that one refuses a taxonomy the
        # post's type does not have (pages, menu items).
        [
            "term",
            "list",
            *POST_TAXONOMIES,
            f"--object_ids={post_id}",
            "--fields=term_id,taxonomy",
            "--format=json",
        ],
    ]


def _post_parse(key: list[str], results: list[CommandResult]) -> Any:
    if _absent(POST, results):
        return None
    fields = _json(results[0], f"投稿 ID {key[0]}")
    terms: dict[str, list[int]] = {}
    for row in _json(results[2], f"投稿 ID {key[0]} のカテゴリ・タグ") or []:
        terms.setdefault(str(row["taxonomy"]), []).append(int(row["term_id"]))
    return {
        "fields": {name: str(fields.get(name, "")) for name in POST_FIELDS},
        "meta": _meta_rows(_json(results[1], f"投稿 ID {key[0]} のメタ"), "投稿のメタ"),
        "terms": {tax: sorted(ids) for tax, ids in sorted(terms.items())},
    }


def _post_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    post_id, label = key[0], _post_label(key)
    if before is None and current is None:
        return []
    if before is None:
        return [_step(["post", "delete", post_id, "--force"], f"作成された{label}を削除")]
    if current is None:
        return _post_recreate(post_id, before, label)
    changed = {k: v for k, v in before["fields"].items() if current["fields"].get(k) != v}
    steps: list[PlanStep] = []
    if changed:
        # edit_date: WordPress otherwise gives a draft without a GMT date the current time.
        dated = ["--edit_date=1"] if "post_date" in changed or "post_date_gmt" in changed else []
        steps.append(
            _step(["post", "update", post_id, *(f"--{k}={v}" for k, v in changed.items()), *dated],
                  f"{label}の{'・'.join(changed)}を元に戻す")
        )  # fmt: skip
    steps.extend(meta_steps("post", post_id, before["meta"], current["meta"], label))
    # Trashing a post moved its comments to "post-trashed", remembering their status in this meta.
    trashed = current["meta"].get(_TRASHED_COMMENTS, [])
    if trashed and not before["meta"].get(_TRASHED_COMMENTS) and isinstance(trashed[0], dict):
        for comment_id, status in trashed[0].items():
            # As wp_untrash_post_comments() does: the status itself (the spam/trash verbs would record
            # "post-trashed" as the earlier status); approve/unapprove keep the comment's GMT date.
            verb = _MODERATION.get(str(status))
            argv = (
                ["comment", verb, str(comment_id)]
                if verb
                else ["comment", "update", str(comment_id), f"--comment_approved={status}"]
            )
            steps.append(_step(argv, f"{label}のコメント ID {comment_id} の状態を元に戻す"))
    steps.extend(_term_steps(post_id, before["terms"], current["terms"], label))
    return steps


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
        steps.append(_step(argv, f"{label}の{taxonomy}を元に戻す"))
    return steps


def _post_recreate(post_id: str, before: Any, label: str) -> list[PlanStep]:
    fields = dict(before["fields"])
    argv = ["post", "create", f"--import_id={post_id}", *(f"--{k}={v}" for k, v in fields.items() if v != "")]
    steps = [_step([*argv, "--porcelain"], f"完全に削除された{label}を再作成（IDが変わる場合があります）")]
    # The new ID is only known after it runs: "{new}" is replaced by the runner.
    steps.extend(meta_steps("post", "{new}", before["meta"], {}, "再作成した投稿"))
    steps.extend(_term_steps("{new}", before["terms"], {}, "再作成した投稿"))
    return steps


def _post_label(key: list[str]) -> str:
    return f"投稿 ID {key[0]}"


POST = Kind(
    "post", _post_reads, _post_parse, _post_restore, _post_label,
    missing=re.compile(r"Could not find the post"),
)  # fmt: skip


# -- comments --------------------------------------------------------------------------------------

COMMENT_FIELDS = (
    "comment_post_ID", "comment_author", "comment_author_email", "comment_author_url",
    "comment_author_IP", "comment_date", "comment_date_gmt", "comment_content", "comment_karma",
    "comment_approved", "comment_agent", "comment_type", "comment_parent", "user_id",
)  # fmt: skip


def _comment_parse(key: list[str], results: list[CommandResult]) -> Any:
    if _absent(COMMENT, results):
        return None
    fields = _json(results[0], f"コメント ID {key[0]}")
    return {"fields": {name: str(fields.get(name, "")) for name in COMMENT_FIELDS}}


# Trash and spam keep the previous status in comment meta (which the policy does not let us read or
# write): WordPress's own verbs move a comment in and out of them and keep that meta right.
_INTO = {"trash": "trash", "spam": "spam"}
_OUT_OF = {"trash": "untrash", "spam": "unspam"}
_MODERATION = {"1": "approve", "0": "unapprove"}


def _comment_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    comment_id, label = key[0], f"コメント ID {key[0]}"
    delete = ["comment", "delete", comment_id, "--force"]
    if (ends := _created_or_gone(before, current, delete, label)) is not None:
        return ends
    steps = []
    was, now = before["fields"]["comment_approved"], current["fields"]["comment_approved"]
    if was != now and now in _OUT_OF:
        steps.append(_step(["comment", _OUT_OF[now], comment_id], f"{label}を{now}から戻す"))
    if was != now and was in _INTO:
        steps.append(_step(["comment", _INTO[was], comment_id], f"{label}を{was}に戻す"))
    elif was != now and was in _MODERATION:
        # optional: leaving the trash may already have brought the status back (then WP-CLI refuses)
        steps.append(
            _step(["comment", _MODERATION[was], comment_id], f"{label}の承認状態を戻す", optional=True)
        )
    changed = {k: v for k, v in before["fields"].items() if current["fields"].get(k) != v}
    changed.pop("comment_approved", None)  # only through the verbs above: `comment update` re-dates it
    changed.pop("comment_date_gmt", None)  # WordPress derives it from comment_date and the timezone
    if changed:
        steps.append(
            _step(["comment", "update", comment_id, *(f"--{k}={v}" for k, v in changed.items())],
                  f"{label}の{'・'.join(changed)}を元に戻す")
        )  # fmt: skip
    return steps


COMMENT = Kind(
    "comment",
    lambda key: [["comment", "get", key[0], "--format=json"]],
    _comment_parse,
    _comment_restore,
    lambda key: f"コメント ID {key[0]}",
    missing=re.compile(r"Could not find the comment|Invalid comment ID"),
)


# -- terms: key = (taxonomy, term id) ------------------------------------------------------------

TERM_FIELDS = ("name", "slug", "description", "parent")


def _term_parse(key: list[str], results: list[CommandResult]) -> Any:
    if _absent(TERM, results):
        return None
    fields = _json(results[0], f"ターム ID {key[1]}")
    return {
        "fields": {name: str(fields.get(name, "")) for name in TERM_FIELDS},
        "meta": _meta_rows(_json(results[1], f"ターム ID {key[1]} のメタ"), "タームのメタ"),
    }


def _term_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    taxonomy, term_id = key
    label = f"{taxonomy} ID {term_id}"
    delete = ["term", "delete", taxonomy, term_id]
    if (ends := _created_or_gone(before, current, delete, label)) is not None:
        return ends
    changed = {k: v for k, v in before["fields"].items() if current["fields"].get(k) != v}
    steps = []
    if changed:
        steps.append(
            _step(["term", "update", taxonomy, term_id, *(f"--{k}={v}" for k, v in changed.items())],
                  f"{label}の{'・'.join(changed)}を元に戻す")
        )  # fmt: skip
    return steps + meta_steps("term", term_id, before["meta"], current["meta"], label)


TERM = Kind(
    "term",
    lambda key: [
        ["term", "get", key[0], key[1], "--format=json"],
        ["term", "meta", "list", key[1], "--format=json", "--unserialize"],
    ],
    _term_parse,
    _term_restore,
    lambda key: f"{key[0]} ID {key[1]}",
    missing=re.compile(r"Term doesn't exist|Invalid taxonomy"),
)


# -- the set of terms of a taxonomy: key = (taxonomy,) -------------------------------------------
# `post term add/set` and `--tags_input` create the terms they name that do not exist yet.


def _terms_parse(key: list[str], results: list[CommandResult]) -> Any:
    if not results[0].ok:
        raise CaptureError(f"{key[0]} の一覧を読み取れませんでした（{_first_line(results[0].stderr)}）")
    return sorted(int(word) for word in results[0].stdout.split())


def _terms_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    if set(before) - set(current):
        raise CaptureError(f"削除された{key[0]}は元に戻せません")
    added = [str(i) for i in current if i not in before]
    return (
        [_step(["term", "delete", key[0], *added], f"作成された{key[0]}（ID {', '.join(added)}）を削除")]
        if added
        else []
    )


TERMS = Kind(
    "terms",
    lambda key: [["term", "list", key[0], "--format=ids"]],
    _terms_parse,
    _terms_restore,
    lambda key: f"{key[0]} の一覧",
)


# -- options: key = (name,) -------------------------------------------------------------------------


def _option_parse(key: list[str], results: list[CommandResult]) -> Any:
    rows = _json(results[0], f"設定「{key[0]}」")
    row = next((r for r in rows or [] if r.get("option_name") == key[0]), None)
    if row is None:
        return None
    return {"value": row.get("option_value"), "autoload": str(row.get("autoload", "yes"))}


def _option_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    name, label = key[0], f"設定「{key[0]}」"
    if before is None and current is None:
        return []
    if before is None:
        return [_step(["option", "delete", name], f"追加された{label}を削除")]
    if current is None:
        return [
            _step(["option", "add", name, *value_args(before["value"]), f"--autoload={before['autoload']}"],
                  f"削除された{label}を元の値で追加")
        ]  # fmt: skip
    argv = ["option", "update", name, *value_args(before["value"])]
    if before["autoload"] != current["autoload"]:
        argv.append(f"--autoload={before['autoload']}")
    return [_step(argv, f"{label}を元の値に戻す")]


OPTION = Kind(
    "option",
    # One read: the value (unserialized, as JSON) and autoload; --search matches patterns, so the
    # exact name is picked from the rows.
    lambda key: [
        [
            "option",
            "list",
            f"--search={key[0]}",
            "--fields=option_name,option_value,autoload",
            "--format=json",
            "--unserialize",
        ]
    ],
    _option_parse,
    _option_restore,
    lambda key: f"設定「{key[0]}」",
)


# -- users: key = (user ID,) -------------------------------------------------------------------------

USER_FIELDS = ("user_login", "user_email", "user_url", "user_nicename", "display_name")
# Profile meta, and what a network adds when a role is set (primary_blog, source_domain).
USER_META = "first_name,last_name,nickname,description,locale,primary_blog,source_domain"


def _user_parse(key: list[str], results: list[CommandResult]) -> Any:
    if _absent(USER, results):
        return None
    fields = _json(results[0], f"ユーザー ID {key[0]}")
    roles = [r.strip() for r in str(fields.get("roles", "")).split(",") if r.strip()]
    meta = _meta_rows(_json(results[1], f"ユーザー ID {key[0]} のメタ"), "ユーザーのメタ")
    return {"fields": {name: str(fields.get(name, "")) for name in USER_FIELDS}, "roles": roles, "meta": meta}


def _user_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    user_id, label = key[0], f"ユーザー ID {key[0]}"
    # --network: on a network `user delete` alone only removes the user from the current site.
    delete = ["user", "delete", user_id, "--yes", "--network"]
    if (ends := _created_or_gone(before, current, delete, label)) is not None:
        return ends
    steps = []
    changed = {
        k: v for k, v in before["fields"].items() if k != "user_login" and current["fields"].get(k) != v
    }
    if changed:
        steps.append(
            _step(["user", "update", user_id, *(f"--{k}={v}" for k, v in changed.items()), "--skip-email"],
                  f"{label}の{'・'.join(changed)}を元に戻す")
        )  # fmt: skip
    if before["roles"] != current["roles"]:
        if before["roles"]:
            steps.append(
                _step(["user", "set-role", user_id, before["roles"][0]], f"{label}の権限グループを元に戻す")
            )
            steps.extend(
                _step(["user", "add-role", user_id, role], f"{label}の権限グループ「{role}」を戻す")
                for role in before["roles"][1:]
            )
        else:
            steps.extend(
                _step(["user", "remove-role", user_id, role], f"{label}の権限グループ「{role}」を外す")
                for role in current["roles"]
            )
    return steps + meta_steps("user", user_id, before["meta"], current["meta"], label)


USER = Kind(
    "user",
    lambda key: [
        ["user", "get", key[0], "--format=json", f"--fields=ID,roles,{','.join(USER_FIELDS)}"],
        ["user", "meta", "list", key[0], f"--keys={USER_META}", "--format=json", "--unserialize"],
    ],
    _user_parse,
    _user_restore,
    lambda key: f"ユーザー ID {key[0]}",
    missing=re.compile(r"Invalid user ID, email or login"),
)


# -- one meta key of a user, term or comment: key = (object, id, meta key) -------------------------


def _meta_parse(key: list[str], results: list[CommandResult]) -> Any:
    meta = _meta_rows(_json(results[0], f"{key[0]} ID {key[1]} のメタ「{key[2]}」"), "メタ")
    return meta.get(key[2], [])


META = Kind(
    "meta",
    lambda key: [[key[0], "meta", "list", key[1], f"--keys={key[2]}", "--format=json", "--unserialize"]],
    _meta_parse,
    lambda key, before, current: meta_steps(
        key[0], key[1], {key[2]: before or []}, {key[2]: current or []}, f"{key[0]} ID {key[1]}"
    ),
    lambda key: f"{key[0]} ID {key[1]} のメタ「{key[2]}」",
)


# -- menus: key = (menu term ID,); menu items: key = (menu,) ---------------------------------------

MENU_ITEM_FIELDS = "db_id,type,object,object_id,title,link,position,menu_item_parent,target,attr_title,description,classes,xfn"


def _menu_parse(key: list[str], results: list[CommandResult]) -> Any:
    rows = _json(results[0], "メニュー")
    row = next((r for r in rows or [] if str(r.get("term_id")) == key[0]), None)
    return None if row is None else {"name": row.get("name"), "slug": row.get("slug")}


def _menu_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    if before is None and current is not None:
        return [_step(["menu", "delete", key[0]], f"作成されたメニュー ID {key[0]} を削除")]
    if before is not None and current is None:
        raise CaptureError(f"削除されたメニュー ID {key[0]} は元に戻せません")
    return []


MENU = Kind(
    "menu",
    lambda key: [["menu", "list", "--format=json", "--fields=term_id,name,slug"]],
    _menu_parse,
    _menu_restore,
    lambda key: f"メニュー ID {key[0]}",
)


def _menu_items_parse(key: list[str], results: list[CommandResult]) -> Any:
    if _absent(MENU_ITEMS, results):
        return None
    return {str(row["db_id"]): row for row in _json(results[0], f"メニュー「{key[0]}」の項目") or []}


def _menu_items_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    label = f"メニュー「{key[0]}」"
    before, current = before or {}, current or {}
    removed = [item for item in before if item not in current]
    if removed:
        raise CaptureError(f"{label}から削除された項目（ID {', '.join(removed)}）は元に戻せません")
    steps = []
    added = [item for item in current if item not in before]
    if added:
        steps.append(_step(["menu", "item", "delete", *added], f"{label}に追加された項目を削除"))
    for item_id, was in before.items():
        now = current[item_id]
        if was == now:
            continue
        argv = ["menu", "item", "update", item_id]
        for field, flag in (("title", "title"), ("link", "link"), ("position", "position"),
                            ("menu_item_parent", "parent-id"), ("target", "target"),
                            ("attr_title", "attr-title"), ("description", "description"), ("xfn", "xfn")):  # fmt: skip
            if was.get(field) != now.get(field):
                argv.append(f"--{flag}={was.get(field)}")
        if was.get("classes") != now.get("classes"):
            argv.append(f"--classes={' '.join(was.get('classes') or [])}")
        steps.append(_step(argv, f"{label}の項目 ID {item_id} を元に戻す"))
    return steps


MENU_ITEMS = Kind(
    "menu_items",
    lambda key: [["menu", "item", "list", key[0], "--format=json", f"--fields={MENU_ITEM_FIELDS}"]],
    _menu_items_parse,
    _menu_items_restore,
    lambda key: f"メニュー「{key[0]}」の項目",
    missing=re.compile(r"Invalid menu"),
)


# -- plugins and the active theme: key = () ----------------------------------------------------------


def _plugins_parse(key: list[str], results: list[CommandResult]) -> Any:
    rows = _json(results[0], "プラグインの一覧")
    return {str(r["name"]): {"status": r.get("status"), "version": r.get("version")} for r in rows or []}


def _plugins_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    steps = []
    for name, was in sorted(before.items()):
        now = current.get(name)
        if now is None or now.get("version") != was.get("version"):
            raise CaptureError(f"プラグイン「{name}」のファイルの変更（削除・更新）は元に戻せません")
        if was["status"] == now["status"]:
            continue
        if was["status"] == "active":
            steps.append(_step(["plugin", "activate", name], f"プラグイン「{name}」を再び有効化"))
        elif was["status"] == "inactive" and now["status"] == "active":
            steps.append(_step(["plugin", "deactivate", name], f"プラグイン「{name}」を無効に戻す"))
        else:
            raise CaptureError(f"プラグイン「{name}」の状態（{now['status']}）は元に戻せません")
    if set(current) - set(before):
        raise CaptureError("インストールされたプラグインの削除は、元に戻す操作では行いません")
    return steps


PLUGINS = Kind(
    "plugins",
    lambda key: [["plugin", "list", "--fields=name,status,version", "--format=json", "--skip-update-check"]],
    _plugins_parse,
    _plugins_restore,
    lambda key: "プラグインの有効・無効",
)


def _theme_parse(key: list[str], results: list[CommandResult]) -> Any:
    if not results[0].ok:
        raise CaptureError("有効なテーマを読み取れませんでした")
    return results[0].stdout.strip()


THEME = Kind(
    "theme",
    lambda key: [["theme", "list", "--status=active", "--field=name", "--skip-update-check"]],
    _theme_parse,
    lambda key, before, current: (
        [_step(["theme", "activate", before], f"テーマを「{before}」に戻す")] if before != current else []
    ),
    lambda key: "有効なテーマ",
)


# -- multisite sites: key = (blog id,) ---------------------------------------------------------------

SITE_FLAGS = {  # flag: (command when it should be "1", when it should be "0")
    "archived": ("archive", "unarchive"),
    "spam": ("spam", "unspam"),
    "deleted": ("deactivate", "activate"),
    "public": ("public", "private"),
}


def _site_parse(key: list[str], results: list[CommandResult]) -> Any:
    rows = _json(results[0], f"サイト ID {key[0]}")
    row = next((r for r in rows or [] if str(r.get("blog_id")) == key[0]), None)
    return None if row is None else {flag: str(row.get(flag)) for flag in (*SITE_FLAGS, "url")}


def _site_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    blog_id, label = key[0], f"サイト ID {key[0]}"
    delete = ["site", "delete", blog_id, "--yes"]
    if (ends := _created_or_gone(before, current, delete, label)) is not None:
        return ends
    steps = []
    for flag, (on, off) in SITE_FLAGS.items():
        if before[flag] != current[flag]:
            verb = on if before[flag] == "1" else off
            steps.append(_step(["site", verb, blog_id], f"{label}の{flag}を元に戻す"))
    return steps


SITE = Kind(
    "site",
    lambda key: [
        [
            "site",
            "list",
            f"--site__in={key[0]}",
            "--fields=blog_id,url,archived,spam,deleted,public",
            "--format=json",
        ]
    ],
    _site_parse,
    _site_restore,
    lambda key: f"サイト ID {key[0]}",
)


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (POST, COMMENT, TERM, TERMS, OPTION, USER, META, MENU, MENU_ITEMS, PLUGINS, THEME, SITE)
}


def scoped(argv: list[str], ref: EntityRef) -> list[str]:
    """The argv on the entity's site (`--url`) when it has one."""
    return [*argv, f"--url={ref.url}"] if ref.url else argv
