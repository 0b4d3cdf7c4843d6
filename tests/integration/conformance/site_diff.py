"""What a command changed on the real site, fast: every table's checksum first, then row diffs of the
changed tables only (against rows read once from the seed), then the files (the WordPress tree, the
uploads and a canary file outside both)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.fakes.wordpress import TestWordPress

# Tables of the network as a whole; every other table belongs to one site (wp_<blog>_<family>).
GLOBAL_FAMILIES = frozenset(
    {
        "users",
        "usermeta",
        "blogs",
        "blogmeta",
        "site",
        "sitemeta",
        "signups",
        "registration_log",
        "blog_versions",
    }
)
_TABLE = re.compile(r"^wp_(?:(\d+)_)?(.+)$")
Row = dict[str, str]


def table_family(table: str) -> tuple[int | None, str]:
    """(blog id or None for network tables, family) of a table name: wp_2_posts -> (2, posts)."""
    match = _TABLE.match(table)
    if match is None:
        return None, table
    family = match.group(2)
    if family in GLOBAL_FAMILIES and match.group(1) is None:
        return None, family
    return int(match.group(1) or 1), family


@dataclass
class RowChange:
    table: str
    before: Row | None
    after: Row | None

    @property
    def row(self) -> Row:
        found = self.after if self.after is not None else self.before
        assert found is not None
        return found

    def changed_columns(self) -> set[str]:
        if self.before is None or self.after is None:
            return set(self.row)
        return {c for c in self.after if self.after.get(c) != self.before.get(c)}


@dataclass
class SiteChange:
    tables: list[str] = field(default_factory=list)  # every table whose checksum or counter changed
    created_tables: list[str] = field(default_factory=list)
    dropped_tables: list[str] = field(default_factory=list)
    rows: list[RowChange] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # relative to the WordPress directory, or "canary"

    @property
    def empty(self) -> bool:
        return not (self.tables or self.files)


class SiteBaseline:
    """The seeded site's tables, rows and files, read once; `changes()` compares the site with it."""

    def __init__(self, wordpress: TestWordPress) -> None:
        """The seeded site with its content aged (`age_the_content`), after every restore too."""
        self.wordpress = wordpress
        self.site = wordpress.site
        age_the_content(wordpress)
        self.canary = self.site.home / "canary-outside-wordpress.txt"
        self._write_canary()
        self.tables = self.site.table_state()
        self._rows: dict[str, dict[tuple[str, ...], Row]] = {}
        self._keys: dict[str, list[str]] = {}
        self._columns: dict[str, list[str]] = {}
        self.files = self._files()
        for table in self.tables:
            self._rows[table] = self._read_rows(table)

    def rows(self, table: str) -> dict[tuple[str, ...], Row]:
        return self._rows.get(table, {})

    def changes(self) -> SiteChange:
        change = SiteChange()
        now = self.site.table_state()
        change.tables = sorted(t for t in now.keys() | self.tables.keys() if now.get(t) != self.tables.get(t))
        change.created_tables = sorted(now.keys() - self.tables.keys())
        change.dropped_tables = sorted(self.tables.keys() - now.keys())
        for table in change.tables:
            if table in change.dropped_tables:
                continue
            before = self._rows.get(table, {})
            after = self._read_rows(table)
            for key in before.keys() | after.keys():
                if before.get(key) != after.get(key):
                    change.rows.append(RowChange(table, before.get(key), after.get(key)))
        files = self._files()
        change.files = sorted(
            p for p in files.keys() | self.files.keys() if files.get(p) != self.files.get(p)
        )
        return change

    def restore(self, change: SiteChange) -> None:
        """Back to the seed: only what changed is reloaded (the sandbox's own restore), then the canary."""
        if change.empty:
            return
        if not change.files:  # the files were compared and are the seed's: the database only
            self.site.reset(files=False)
            age_the_content(self.wordpress)
            assert self.site.table_state() == self.tables, "the restore left tables changed"
            return
        self.wordpress.reset()
        age_the_content(self.wordpress)
        self._write_canary()
        assert self.site.table_state() == self.tables, "the restore left tables changed"
        # The restore rewrites wp-config.php and the canary (new modification times): same paths and
        # sizes, then this listing is the seed's.
        files = self._files()
        sizes = {p: v[0] for p, v in files.items()}
        assert sizes == {p: v[0] for p, v in self.files.items()}, "the restore left files changed"
        self.files = files

    # -- reading --------------------------------------------------------------------------------

    def _read_rows(self, table: str) -> dict[tuple[str, ...], Row]:
        columns = self._columns.get(table) or self._describe(table)
        keys = self._keys[table]
        rows: dict[tuple[str, ...], Row] = {}
        for values in self.site.sql(f"SELECT * FROM `{table}`"):
            row = dict(zip(columns, values, strict=False))
            rows[tuple(row.get(k, "") for k in keys)] = row
        return rows

    def _describe(self, table: str) -> list[str]:
        schema = "TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" + table.replace("'", "") + "'"
        columns = [r[0] for r in self.site.sql(
            f"SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE {schema} ORDER BY ORDINAL_POSITION"
        )]  # fmt: skip
        keys = [r[0] for r in self.site.sql(
            "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE"
            f" WHERE {schema} AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION"
        )]  # fmt: skip
        self._columns[table] = columns
        self._keys[table] = keys or columns
        return columns

    def _files(self) -> dict[str, tuple[int, int, int]]:
        """Every file and link under the WordPress directory (uploads included) and the canary:
        (size, modification time, mode)."""
        listing: dict[str, tuple[int, int, int]] = {}
        root = str(self.site.wordpress)
        stack = [root]
        while stack:
            directory = stack.pop()
            with os.scandir(directory) as entries:
                for entry in entries:
                    stat = entry.stat(follow_symlinks=False)
                    relative = entry.path[len(root) + 1 :]
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                        listing[relative + "/"] = (0, 0, stat.st_mode)
                    else:
                        listing[relative] = (stat.st_size, stat.st_mtime_ns, stat.st_mode)
        if self.canary.exists():
            stat = self.canary.stat()
            listing["canary"] = (stat.st_size, stat.st_mtime_ns, stat.st_mode)
        return listing

    def _write_canary(self) -> None:
        text = "canary: a file outside the WordPress tree and its uploads; no write may touch it\n"
        if not self.canary.exists() or self.canary.read_text(encoding="utf-8") != text:
            self.canary.write_text(text, encoding="utf-8")
            owner = self.site._owner_ids()
            if owner is not None:
                os.chown(self.canary, *owner)
        Path(self.canary).chmod(0o664)


def age_the_content(wordpress: TestWordPress) -> None:
    """Content made two days ago, as on a site people run: a write that WordPress dates anew (a menu
    item's save re-dates it) then always crosses a day, so bookkeeping kept per day (`_wp_old_date`)
    shows on every run, not only on a run made on another day than the seeding. Scheduled posts keep
    their dates (an earlier date would make them due)."""
    wordpress.sql(  # the database client, not WP-CLI: no WordPress start for every restore
        "UPDATE wp_posts SET post_date = post_date - INTERVAL 2 DAY, post_date_gmt = post_date_gmt - INTERVAL 2 DAY,"
        " post_modified = post_modified - INTERVAL 2 DAY, post_modified_gmt = post_modified_gmt - INTERVAL 2 DAY"
        " WHERE post_status <> 'future' AND post_date_gmt <> '0000-00-00 00:00:00'"
    )
