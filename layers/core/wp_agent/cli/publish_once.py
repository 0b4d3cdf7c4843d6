"""`wp-agent publish` once per article: the same article published again answers the first post.

The key is `--key` when given, else a hash of the article as validated (with the site and the
WordPress user it is published as) and of where it goes (the target). A record under
~/.wp-agent/published/ is written before the sequence starts (`started`) and replaced by the answer
when it ends (`done`). A second call:
- `done` and the post still exists: the first answer, nothing runs again;
- `done` but the post is gone (deleted on the site): published anew;
- `started`: the first call is running or died half-way (its own clean-up may not have run) —
  refused with a clear message instead of guessing; `--key` with a new value publishes anyway.
A failed publication removes its record (the publisher already removed what it created).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from wp_agent import clock
from wp_agent.cli.local_files import write_private
from wp_agent.executors.port import WpCli
from wp_agent.models.article import PublishArticleInput, PublishArticleOutput


class Publication(BaseModel):
    key: str
    state: Literal["started", "done"]
    at: str
    output: PublishArticleOutput | None = None


def article_key(
    article: PublishArticleInput, *, target: str, site_url: str | None, wp_user: str | None
) -> str:
    canonical = json.dumps(
        {
            "article": article.model_dump(mode="json"),
            "target": target,
            "siteUrl": site_url,
            "wpUser": wp_user,
        },
        ensure_ascii=False,
        sort_keys=True,
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _path(key: str) -> Path:
    name = hashlib.sha256(key.encode("utf-8")).hexdigest()[:40]  # any --key maps to a safe file name
    return Path.home() / ".wp-agent" / "published" / f"{name}.json"


def _write(path: Path, record: Publication) -> None:
    write_private(path, record.model_dump_json())


def earlier(key: str) -> Publication | None:
    try:
        return Publication.model_validate_json(_path(key).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None


def post_field(wp_cli: WpCli, post_id: int, field: str, site_url: str | None) -> str | None:
    """One field of a post as WordPress has it; None when it cannot be read (e.g. deleted)."""
    argv = ["post", "get", str(post_id), f"--field={field}"]
    if site_url:
        argv.append(f"--url={site_url}")
    result = wp_cli.run(argv)
    return (result.stdout.strip() or None) if result.exit_code == 0 else None


def still_there(wp_cli: WpCli, output: PublishArticleOutput, site_url: str | None) -> bool:
    """The first post is still on the site (not deleted, not in the trash)."""
    if output.data is None:
        return False
    return post_field(wp_cli, output.data.post_id, "post_status", site_url) not in {None, "trash"}


def started(key: str) -> None:
    _write(_path(key), Publication(key=key, state="started", at=clock.now_iso()))


def finished(key: str, output: PublishArticleOutput) -> None:
    if output.success:
        _write(_path(key), Publication(key=key, state="done", at=clock.now_iso(), output=output))
    else:
        with contextlib.suppress(FileNotFoundError):
            _path(key).unlink()
