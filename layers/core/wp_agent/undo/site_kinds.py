"""Options, users and their meta, menus, plugins (which are active, and each one's code), the theme and
multisite sites, as kinds of changed things."""

from __future__ import annotations

import re
from typing import Any

from wp_agent.executors.port import CommandResult
from wp_agent.models.undo import PlanStep
from wp_agent.undo import sections
from wp_agent.undo.kind import (
    CaptureError,
    Kind,
    Parts,
    absent,
    autoload_args,
    autoload_effect,
    created_or_gone,
    json_of,
    meta_rows,
    meta_steps,
    name_arg,
    step,
    value_args,
)

# -- options: key = (name,) -------------------------------------------------------------------------


def _option_parse(key: list[str], parts: Parts, results: list[CommandResult]) -> Any:
    rows = json_of(results[0], f"設定「{key[0]}」")
    row = next((r for r in rows or [] if r.get("option_name") == key[0]), None)
    if row is None:
        return None
    return {"value": row.get("option_value"), "autoload": autoload_effect(str(row.get("autoload", "yes")))}


def _option_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    name, label = key[0], f"設定「{key[0]}」"
    if before is None and current is None:
        return []
    if before is None:
        return [step(["option", "delete", name], f"追加された{label}を削除")]
    if current is None:
        return [
            step(["option", "add", name, *value_args(before["value"]), *autoload_args(before["autoload"])],
                  f"削除された{label}を元の値で追加")
        ]  # fmt: skip
    argv = ["option", "update", name, *value_args(before["value"])]
    if before["autoload"] != current["autoload"]:
        argv += autoload_args(before["autoload"])
    return [step(argv, f"{label}を元の値に戻す")]


OPTION = Kind(
    "option",
    # One read: the value (unserialized, as JSON) and autoload; --search matches patterns, so the
    # exact name is picked from the rows.
    lambda key, parts: [
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


def _user_reads(key: list[str], parts: Parts) -> list[list[str]]:
    get = ["user", "get", key[0], "--format=json", f"--fields=ID,roles,{','.join(USER_FIELDS)}"]
    return sections.fields_and_meta_reads(parts, get, ["user", "meta", "list", key[0], f"--keys={USER_META}"])


def _user_parse(key: list[str], parts: Parts, results: list[CommandResult]) -> Any:
    """Sections: "fields" with "roles" (one read), "meta" (the profile keys)."""
    if absent(USER, results):
        return None
    image, fields, _ = sections.fields_and_meta(parts, results, f"ユーザー ID {key[0]}", USER_FIELDS)
    if "fields" in image:
        image["roles"] = [r.strip() for r in str(fields.get("roles", "")).split(",") if r.strip()]
    return image


def _user_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    user_id, label = key[0], f"ユーザー ID {key[0]}"
    # --network: on a network `user delete` alone only removes the user from the current site.
    delete = ["user", "delete", user_id, "--yes", "--network"]
    if (ends := created_or_gone(before, current, delete, label)) is not None:
        return ends
    steps = []
    changed = {
        k: v
        for k, v in before.get("fields", {}).items()
        if k != "user_login" and current["fields"].get(k) != v
    }
    if changed:
        steps.append(
            step(["user", "update", user_id, *(f"--{k}={v}" for k, v in changed.items()), "--skip-email"],
                  f"{label}の{'・'.join(changed)}を元に戻す")
        )  # fmt: skip
    if "roles" in before and before["roles"] != current["roles"]:
        # remove-role / add-role, not set-role: on a network set-role also makes the site the user's
        # primary one (primary_blog, source_domain meta) when none is set.
        steps.extend(
            step(["user", "remove-role", user_id, role], f"{label}の権限グループ「{role}」を外す")
            for role in current["roles"]
            if role not in before["roles"]
        )
        steps.extend(
            step(["user", "add-role", user_id, role], f"{label}の権限グループ「{role}」を戻す")
            for role in before["roles"]
            if role not in current["roles"]
        )
    return steps + meta_steps(
        "user", user_id, before.get(sections.META, {}), current.get(sections.META, {}), label
    )


USER = Kind(
    "user",
    _user_reads,
    _user_parse,
    _user_restore,
    lambda key: f"ユーザー ID {key[0]}",
    missing=re.compile(r"Invalid user ID, email or login"),
    sectioned=True,
)


# -- one meta key of a user, term or comment: key = (object, id, meta key) -------------------------


def _meta_parse(key: list[str], parts: Parts, results: list[CommandResult]) -> Any:
    meta = meta_rows(json_of(results[0], f"{key[0]} ID {key[1]} のメタ「{key[2]}」"), "メタ")
    return meta.get(key[2], [])


META = Kind(
    "meta",
    lambda key, parts: [
        [key[0], "meta", "list", key[1], f"--keys={key[2]}", "--format=json", "--unserialize"]
    ],
    _meta_parse,
    lambda key, before, current: meta_steps(
        key[0], key[1], {key[2]: before or []}, {key[2]: current or []}, f"{key[0]} ID {key[1]}"
    ),
    lambda key: f"{key[0]} ID {key[1]} のメタ「{key[2]}」",
)


# -- menus: key = (menu term ID,); menu items: key = (menu,) ---------------------------------------

MENU_ITEM_FIELDS = "db_id,type,object,object_id,title,link,position,menu_item_parent,target,attr_title,description,classes,xfn"


def _menu_parse(key: list[str], parts: Parts, results: list[CommandResult]) -> Any:
    rows = json_of(results[0], "メニュー")
    row = next((r for r in rows or [] if str(r.get("term_id")) == key[0]), None)
    return None if row is None else {"name": row.get("name"), "slug": row.get("slug")}


def _menu_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    if before is None and current is not None:
        return [step(["menu", "delete", key[0]], f"作成されたメニュー ID {key[0]} を削除")]
    if before is not None and current is None:
        raise CaptureError(f"削除されたメニュー ID {key[0]} は元に戻せません")
    return []


MENU = Kind(
    "menu",
    lambda key, parts: [["menu", "list", "--format=json", "--fields=term_id,name,slug"]],
    _menu_parse,
    _menu_restore,
    lambda key: f"メニュー ID {key[0]}",
)


def _menu_items_parse(key: list[str], parts: Parts, results: list[CommandResult]) -> Any:
    if absent(MENU_ITEMS, results):
        return None
    return {str(row["db_id"]): row for row in json_of(results[0], f"メニュー「{key[0]}」の項目") or []}


def _menu_items_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    label = f"メニュー「{key[0]}」"
    before, current = before or {}, current or {}
    removed = [item for item in before if item not in current]
    if removed:
        raise CaptureError(f"{label}から削除された項目（ID {', '.join(removed)}）は元に戻せません")
    steps = []
    added = [item for item in current if item not in before]
    if added:
        steps.append(step(["menu", "item", "delete", *added], f"{label}に追加された項目を削除"))
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
        steps.append(step(argv, f"{label}の項目 ID {item_id} を元に戻す"))
    return steps


MENU_ITEMS = Kind(
    "menu_items",
    lambda key, parts: [["menu", "item", "list", key[0], "--format=json", f"--fields={MENU_ITEM_FIELDS}"]],
    _menu_items_parse,
    _menu_items_restore,
    lambda key: f"メニュー「{key[0]}」の項目",
    missing=re.compile(r"Invalid menu"),
)


# -- plugins and the active theme: key = () ----------------------------------------------------------


def _plugins_parse(key: list[str], parts: Parts, results: list[CommandResult]) -> Any:
    rows = json_of(results[0], "プラグインの一覧")
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
            steps.append(step(["plugin", "activate", name], f"プラグイン「{name}」を再び有効化"))
        elif was["status"] == "inactive" and now["status"] == "active":
            steps.append(step(["plugin", "deactivate", name], f"プラグイン「{name}」を無効に戻す"))
        else:
            raise CaptureError(f"プラグイン「{name}」の状態（{now['status']}）は元に戻せません")
    if set(current) - set(before):
        raise CaptureError("インストールされたプラグインの削除は、元に戻す操作では行いません")
    return steps


PLUGINS = Kind(
    "plugins",
    lambda key, parts: [
        ["plugin", "list", "--fields=name,status,version", "--format=json", "--skip-update-check"]
    ],
    _plugins_parse,
    _plugins_restore,
    lambda key: "プラグインの有効・無効",
)


def _theme_parse(key: list[str], parts: Parts, results: list[CommandResult]) -> Any:
    if not results[0].ok:
        raise CaptureError("有効なテーマを読み取れませんでした")
    return results[0].stdout.strip()


THEME = Kind(
    "theme",
    lambda key, parts: [["theme", "list", "--status=active", "--field=name", "--skip-update-check"]],
    _theme_parse,
    lambda key, before, current: (
        [step(["theme", "activate", before], f"テーマを「{before}」に戻す")] if before != current else []
    ),
    lambda key: "有効なテーマ",
)


# -- one plugin's or theme's code: key = (plugin|theme, name) -----------------------------------------
#
# Its version and whether it is active, None when it is not installed. A change of its files (install,
# update, delete) is put back with the same WP-CLI commands a person would use, from WordPress.org's
# copy of the recorded version; every one of them is a change of code, so it runs guarded like the
# change it reverts (probed, taken back by itself when the site got worse).

_EXTENSION_NAMES = {"plugin": "プラグイン", "theme": "テーマ"}


def _extension_parse(key: list[str], parts: Parts, results: list[CommandResult]) -> Any:
    rows = json_of(results[0], _extension_label(key)) or []
    row = next((r for r in rows if isinstance(r, dict) and r.get("name") == key[1]), None)
    if row is None:  # not installed
        return None
    return {"version": str(row.get("version") or ""), "status": str(row.get("status") or "")}


def _extension_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    kind, name = key
    label = _extension_label(key)
    if before is None and current is None:
        return []
    name = name_arg(name, label)  # a folder named like an option would be read as one
    if before is None:  # installed by the run: removed again (a plugin deactivated first)
        if current["status"] not in {"inactive", "active"}:
            raise CaptureError(f"{label}（{current['status']}）は削除できないため、元に戻せません")
        off = [step([kind, "deactivate", name], f"{label}を無効化")] if current["status"] == "active" else []
        if kind == "theme" and off:
            raise CaptureError(f"有効な{label}は削除できないため、元に戻せません")
        return [*off, step([kind, "delete", name], f"インストールされた{label}を削除")]
    if not before["version"]:
        raise CaptureError(f"{label}のバージョンが記録されていないため、元のファイルを入れ直せません")
    steps = []
    if current is None:
        steps.append(step([kind, "install", name, f"--version={before['version']}"],
                          f"削除された{label}（{before['version']}）を入れ直す"))  # fmt: skip
        current = {"version": before["version"], "status": "inactive"}
    elif current["version"] != before["version"]:
        steps.append(step([kind, "update", name, f"--version={before['version']}"],
                          f"{label}を元のバージョン {before['version']} に戻す"))  # fmt: skip
    if kind == "plugin" and before["status"] != current["status"]:  # (the active theme is THEME's)
        if before["status"] == "active":
            steps.append(step(["plugin", "activate", name], f"{label}を再び有効化"))
        elif before["status"] == "inactive" and current["status"] == "active":
            steps.append(step(["plugin", "deactivate", name], f"{label}を無効に戻す"))
        else:
            raise CaptureError(f"{label}の状態（{before['status']}）は元に戻せません")
    return steps


def _extension_listing(key: list[str]) -> list[str]:
    fields = ["--fields=name,version,status", "--format=json"]
    return [key[0], "list", "--skip-update-check", f"--name={key[1]}", *fields]


def _extension_label(key: list[str]) -> str:
    return f"{_EXTENSION_NAMES[key[0]]}「{key[1]}」"


EXTENSION = Kind(
    "extension",
    # (a listing without the update check: `get` runs it, and stores what it found — not a read)
    lambda key, parts: [_extension_listing(key)],
    _extension_parse,
    _extension_restore,
    _extension_label,
)


# -- multisite sites: key = (blog id,) ---------------------------------------------------------------

SITE_FLAGS = {  # flag: (command when it should be "1", when it should be "0")
    "archived": ("archive", "unarchive"),
    "spam": ("spam", "unspam"),
    "deleted": ("deactivate", "activate"),
    "public": ("public", "private"),
}


def _site_parse(key: list[str], parts: Parts, results: list[CommandResult]) -> Any:
    rows = json_of(results[0], f"サイト ID {key[0]}")
    row = next((r for r in rows or [] if str(r.get("blog_id")) == key[0]), None)
    return None if row is None else {flag: str(row.get(flag)) for flag in (*SITE_FLAGS, "url")}


def _site_restore(key: list[str], before: Any, current: Any) -> list[PlanStep]:
    blog_id, label = key[0], f"サイト ID {key[0]}"
    delete = ["site", "delete", blog_id, "--yes"]
    if (ends := created_or_gone(before, current, delete, label)) is not None:
        return ends
    steps = []
    for flag, (on, off) in SITE_FLAGS.items():
        if before[flag] != current[flag]:
            verb = on if before[flag] == "1" else off
            steps.append(step(["site", verb, blog_id], f"{label}の{flag}を元に戻す"))
    return steps


SITE = Kind(
    "site",
    lambda key, parts: [
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
