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
) -> int:
    """Make `target` hold exactly what `source` holds (files compared by size and mtime; symlinks kept).

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
        wanted = {e.name: e for e in os.scandir(src_dir) if include(_join(relative_dir, e.name))}
        present = {e.name: e for e in os.scandir(dst_dir)}
        for name, entry in present.items():
            relative = _join(relative_dir, name)
            if name not in wanted and not keep(relative):
                _remove(Path(entry.path))
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


def _join(directory: str, name: str) -> str:
    return f"{directory}/{name}" if directory else name


def _differs(source: os.DirEntry[str], target: os.DirEntry[str]) -> bool:
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
