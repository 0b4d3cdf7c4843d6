"""Before-images: which things a write or destructive command changes (a table per command family),
read with read-only WP-CLI commands before it runs and again after it ran.

`assess(path, argv)` needs no reads: it says up front whether a command can be undone at all (for
the approval summary). `capture_before` and `record_after` do the reads; their results are masked
like every other command output, and a before-image that held a secret is not kept for undo.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from wp_agent.agent import approval_steps
from wp_agent.command_line.code_changes import LANGUAGE_CHANGES
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.masking import is_secret_name
from wp_agent.models.undo import EntityRef, UndoCapture, UndoItem
from wp_agent.policy.approval_summary import IRREVERSIBLE, POST_RECREATED_ONLY
from wp_agent.policy.command_grammar import CommandReading, read_command
from wp_agent.policy.effects.site_address import address_name
from wp_agent.undo.entities import CaptureError, Read
from wp_agent.undo.images import images

NOT_RECORDED = "この操作の変更内容は記録できないため、" + IRREVERSIBLE


@dataclass(frozen=True)
class Command:
    """A command about to run, as the target functions see it."""

    path: tuple[str, ...]
    parsed: ParsedCommand
    args: list[str]  # positionals after the command path
    url: str | None
    read: Read | None  # None in assess(): targets that need a read are resolved later
    # The command as WP-CLI reads it (policy/command_grammar.py), the reading the policy and the
    # approval text used: every object of `option delete a b`, a site named by `--slug`.
    reading: CommandReading | None = None

    def words(self, name: str) -> list[str]:
        """The words of one synopsis argument (all of a repeating one)."""
        return list(self.reading.words(name)) if self.reading is not None else []

    def ref(self, kind: str, *key: str, always: bool = False, parts: list[str] | None = None) -> EntityRef:
        return EntityRef(kind=kind, key=list(key), url=self.url, always=always, parts=parts)

    def flags(self) -> set[str]:
        """The command's own options (not WP-CLI's global ones)."""
        return {o.name for o in self.parsed.options} - _GLOBAL_FLAGS

    def ids(self, start: int = 0) -> list[str]:
        return self.args[start:]


Targets = Callable[[Command], list[EntityRef]]


@dataclass(frozen=True)
class Spec:
    targets: Targets
    # the kind of thing the command creates; its ID is read from the command's output
    creates: str | None = None
    created_id: re.Pattern[str] | None = None
    # reason it cannot be undone, decided from the argv alone (None: it can)
    irreversible: Callable[[Command], str | None] = lambda cmd: None
    # `--all` names what it changes by a read of the site (plugins with an update…): recorded, not refused
    reads_all: bool = False


def _never(reason: str) -> Spec:
    return Spec(targets=lambda cmd: [], irreversible=lambda cmd: reason)


_GLOBAL_FLAGS = {"url", "user", "path", "quiet", "debug", "color", "no-color", "skip-plugins", "skip-themes",
                 "skip-packages", "context", "require", "exec", "http", "ssh"}  # fmt: skip

# `post update` flags that change only the post's own row: nothing but its fields is read. Anything
# else (status, slug, date, terms, meta, page template…) may also write meta or terms: all is read.
_POST_FIELDS_ONLY = {
    "post_title", "post_content", "post_excerpt", "post_content_filtered", "post_password", "menu_order",
    "comment_status", "ping_status", "post_author", "post_parent", "to_ping", "pinged",
}  # fmt: skip


def _posts(cmd: Command) -> list[EntityRef]:
    flags = cmd.flags()
    fields_only = cmd.path == ("post", "update") and bool(flags) and flags <= _POST_FIELDS_ONLY
    parts = ["fields"] if fields_only else None
    return [
        *_new_terms(cmd),
        *_post_count(cmd),
        *(cmd.ref("post", i, parts=parts) for i in cmd.ids() if i.isdigit()),
    ]


def _post_count(cmd: Command) -> list[EntityRef]:
    """On a network, publishing or deleting a post recounts the site's `post_count` option (and
    WordPress counts a published post that is being deleted): set back with the post."""
    status_change = cmd.path != ("post", "update") or cmd.parsed.has_flag("post_status")
    return [cmd.ref("option", "post_count", always=True)] if status_change else []


def _post_create(cmd: Command) -> list[EntityRef]:
    return [*_new_terms(cmd), *_post_count(cmd)]


def _first_post(cmd: Command) -> list[EntityRef]:
    return [cmd.ref("post", cmd.args[0])] if cmd.args else []


def _new_terms(cmd: Command) -> list[EntityRef]:
    """Taxonomies in which the command may create terms it names (ids never create one)."""
    taxonomies = []
    by_name = cmd.parsed.option_values("by") != ["id"]
    if cmd.path in {("post", "term", "add"), ("post", "term", "set")} and len(cmd.args) > 1 and by_name:
        taxonomies.append(cmd.args[1])
    if cmd.parsed.has_flag("tags_input"):
        taxonomies.append("post_tag")
    return [cmd.ref("terms", taxonomy) for taxonomy in taxonomies]


def _post_terms(cmd: Command) -> list[EntityRef]:
    return [*_new_terms(cmd), *([cmd.ref("post", cmd.args[0], parts=["terms"])] if cmd.args else [])]


def _meta_args(cmd: Command) -> list[str]:
    """<id> <key> …: `meta patch` names its action first (`post meta patch insert 12 key …`)."""
    return cmd.args[1:] if cmd.path[-1] == "patch" else cmd.args


def _post_meta(cmd: Command) -> list[EntityRef]:
    """The meta key the command writes (`--all`, or no key: all the post's meta)."""
    args = _meta_args(cmd)
    if not args:
        return []
    one_key = len(args) > 1 and not cmd.parsed.has_flag("all")
    return [cmd.ref("post", args[0], parts=[f"meta:{args[1]}"] if one_key else ["meta"])]


def _active_theme_mods(cmd: Command) -> list[EntityRef]:
    """Menu locations and theme mods live in the option theme_mods_<active stylesheet>."""
    if cmd.read is None:
        return []
    result = cmd.read(["option", "get", "stylesheet"])
    if not result.ok or not result.stdout.strip():
        raise CaptureError("有効なテーマを読み取れませんでした")
    return [cmd.ref("option", f"theme_mods_{result.stdout.strip()}")]


def _theme_switch(cmd: Command) -> list[EntityRef]:
    # switch_theme() writes these options; each is set back after the old theme is activated again.
    names = ["template", "stylesheet", "current_theme", "theme_switched", "sidebars_widgets"]
    refs = [cmd.ref("option", name, always=True) for name in names]
    if cmd.read is not None:
        refs += [cmd.ref("option", ref.key[0], always=True) for ref in _active_theme_mods(cmd)]
        refs += [cmd.ref("option", f"theme_mods_{cmd.args[0]}", always=True)] if cmd.args else []
    return [*refs, cmd.ref("theme")]


def _options(cmd: Command) -> list[EntityRef]:
    """Every option the command names (`option delete a b` deletes both)."""
    return [cmd.ref("option", key) for key in cmd.words("key")]


def _secret_option(cmd: Command) -> str | None:
    if any(is_secret_name(key) for key in cmd.words("key")):
        return "秘密情報を含む設定の値は記録しないため、" + IRREVERSIBLE
    return None


def _sites(cmd: Command) -> list[EntityRef]:
    """The sites by ID, or by `--slug` (the last part of their address, read from the network)."""
    refs = [cmd.ref("site", i) for i in cmd.words("id") if i.isdigit()]
    slugs = cmd.parsed.option_values("slug")
    if not slugs or cmd.read is None:
        return refs
    result = cmd.read(["site", "list", "--fields=blog_id,url", "--format=csv"])
    if not result.ok:
        raise CaptureError("サイトの一覧を読み取れませんでした")
    for line in result.stdout.splitlines()[1:]:
        blog_id, _, url = line.partition(",")
        if address_name(url) == slugs[0].lower():
            refs.append(cmd.ref("site", blog_id))
    if not refs:
        raise CaptureError(f"アドレス名「{slugs[0]}」のサイトが見つかりませんでした")
    return refs


def _object_meta(obj: str) -> Targets:
    def targets(cmd: Command) -> list[EntityRef]:
        args = _meta_args(cmd)
        return [cmd.ref("meta", obj, args[0], args[1])] if len(args) > 1 else []

    return targets


# `user update` flags kept in the users table: only the user's fields (and roles) are read.
_USER_FIELDS_ONLY = {"display_name", "user_url", "user_nicename", "user_email"}


def _users(cmd: Command) -> list[EntityRef]:
    if cmd.path != ("user", "update"):
        return [cmd.ref("user", u) for u in cmd.args[:1]]
    flags = cmd.flags()
    fields_only = bool(flags) and flags <= _USER_FIELDS_ONLY
    return [cmd.ref("user", u, parts=["fields"] if fields_only else None) for u in cmd.args]


def _user_update_irreversible(cmd: Command) -> str | None:
    if cmd.parsed.has_flag("user_pass"):
        return "パスワードの変更は元に戻せません（元のパスワードは記録しません）。"
    return None


def _plugins(cmd: Command) -> list[EntityRef]:
    # Deactivating (also when an undo re-deactivates) stamps `recently_activated`; set it back too.
    return [cmd.ref("option", "recently_activated", always=True), cmd.ref("plugins")]


def _network(cmd: Command) -> str | None:
    return (
        "ネットワーク全体の有効・無効の切り替えは元に戻せません。" if cmd.parsed.has_flag("network") else None
    )


def _forced(what: str) -> Callable[[Command], str | None]:
    # A post can be made again from its before-image (plan.py): said here as everywhere else.
    more = POST_RECREATED_ONLY if what == "投稿" else ""

    def reason(cmd: Command) -> str | None:
        return (
            f"ゴミ箱を経由せずに削除した{what}は元に戻せません。{more}"
            if cmd.parsed.has_flag("force")
            else None
        )

    return reason


def _menu_item_of(cmd: Command) -> list[EntityRef]:
    return [cmd.ref("menu_items", cmd.args[0])] if cmd.args else []


def _extensions(cmd: Command) -> list[EntityRef]:
    """Each plugin or theme whose code the command changes; `--all`: every one the site has (for
    `update`, those that get no update read the same before and after: nothing to put back), less
    `--exclude`. (Asking WordPress which have an update runs its update check, which stores what it found:
    not a read.)"""
    kind = cmd.path[0]
    names = cmd.args
    if cmd.parsed.has_flag("all"):
        if cmd.read is None:
            return []
        listed = cmd.read([kind, "list", "--skip-update-check", "--field=name"])
        if not listed.ok:
            raise CaptureError(
                f"{'プラグイン' if kind == 'plugin' else 'テーマ'}の一覧を読み取れませんでした"
            )
        excluded = {n for value in cmd.parsed.option_values("exclude") for n in value.split(",")}
        names = [name for name in listed.stdout.split() if name not in excluded]
    refs = [cmd.ref("extension", kind, name) for name in names]
    # deactivating a plugin again (the undo of an activation) stamps `recently_activated`: set back too
    return (
        [cmd.ref("option", "recently_activated", always=True), *refs] if kind == "plugin" and refs else refs
    )


def _network_install(cmd: Command) -> str | None:
    if cmd.parsed.has_flag("activate-network"):
        return "ネットワーク全体での有効化は元に戻せません。"
    return None


# Said where the guard already takes a change back by itself when the site got worse.
_GUARDED_ONLY = "（変更した直後の確認で問題が見つかれば、その場で自動的に元に戻します。）"


def _created(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.MULTILINE)


_POST_ID = _created(r"Created post (\d+)|^(\d+)$")

COMMANDS: dict[tuple[str, ...], Spec] = {
    ("post", "create"): Spec(_post_create, creates="post", created_id=_POST_ID),
    ("post", "update"): Spec(_posts),
    ("post", "delete"): Spec(_posts, irreversible=_forced("投稿")),
    ("post", "meta", "add"): Spec(_post_meta),
    ("post", "meta", "update"): Spec(_post_meta),
    ("post", "meta", "patch"): Spec(_post_meta),
    ("post", "meta", "delete"): Spec(_post_meta),
    ("post", "term", "add"): Spec(_post_terms),
    ("post", "term", "set"): Spec(_post_terms),
    ("post", "term", "remove"): Spec(_post_terms),
    ("term", "create"): Spec(
        lambda cmd: [], creates="term", created_id=_created(r"Created \S+ (\d+)|^(\d+)$")
    ),
    ("term", "update"): Spec(
        lambda cmd: [cmd.ref("term", cmd.args[0], cmd.args[1], parts=["fields"])] if len(cmd.args) > 1 else []
    ),
    ("term", "delete"): _never("削除したカテゴリ・タグは、記事との関連付けを含めて元に戻せません。"),
    ("term", "meta", "add"): Spec(_object_meta("term")),
    ("term", "meta", "update"): Spec(_object_meta("term")),
    ("term", "meta", "patch"): Spec(_object_meta("term")),
    ("term", "meta", "delete"): Spec(_object_meta("term")),
    ("comment", "create"): Spec(
        lambda cmd: [], creates="comment", created_id=_created(r"Created comment (\d+)|^(\d+)$")
    ),
    **{
        ("comment", verb): Spec(lambda cmd: [cmd.ref("comment", i) for i in cmd.args if i.isdigit()])
        for verb in ("update", "approve", "unapprove", "spam", "trash", "untrash")
    },
    # Marked spam again, a comment gets a record of its earlier status it did not have (comment meta,
    # which the policy does not let us remove).
    ("comment", "unspam"): _never("スパム解除は元の記録のとおりには戻せません。"),
    ("comment", "delete"): Spec(
        lambda cmd: [cmd.ref("comment", i) for i in cmd.args if i.isdigit()], irreversible=_forced("コメント")
    ),
    ("menu", "create"): Spec(
        lambda cmd: [], creates="menu", created_id=_created(r"Created menu (\d+)|^(\d+)$")
    ),
    ("menu", "delete"): _never("削除したメニューは、全ての項目を含めて元に戻せません。"),
    ("menu", "item", "add-post"): Spec(_menu_item_of),
    ("menu", "item", "add-term"): Spec(_menu_item_of),
    ("menu", "item", "add-custom"): Spec(_menu_item_of),
    ("menu", "item", "update"): Spec(_first_post),  # a menu item is a post of type nav_menu_item
    ("menu", "item", "delete"): _never("削除したメニュー項目は元に戻せません。"),
    ("menu", "location", "assign"): Spec(_active_theme_mods),
    ("menu", "location", "remove"): Spec(_active_theme_mods),
    ("option", "add"): Spec(_options, irreversible=_secret_option),
    ("option", "update"): Spec(_options, irreversible=_secret_option),
    ("option", "patch"): Spec(_options, irreversible=_secret_option),
    ("option", "delete"): Spec(_options, irreversible=_secret_option),
    ("user", "create"): Spec(
        lambda cmd: [], creates="user", created_id=_created(r"Created user (\d+)|^(\d+)$")
    ),
    ("user", "update"): Spec(_users, irreversible=_user_update_irreversible),
    ("user", "set-role"): Spec(_users),
    ("user", "add-role"): Spec(_users),
    ("user", "remove-role"): Spec(_users),
    ("user", "meta", "add"): Spec(_object_meta("user")),
    ("user", "meta", "update"): Spec(_object_meta("user")),
    ("user", "meta", "patch"): Spec(_object_meta("user")),
    ("user", "meta", "delete"): Spec(_object_meta("user")),
    ("plugin", "activate"): Spec(_plugins, irreversible=_network),
    ("plugin", "deactivate"): Spec(_plugins, irreversible=_network),
    ("plugin", "toggle"): Spec(_plugins, irreversible=_network),
    ("theme", "activate"): Spec(_theme_switch),
    # Files of a plugin or theme: put back from WordPress.org's copy of the recorded version (undo/site_kinds.py).
    **{(kind, "install"): Spec(_extensions, irreversible=_network_install) for kind in ("plugin", "theme")},
    **{
        (kind, verb): Spec(_extensions, reads_all=True)
        for kind in ("plugin", "theme")
        for verb in ("update", "delete")
    },
    ("plugin", "uninstall"): _never(
        "アンインストールはプラグインが保存していたデータも削除するため、元に戻せません。"
    ),
    ("core", "update"): _never(
        "WordPress本体の更新は、後から取り消す操作では元に戻せません。" + _GUARDED_ONLY
    ),
    **{
        path: _never(
            "翻訳ファイルの追加・更新・削除は、後から取り消す操作では元に戻せません。" + _GUARDED_ONLY
        )
        for path in LANGUAGE_CHANGES
        if path[-1] in {"install", "update", "uninstall"}
    },
    # the site's language is the WPLANG option; switched back by setting it again
    **{
        path: Spec(lambda cmd: [cmd.ref("option", "WPLANG", always=True)])
        for path in (("language", "core", "activate"), ("site", "switch-language"))
    },
    ("theme", "mod", "set"): Spec(_active_theme_mods),
    ("theme", "mod", "remove"): Spec(_active_theme_mods),
    ("site", "create"): Spec(lambda cmd: [], creates="site", created_id=_created(r"Site (\d+) created")),
    **{
        ("site", verb): Spec(_sites)
        for verb in ("archive", "unarchive", "activate", "deactivate", "spam", "unspam", "public", "private")
    },
    # Derived data WordPress rebuilds by itself: nothing a person would want back.
    **{
        path: Spec(lambda cmd: [])
        for path in (("term", "recount"), ("comment", "recount"), ("cache", "flush"), ("rewrite", "flush"))
    },
}


@dataclass(frozen=True)
class Assessment:
    revertible: bool
    reason_ja: str = ""


def _command(path: Sequence[str], argv: Sequence[str], read: Read | None) -> Command:
    parsed = ParsedCommand.from_argv(tuple(argv))
    urls = parsed.option_values("url")
    reading = read_command(parsed, tuple(path))
    return Command(
        tuple(path),
        parsed,
        list(parsed.args_after(tuple(path))),
        urls[0] if urls else None,
        read,
        reading if isinstance(reading, CommandReading) else None,
    )


def assess(path: Sequence[str], argv: Sequence[str]) -> Assessment:
    """Can this command be undone at all? From its argv alone, before anything is read or run."""
    spec = COMMANDS.get(tuple(path))
    if spec is None:
        return Assessment(False, NOT_RECORDED)
    cmd = _command(path, argv, None)
    reason = spec.irreversible(cmd)
    if (
        reason is None
        and cmd.parsed.has_flag("all")
        and spec.creates is None
        and not spec.reads_all
        and not spec.targets(cmd)
    ):
        reason = "全件を対象にした操作は、変更内容を記録できないため元に戻せません。"
    return Assessment(reason is None, reason or "")


def capture_before(path: Sequence[str], argv: Sequence[str], read: Read, *, workers: int = 1) -> UndoCapture:
    """Read what the command will change, before it runs (read-only commands only)."""
    return capture_before_all([(path, argv)], read, workers=workers)[0]


@dataclass(frozen=True)
class _Planned:
    """A command whose before-image is to be read: what it changes."""

    verdict: Assessment
    recreatable: bool
    refs: list[EntityRef]


def _plan_before(path: Sequence[str], argv: Sequence[str], read: Read) -> UndoCapture | _Planned:
    verdict = assess(path, argv)
    recreatable = tuple(path) == ("post", "delete")
    if not verdict.revertible and not recreatable:
        return UndoCapture(revertible=False, reason_ja=verdict.reason_ja)
    spec = COMMANDS[tuple(path)]
    try:
        refs = spec.targets(_command(path, argv, read))
    except CaptureError as exc:
        return UndoCapture(revertible=False, reason_ja=exc.reason_ja + "。" + IRREVERSIBLE)
    if spec.creates is None and not refs and tuple(path) not in _NOTHING_TO_UNDO:
        return UndoCapture(revertible=False, reason_ja="対象を特定できないため、" + IRREVERSIBLE)
    return _Planned(verdict, recreatable, refs)


def capture_before_all(
    commands: Sequence[tuple[Sequence[str], Sequence[str]]], read: Read, *, workers: int = 1
) -> list[UndoCapture]:
    """The before-images of the writes of one reply (path, argv each), read together: a read that
    serves several images runs once (shared_reads.py). A command whose image cannot be read is not
    revertible; the others keep theirs."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(commands)))) as pool:
        # Targets are read from the site only for menus and themes (the active stylesheet).
        planned = list(pool.map(lambda command: _plan_before(command[0], command[1], read), commands))
    wanted = [ref for plan in planned if isinstance(plan, _Planned) for ref in plan.refs]
    found = iter(images(wanted, read, workers=workers))
    elapsed_ms = int((time.perf_counter() - started) * 1000)
    captures = []
    for (path, argv), plan in zip(commands, planned, strict=True):
        if isinstance(plan, UndoCapture):
            captures.append(plan)
            continue
        before = [next(found) for _ in plan.refs]
        failed = next((image for image in before if isinstance(image, CaptureError)), None)
        if failed is not None:
            captures.append(UndoCapture(revertible=False, reason_ja=failed.reason_ja + "。" + IRREVERSIBLE))
            continue
        items = [UndoItem(entity=ref, before=image) for ref, image in zip(plan.refs, before, strict=True)]
        capture = UndoCapture(
            revertible=plan.verdict.revertible, reason_ja=plan.verdict.reason_ja, items=items
        )
        capture.recreatable = plan.recreatable and not plan.verdict.revertible
        _not_undoable_now(path, argv, capture)
        capture.capture_ms = elapsed_ms
        captures.append(capture)
    return captures


_NOTHING_TO_UNDO = {("term", "recount"), ("comment", "recount"), ("cache", "flush"), ("rewrite", "flush")}


def _not_undoable_now(path: Sequence[str], argv: Sequence[str], capture: UndoCapture) -> None:
    """What the site's state makes final: `post delete` / `comment delete` of what is already in the
    trash (or spam) deletes it for good."""
    final: dict[tuple[str, ...], tuple[str, set[str]]] = {
        ("post", "delete"): ("post_status", {"trash"}),
        ("comment", "delete"): ("comment_approved", {"trash", "spam"}),
    }
    rule = final.get(tuple(path))
    if rule is None:
        return
    field, statuses = rule
    kind = path[0]
    gone = [
        i.entity.key[0]
        for i in capture.items
        if i.entity.kind == kind and i.before and i.before.get("fields", {}).get(field) in statuses
    ]
    if gone:
        capture.revertible = False
        capture.recreatable = path[0] == "post"
        capture.reason_ja = f"ID {', '.join(gone)} はゴミ箱にあるため完全に削除され、元に戻せません。" + (
            POST_RECREATED_ONLY if capture.recreatable else ""
        )


def record_after(
    path: Sequence[str],
    argv: Sequence[str],
    capture: UndoCapture,
    stdout: str,
    read: Read,
    *,
    workers: int = 1,
) -> None:
    """After the command ran: what it created (from its output) and the after-image of everything."""
    record_after_all([(path, argv, capture, stdout)], read, workers=workers)


def record_after_all(
    ran: Sequence[tuple[Sequence[str], Sequence[str], UndoCapture, str]], read: Read, *, workers: int = 1
) -> None:
    """After the writes of one reply ran (path, argv, capture, stdout each): what each created and the
    after-images of everything, read together like the before-images."""
    started = time.perf_counter()
    recorded = [entry for entry in ran if entry[2].revertible or entry[2].recreatable]
    for path, argv, capture, stdout in recorded:
        spec = COMMANDS[tuple(path)]
        match = spec.created_id.search(stdout.strip()) if spec.creates and spec.created_id else None
        if spec.creates is not None and match is not None:
            new_id = next(g for g in match.groups() if g)
            cmd = _command(path, argv, read)
            key = [cmd.args[0], new_id] if spec.creates == "term" and cmd.args else [new_id]
            capture.items.append(UndoItem(entity=cmd.ref(spec.creates, *key), before=None))
    found = iter(
        images([item.entity for entry in recorded for item in entry[2].items], read, workers=workers)
    )
    elapsed_ms = int((time.perf_counter() - started) * 1000)
    for _path, _argv, capture, _stdout in recorded:
        after = [next(found) for _ in capture.items]
        failed = next((image for image in after if isinstance(image, CaptureError)), None)
        if failed is not None:
            capture.revertible = capture.recreatable = False
            capture.reason_ja = failed.reason_ja + "。実行後の状態を記録できなかったため、元に戻せません。"
            continue
        for item, image in zip(capture.items, after, strict=True):
            item.after = image
            item.after_recorded = True
        capture.capture_ms += elapsed_ms


def snapshots(refs: Sequence[EntityRef], read: Read, *, workers: int = 1) -> list[Any]:
    """The current state of each entity, all read together (images.py); the first CaptureError is raised."""
    found = images(refs, read, workers=workers)
    failed = next((image for image in found if isinstance(image, CaptureError)), None)
    if failed is not None:
        raise failed
    return found


def cannot_undo(path: Sequence[str], argv: Sequence[str]) -> str | None:
    """Why `wp-agent undo` could not revert this command (None when it could)."""
    verdict = assess(path, argv)
    return None if verdict.revertible else verdict.reason_ja


def with_undo_note(path: Sequence[str], argv: Sequence[str], impact_ja: str) -> str:
    """The approval impact, saying「元に戻せません」when the command cannot be undone (if not said already)."""
    return approval_steps.with_undo_note(impact_ja, cannot_undo(path, argv))
