"""Which meta keys (post, term, user) a write may change without approval, named by what is allowed.

- Public keys (no leading underscore) are the site's own custom fields: writable.
- Protected keys (a leading underscore, as WordPress's `is_protected_meta()` sees them) belong to
  WordPress or a plugin, which act on them: only the keys listed here, each with its value check;
  every other protected key waits for approval.
- Keys that hold file paths or attachment data are refused in every form: WordPress and WP-CLI
  build file names from them and delete what they name (`media regenerate` unlinked
  `../../../../wp-config.php` taken from a rewritten `_wp_attachment_metadata`).
- Secret-looking keys (`api_key`, `…_token`) wait for approval: some plugin reads them as credentials.

Keys are compared the way MariaDB matches them (case-folded, trimmed): `_WP_ATTACHED_FILE` reaches
the row `_wp_attached_file`.
"""

from __future__ import annotations

import json
import re

from wp_agent.masking.secret_names import folded, is_secret_key
from wp_agent.policy.active_content import active_parts
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.effects.values import (
    ACTIVE_CONTENT_RULE,
    IMAGE_ID,
    LANGUAGE,
    ValueCheck,
    one_of,
    plain_text,
)
from wp_agent.policy.identifiers import is_plain
from wp_agent.policy.rule import Verdict

B = PolicyCategory.BLOCKED
D = PolicyCategory.DESTRUCTIVE

_OBJECT_JA = {"post": "投稿", "term": "カテゴリ・タグ", "user": "ユーザー"}
# Protected keys a write may set without approval, per object family, with what their value must be.
LISTED_PROTECTED: dict[str, dict[str, ValueCheck]] = {
    "post": {
        "_thumbnail_id": IMAGE_ID,  # the featured image: an image attachment of this site
        "_wp_attachment_image_alt": plain_text(500),  # an image's alternative text
        # Stored raw, WordPress includes any PHP file of the theme by this name when it shows the
        # post (tried on 6.1: functions.php took the page down); `post update --page_template=…`
        # is checked against the theme's templates by WordPress itself.
        "_wp_page_template": one_of(
            "default", describe_ja="default（テンプレートの指定は post update --page_template で行います）"
        ),
        # publishArticle's own marker (publishing/publisher.py), nothing WordPress reads: the article
        # job's id (art_ and 20 hex digits) or, without a job, a random token (32 hex digits).
        "_wp_agent_publish_id": ValueCheck(
            "記事公開の識別子（art_ に続く16進数20桁、または32桁の16進数）",
            lambda v: v is not None and re.fullmatch(r"art_[0-9a-f]{20}|[0-9a-f]{32}", v) is not None,
            samples=("art_0123456789abcdef0123", "0123456789abcdef0123456789abcdef"),
        ),
    },
    "term": {},
    "user": {},
}
# Public user meta WordPress itself acts on, with what its value must be (the same checks as the
# profile fields of `user update`): a `locale` becomes the path of the translation file WordPress
# loads for that user, `primary_blog` and `source_domain` decide where the user lands on a network.
CORE_USER_META: dict[str, ValueCheck] = {
    "locale": ValueCheck("言語コード", lambda v: v == "" or LANGUAGE.accepts(v), samples=("ja", "en_US")),
    "rich_editing": one_of("true", "false"),
    "syntax_highlighting": one_of("true", "false"),
    "comment_shortcuts": one_of("true", "false"),
    "show_admin_bar_front": one_of("true", "false"),
    "use_ssl": one_of("0", "1"),
    "admin_color": plain_text(50),
    "primary_blog": ValueCheck("このユーザーに実在するサイトのIDであること（承認で確認）", lambda v: False),
    "source_domain": ValueCheck("ネットワークのドメイン（承認で確認）", lambda v: False),
}
# Where WordPress keeps an attachment's files (and every name built from them).
_ATTACHMENT_STORAGE = ("_wp_attached_file", "_wp_attachment_")
_NOT_STORAGE = frozenset({"_wp_attachment_image_alt"})
# Words of a key that say it holds a file, a path or a directory (`_downloadable_files`, `pdf_path`).
_FILE_WORDS = frozenset(
    {"file", "files", "filename", "filenames", "filepath", "path", "paths", "dir", "dirs", "directory",
     "folder", "upload", "uploads", "attached"}
)  # fmt: skip


def _words(key: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key)
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def holds_file_path(key: str) -> bool:
    """Attachment storage (`_wp_attached_file`, `_wp_attachment_metadata`, `_wp_attachment_backup_sizes`,
    …) and any key whose name says it holds a file, path or directory."""
    name = folded(key)
    if name in _NOT_STORAGE:
        return False
    if name.startswith(_ATTACHMENT_STORAGE):
        return True
    return any(word in _FILE_WORDS for word in _words(key))


def is_protected(key: str) -> bool:
    return folded(key).startswith("_")


def meta_key_verdict(family: str, key: str, value: str | None, *, structured: bool) -> Verdict | None:
    """None when `family` meta `key` may be set to `value` without approval; else the verdict.
    `structured`: the value is JSON (`--format=json`) or a nested path (`meta patch`)."""
    what = f"{_OBJECT_JA.get(family, '')}メタ「{key}」"
    if not is_plain(key):  # keys inside JSON (--meta_input) never met the identifier rule
        return Verdict(
            B,
            "blocked.non_ascii_identifier",
            f"メタキーは半角英数字と記号だけで（先頭の「-」なしで）指定してください: 「{ascii(key)[1:-1]}」",
            key,
        )
    if holds_file_path(key):
        return Verdict(
            B,
            "blocked.meta.file_path",
            f"{what}はファイルの場所や添付ファイルの情報を保持するキーのため変更できません"
            "（WordPressがこの値からファイル名を組み立て、削除することがあります）",
            key,
        )
    if is_protected(key):
        check = LISTED_PROTECTED.get(family, {}).get(folded(key))
        if check is None:
            return Verdict(
                D,
                "confirm.meta.protected_key",
                f"{what}は先頭が「_」の保護されたキーで、WordPressやプラグインが内部で使います。"
                "書き込みの影響が確認済みのキーではないため承認が必要です",
                key,
            )
        if structured or not check.accepts(value):
            return Verdict(
                D,
                "confirm.meta.protected_value",
                f"{what}の値は{check.describe_ja}だけを承認なしで設定できます。それ以外の値は承認が必要です",
                key,
            )
        return None
    core = CORE_USER_META.get(folded(key)) if family == "user" else None
    if core is not None and (structured or not core.accepts(value)):
        return Verdict(
            D,
            "confirm.meta.core_value",
            f"{what}はWordPressが使う項目です。値は{core.describe_ja}だけを承認なしで設定できます",
            key,
        )
    if is_secret_key(key):
        return Verdict(
            D,
            "confirm.meta.secret_key",
            f"{what}は認証情報のような名前のキーです。プラグインが認証に使う恐れがあるため承認が必要です",
            key,
        )
    parts = [part for text in stored_texts(value, structured=structured) for part in active_parts(text)]
    if parts:
        # Meta is stored past the filters WordPress's own screens run (a profile's description goes
        # through kses; `user meta update 1 description '<script>…'` did not), and themes print it.
        return Verdict(
            D,
            ACTIVE_CONTENT_RULE,
            f"{what}の値に{'、'.join(parts[:3])}が含まれます。メタはWordPressのフィルタを通らずに保存され、"
            "テーマがそのまま表示すると、表示した人のブラウザでスクリプトとして動くことがあるため承認が必要です",
            key,
        )
    return None


def stored_texts(value: str | None, *, structured: bool) -> list[str]:
    """Every text WordPress stores for `value`: a structured value (`--format=json`) is decoded as WP-CLI
    decodes it, so `"\u003cscript\u003e"` is judged as the `<script>` it becomes, every key and string
    at any depth; anything else as written."""
    if value is None:
        return []
    if not structured:
        return [value]
    try:
        decoded = json.loads(value)
    except ValueError:
        return [value]
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, dict):
            for key, item in node.items():
                found.append(str(key))
                walk(item)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(decoded)
    return found


def listed_site_check(family: str, key: str) -> ValueCheck | None:
    """The value check of a listed protected key (for its site check), or None."""
    return LISTED_PROTECTED.get(family, {}).get(folded(key))
