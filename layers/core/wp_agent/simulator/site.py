"""The stored site: one JSON file, safe under concurrent invocations.

Writers take an exclusive `fcntl.flock` on `<file>.lock` for their whole read-modify-write and
publish the result with an atomic `os.replace`, so parallel commands never lose an update.
Readers need no lock: they always see a complete old or new file.

`SiteStore` is also the small Python API tests use to inspect and arrange a site.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wp_agent.simulator.model import Blog, FaultRow, JSONDict, Network, PostRow
from wp_agent.simulator.seed import build_site, generate_posts

SITE_FILE_NAME = ".wp-sim-site.json"
SITE_ENV = "WP_SIM_SITE"


def locate_site_file(env: dict[str, str] | os._Environ[str], wp_path: str | None) -> Path | None:
    """WP_SIM_SITE wins; otherwise `<--path>/.wp-sim-site.json`; otherwise there is no site."""
    explicit = env.get(SITE_ENV)
    if explicit:
        return Path(explicit)
    if wp_path:
        return Path(wp_path) / SITE_FILE_NAME
    return None


class SiteStore:
    """A site file plus its lock file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")

    @classmethod
    def for_wordpress_path(cls, wp_path: str | os.PathLike[str]) -> SiteStore:
        return cls(Path(wp_path) / SITE_FILE_NAME)

    # ------------------------------------------------------------------ raw access

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the exclusive write lock."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.lock_path, "a") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def read(self) -> JSONDict | None:
        """The current document, or None when the file does not exist (no lock needed)."""
        try:
            with open(self.path, encoding="utf-8") as handle:
                data: JSONDict = json.load(handle)
                return data
        except FileNotFoundError:
            return None

    def write(self, data: JSONDict) -> None:
        """Atomically replace the file; call while holding `locked()`."""
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.{id(data)}.tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, separators=(",", ":"))
        os.replace(temporary, self.path)

    def exists(self) -> bool:
        return self.path.exists()

    def ensure(self) -> JSONDict:
        """Load the document, seeding the sample site first if the file does not exist yet."""
        data = self.read()
        if data is not None:
            return data
        with self.locked():
            data = self.read()
            if data is None:
                data = build_site()
                self.write(data)
            return data

    @contextmanager
    def transaction(self) -> Iterator[JSONDict]:
        """Lock, load (seeding if needed), let the caller change the document, save."""
        with self.locked():
            data = self.read()
            if data is None:
                data = build_site()
            yield data
            self.write(data)

    def reset(self) -> None:
        """Replace the site with a fresh copy of the sample data."""
        with self.locked():
            self.write(build_site())

    # ------------------------------------------------------------------ helpers for tests

    def load(self) -> JSONDict:
        return self.ensure()

    def network(self) -> Network:
        return Network(self.ensure())

    def get_post(self, post_id: int, *, blog_id: int = 1) -> PostRow | None:
        return self.network().blog(blog_id).post(post_id)

    def posts(
        self, *, status: str | None = None, post_type: str | None = "post", blog_id: int = 1
    ) -> list[PostRow]:
        return [
            post
            for post in self.network().blog(blog_id).posts
            if (status is None or post["post_status"] == status)
            and (post_type is None or post["post_type"] == post_type)
        ]

    def get_post_meta(self, post_id: int, key: str, *, blog_id: int = 1) -> list[Any]:
        rows = self.network().blog(blog_id).meta_rows(post_id, key)
        return [row["meta_value"] for row in rows]

    def get_option(self, name: str, *, blog_id: int = 1) -> Any:
        return self.network().blog(blog_id).get_option(name)

    def set_option(self, name: str, value: Any, *, blog_id: int = 1) -> None:
        with self.transaction() as data:
            Blog(data["blogs"][str(blog_id)], blog_id).set_option(name, value)

    def seed_posts(self, count: int, *, blog_id: int = 1, status: str = "publish") -> list[int]:
        """Add `count` generated posts (e.g. for the 1,000-post benchmark site)."""
        with self.transaction() as data:
            return generate_posts(Blog(data["blogs"][str(blog_id)], blog_id), count, status=status)

    def set_fault(
        self,
        command: str,
        *,
        error: str | None = None,
        exit_code: int = 1,
        delay_ms: int = 0,
        stdout_bytes: int = 0,
        times: int | None = None,
    ) -> FaultRow:
        """Arrange a fault for commands whose path starts with `command` ("*" matches all).

        `times=None` keeps the fault until cleared; `times=1` makes it one-shot.
        """
        with self.transaction() as data:
            fault_id = int(data.get("next_fault_id", 1))
            data["next_fault_id"] = fault_id + 1
            fault = FaultRow(
                id=fault_id,
                command=command,
                error=error,
                exit_code=exit_code,
                delay_ms=delay_ms,
                stdout_bytes=stdout_bytes,
                times=times,
            )
            data.setdefault("faults", []).append(fault)
            return fault

    def faults(self) -> list[FaultRow]:
        return list(self.network().faults)

    def clear_faults(self) -> None:
        with self.transaction() as data:
            data["faults"] = []

    def set_bootstrap_ms(self, milliseconds: int) -> None:
        with self.transaction() as data:
            data["bootstrap_ms"] = milliseconds

    def set_multisite(self, enabled: bool) -> None:
        with self.transaction() as data:
            data["multisite"] = enabled

    def pin_clock(self, now_gmt: str | None) -> None:
        """Fix "now" (UTC, 'Y-m-d H:i:s') for every invocation on this site; None unpins."""
        with self.transaction() as data:
            data["fixed_now_gmt"] = now_gmt
