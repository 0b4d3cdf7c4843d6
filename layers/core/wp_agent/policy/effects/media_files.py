"""Before `media regenerate`: the attachment's stored file names must stay inside its upload folder.

WP-CLI's regenerate deletes every size named in `_wp_attachment_metadata` (and WordPress builds the
original's path from `_wp_attached_file`) without checking where the name leads: a size named
`../../../../wp-config.php` deleted wp-config.php on the real site. The agent never writes those keys
(meta_keys.py), but a plugin or an import may have; so before regenerating, the attachment's stored
names are read from the site and the command is refused unless each size is a plain file name and
the file itself a relative path below the uploads folder.
"""

from __future__ import annotations

import json
import re

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.effects.values import SiteCheck
from wp_agent.whole_values import whole

_STORAGE_KEYS = "_wp_attached_file,_wp_attachment_metadata"
_BASENAME = whole(r"[^/\\:\x00-\x1f\x7f\x85\u2028\u2029]+", "hero.jpg", "写真-1.png")


def _relative_below(name: object) -> bool:
    """A path below the uploads folder: relative, no `..` step, no stream wrapper (`phar://`)."""
    if not isinstance(name, str) or not name or name.startswith(("/", "\\")) or ":" in name:
        return False
    return ".." not in re.split(r"[/\\]", name) and "\x00" not in name


def _basename(name: object) -> bool:
    return isinstance(name, str) and _BASENAME.fits(name) and name not in {".", ".."}


def _metadata_confined(metadata: object) -> bool:
    if metadata in ("", None, False):
        return True
    if not isinstance(metadata, dict):
        return False
    if "file" in metadata and not _relative_below(metadata["file"]):
        return False
    if "original_image" in metadata and not _basename(metadata["original_image"]):
        return False
    sizes = metadata.get("sizes", {})
    if sizes in ("", None, []):
        return True
    if not isinstance(sizes, dict):
        return False
    return all(isinstance(size, dict) and _basename(size.get("file")) for size in sizes.values())


def stored_names_confined(stdout: str | None) -> bool:
    """The answer of `post meta list <id> --keys=… --unserialize --format=json` names only files of the
    attachment's own folder (an attachment without them has nothing to regenerate or delete)."""
    if stdout is None:
        return False
    try:
        rows = json.loads(stdout or "[]")
    except ValueError:
        return False
    if not isinstance(rows, list):
        return False
    for row in rows:
        if not isinstance(row, dict):
            return False
        key, value = row.get("meta_key"), row.get("meta_value")
        if key == "_wp_attached_file" and not _relative_below(value):
            return False
        if key == "_wp_attachment_metadata" and not _metadata_confined(value):
            return False
    return True


def regenerate_site_checks(cmd: ParsedCommand, path: tuple[str, ...]) -> list[SiteCheck]:
    return [
        SiteCheck(
            argv=(
                "post",
                "meta",
                "list",
                attachment,
                f"--keys={_STORAGE_KEYS}",
                "--unserialize",
                "--format=json",
            ),
            confirms=stored_names_confined,
            reason_ja=(
                f"メディア（ID: {attachment}）の保存されたファイル名に、アップロード先の外を指す名前があるか、確認できませんでした。"
                "サムネイルの再生成はその名前のファイルを削除するため実行しません"
            ),
            refuse=True,
        )
        for attachment in cmd.args_after(path)
    ]
