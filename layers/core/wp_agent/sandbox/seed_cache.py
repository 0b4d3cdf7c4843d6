"""The seeded site, built once and kept as a dump plus its uploads, keyed by everything that shapes it.

    <cache root>/<key>/tables/<t>.sql  mariadb-dump of each table of the seeded network
    <cache root>/<key>/tables.json     each table's CHECKSUM TABLE and AUTO_INCREMENT when seeded
    <cache root>/<key>/uploads/        the media files WordPress wrote while seeding
    <cache root>/<key>/facts.json      SEED_FACTS checked, plus the IDs WordPress assigned

The key hashes the seed definition, provision.php, the WordPress release (its version file and
package versions) and the pinned WP-CLI, so
a change to any of them provisions again; otherwise every sandbox (and every test instance) restores
the same entry. An entry is built in a staging directory and renamed into place under a lock, so a
half-built entry is never used and two processes never build the same one.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wp_agent.sandbox import seed
from wp_agent.sandbox.release import WordPressRelease
from wp_agent.sandbox.wp_cli import pinned_sha512

CACHE_ENV = "WP_AGENT_SEED_CACHE"
# Bump when the way a seed is built or restored changes without the inputs above changing.
_RECIPE = "5"
_STALE_AFTER_SECONDS = 86_400


@dataclass(frozen=True)
class SeedSnapshot:
    key: str
    tables: dict[str, list[str]]  # table -> [checksum, auto_increment] as seeded
    directory: Path
    facts: dict[str, Any]

    @property
    def uploads(self) -> Path:
        return self.directory / "uploads"

    def table_dump(self, table: str) -> bytes:
        return (self.directory / "tables" / f"{table}.sql").read_bytes()


class SeedCache:
    """Seeded snapshots under `root`; build with `get_or_build(provision)`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def default(cls) -> SeedCache:
        """$WP_AGENT_SEED_CACHE, else $XDG_CACHE_HOME/wp-agent/sandbox-seed (~/.cache/…)."""
        configured = os.environ.get(CACHE_ENV)
        if configured:
            return cls(Path(configured).expanduser())
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return cls(Path(base) / "wp-agent" / "sandbox-seed")

    def key_for(self, release: WordPressRelease) -> str:
        return _key(str(release.tree), json.dumps(release.packages, sort_keys=True))

    def get_or_build(self, key: str, provision: Callable[[Path], dict[str, Any]]) -> SeedSnapshot:
        """The snapshot for `key` (key_for); `provision(directory)` fills a new one (tables/,
        tables.json, uploads/) and returns its facts."""
        final = self.root / key
        if not (final / "facts.json").exists():
            self.root.mkdir(parents=True, exist_ok=True)
            self.root.chmod(0o700)
            with (self.root / f".{final.name}.lock").open("a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not (final / "facts.json").exists():
                    self._build(final, provision)
        facts = json.loads((final / "facts.json").read_text(encoding="utf-8"))
        tables = json.loads((final / "tables.json").read_text(encoding="utf-8"))
        return SeedSnapshot(final.name, tables, final, facts)

    def _build(self, final: Path, provision: Callable[[Path], dict[str, Any]]) -> None:
        staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=self.root))
        try:
            facts = provision(staging)
            (staging / "facts.json").write_text(
                json.dumps(facts, ensure_ascii=False, indent=1), encoding="utf-8"
            )
            shutil.rmtree(final, ignore_errors=True)
            staging.rename(final)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        # Older seeds are not used again; a day's grace for a process still restoring one.
        for stale in self.root.iterdir():
            old = time.time() - stale.stat().st_mtime > _STALE_AFTER_SECONDS
            if stale.is_dir() and stale != final and not stale.name.startswith(".") and old:
                shutil.rmtree(stale, ignore_errors=True)


@functools.lru_cache(maxsize=4)
def _key(tree: str, packages: str) -> str:
    digest = hashlib.sha256(_RECIPE.encode())
    digest.update(packages.encode())
    digest.update(seed.fingerprint().encode())
    digest.update(Path(__file__).with_name("provision.php").read_bytes())
    digest.update((Path(tree) / "wp-includes" / "version.php").read_bytes())
    digest.update(pinned_sha512().encode())
    return digest.hexdigest()[:20]
