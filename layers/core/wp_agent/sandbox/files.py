"""Keeping a sandbox's WordPress files equal to their pristine source (Debian's files, seeded uploads)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

DEBIAN_WORDPRESS = Path("/usr/share/wordpress")
# Debian ships every language; the sandbox keeps Japanese (the sample site's language) and English.
_OTHER_LANGUAGE = re.compile(r"\.(mo|po|json|l10n\.php)$")
_JAPANESE = re.compile(r"(^|-)ja(-[0-9a-f]{32})?\.(mo|po|json|l10n\.php)$")
# Ours or Debian's configuration, never copied from the source: wp-config.php is written per sandbox.
_NOT_FROM_DEBIAN = {"wp-config.php", ".htaccess", "wp-content/uploads"}


def wordpress_file_filter(relative: str) -> bool:
    """Which paths of Debian's tree a sandbox holds."""
    if relative in _NOT_FROM_DEBIAN:
        return False
    if relative.startswith("wp-content/languages/") and _OTHER_LANGUAGE.search(relative):
        return bool(_JAPANESE.search(relative.rsplit("/", 1)[-1]))
    return True


def sync_tree(
    source: Path,
    target: Path,
    *,
    include: Callable[[str], bool] = lambda _relative: True,
    keep: Callable[[str], bool] = lambda _relative: False,
    owner: tuple[int, int] | None = None,
    links_root: Path | None = None,
) -> int:
    """Make `target` hold exactly what `source` holds (files compared by size and mtime; symlinks kept).

    With `links_root`, a symlink that leads out of `source` (Debian's links into PHPMailer, getID3, the
    JavaScript libraries, the CA bundle) is copied as the file it points to, an absolute link resolved
    under `links_root`: the copy then works wherever it lives, and a release unpacked into a prefix
    uses its own libraries, not the system's.

    `include` filters the source, `keep` spares target paths that are not ours to remove (such as the
    per-sandbox wp-config.php). Returns how many entries were written or removed. `owner` (uid, gid)
    is applied to what we write, for a sandbox owned by another user than the one running us (root).
    """
    changes = 0
    if not target.is_dir():
        target.mkdir(parents=True)
        _chown(target, owner)
    pending = [""]
    while pending:
        relative_dir = pending.pop()
        src_dir, dst_dir = source / relative_dir, target / relative_dir
        wanted: dict[str, os.DirEntry[str] | _Resolved] = {
            e.name: _resolve_outside(e, source, links_root) if links_root is not None else e
            for e in os.scandir(src_dir)
            if include(_join(relative_dir, e.name))
        }
        present = {e.name: e for e in os.scandir(dst_dir)}
        for name, there in present.items():
            relative = _join(relative_dir, name)
            if name not in wanted and not keep(relative):
                _remove(Path(there.path))
                changes += 1
        for name, entry in wanted.items():
            relative = _join(relative_dir, name)
            destination = dst_dir / name
            existing = present.get(name)
            if entry.is_symlink():
                if (
                    existing is None
                    or not existing.is_symlink()
                    or os.readlink(existing.path) != os.readlink(entry.path)
                ):
                    _remove(destination)
                    os.symlink(os.readlink(entry.path), destination)
                    _chown(destination, owner)
                    changes += 1
            elif entry.is_dir():
                if existing is not None and (existing.is_symlink() or not existing.is_dir()):
                    _remove(destination)
                    existing = None
                if existing is None:
                    destination.mkdir()
                    shutil.copystat(entry.path, destination)
                    _chown(destination, owner)
                    changes += 1
                pending.append(relative)
            elif existing is None or _differs(entry, existing):
                _remove(destination)
                shutil.copy2(entry.path, destination)
                _chown(destination, owner)
                changes += 1
    return changes


class _Resolved:
    """A link leading out of the source tree, standing for the file it points to."""

    def __init__(self, path: str) -> None:
        self.path = path

    def is_symlink(self) -> bool:
        return False

    def is_dir(self) -> bool:
        return False

    def stat(self) -> os.stat_result:
        return os.stat(self.path)


def _resolve_outside(entry: os.DirEntry[str], source: Path, root: Path) -> os.DirEntry[str] | _Resolved:
    if not entry.is_symlink():
        return entry
    link = os.readlink(entry.path)
    target = root / link.lstrip("/") if os.path.isabs(link) else Path(entry.path).parent / link
    resolved = Path(os.path.realpath(target))
    if resolved.is_relative_to(source.resolve()) or not resolved.is_file():
        return entry  # inside the tree (or broken): kept as a link
    return _Resolved(str(resolved))


def _join(directory: str, name: str) -> str:
    return f"{directory}/{name}" if directory else name


def _differs(source: os.DirEntry[str] | _Resolved, target: os.DirEntry[str]) -> bool:
    if target.is_symlink() or not target.is_file():
        return True
    a, b = source.stat(), target.stat()
    return a.st_size != b.st_size or a.st_mtime_ns != b.st_mtime_ns


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _chown(path: Path, owner: tuple[int, int] | None) -> None:
    if owner is not None:
        os.lchown(path, *owner)
