"""The CLI's own state under ~/.wp-agent/ (held runs, published articles): written atomically and
readable by this user only — a crash leaves the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_private(path: Path, text: str) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
