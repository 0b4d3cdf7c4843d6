"""One sandbox: a real WordPress network (Debian's files, our wp-config.php) on a private MariaDB.

    <home>/wordpress/     the chosen WordPress release (release.py: Debian unstable's 7.x when fetched, else
                          the system's /usr/share/wordpress), Japanese language files only, + wp-config.php
    <home>/mariadb/       the private server (datadir, socket, log) — see mariadb.py
    <home>/opcache/       PHP's compiled-code cache for WP-CLI (private to the owner)
    <home>/state.json     the seed this site holds, the database password (0600)

The seeded content is built once per seed definition, WordPress version and WP-CLI version and kept
as a dump plus the uploads it made (seed_cache.py); `start` restores it into an empty site and
`reset` restores it again (a second or less). Every entry point takes a file lock, so two CLI calls
never provision or restore the same sandbox at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wp_agent.sandbox import seed
from wp_agent.sandbox.errors import SandboxError
from wp_agent.sandbox.files import sync_tree, wordpress_file_filter
from wp_agent.sandbox.mariadb import MariaDb
from wp_agent.sandbox.release import WordPressRelease, chosen_release
from wp_agent.sandbox.seed_cache import SeedCache, SeedSnapshot
from wp_agent.sandbox.wp_cli import php_command, verified_phar

DATABASE = "wordpress"
DB_USER = "wordpress"
PROVISION_SCRIPT = Path(__file__).with_name("provision.php")
_SETPRIV = "/usr/bin/setpriv"  # util-linux (essential on Debian): not whatever `setpriv` PATH finds
_WP_CLI_TIMEOUT_SECONDS = 600.0
_COMMENT_STATUS = {"1": "approved", "0": "pending"}
_AUTO_INCREMENTS = (
    "SELECT TABLE_NAME, IFNULL(AUTO_INCREMENT, '') FROM information_schema.TABLES"  # noqa: S608 - constants only
    f" WHERE TABLE_SCHEMA = '{DATABASE}'"
)
_UPDATER_STARTED = (
    "require_once ABSPATH . 'wp-admin/includes/class-wp-upgrader.php'; ( new WP_Upgrader() )->init();"
)
_SALTS = ("AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY",
          "AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT")  # fmt: skip


@dataclass(frozen=True)
class SandboxStatus:
    home: Path
    created: bool
    database_running: bool
    seed: str | None
    url: str
    wordpress: str = ""

    def lines_ja(self) -> list[str]:
        state = "稼働中" if self.database_running else "停止中"
        return [
            f"場所: {self.home}",
            f"作成済み: {'はい' if self.created else 'いいえ（初回の利用時に作成します）'}",
            f"データベース: {state}",
            f"サンプルデータ: {self.seed or '未投入'}",
            f"サイト: {self.url}（実際のWordPress。あなたのサイトには接続しません）",
            f"WordPress: {self.wordpress}",
        ]


class SandboxSite:
    """The sandbox WordPress under `home`; `owner` is who runs its database and WP-CLI (default: us)."""

    def __init__(
        self,
        home: Path,
        *,
        owner: str | None = None,
        cache: SeedCache | None = None,
        extra_files: Mapping[str, str] | None = None,
        release: WordPressRelease | None = None,
    ) -> None:
        self.home = home.expanduser().absolute()
        self.release = release or chosen_release()
        self.owner = owner or pwd.getpwuid(os.geteuid()).pw_name
        self.wordpress = self.home / "wordpress"
        self.database = MariaDb(self.home / "mariadb", owner=self.owner)
        self.opcache = self.home / "opcache"
        self.state_file = self.home / "state.json"
        self.cache = cache or SeedCache.default()
        # Files (relative to the WordPress directory) written on every start and reset, e.g. a
        # must-use plugin of a test harness; Debian's tree and the seeded uploads are restored around them.
        self.extra_files = dict(extra_files or {})

    # --- what callers use ----------------------------------------------------------------------

    @functools.cached_property
    def seed_key(self) -> str:
        """The seed cache's key for this release (read when first needed: a machine without the
        release's files can still ask for the status, and `start` says what is missing)."""
        return self.cache.key_for(self.release)

    def start(self) -> None:
        """Ready to answer: files in place, database running, seeded content present."""
        with self._locked():
            self._ensure_files()
            self.database.start()
            state = self._state()
            if state.get("seed") != self.seed_key:
                self._restore(self._snapshot())

    def reset(self, *, files: bool = True) -> float:
        """Put the seeded content back (database and files); returns the seconds it took.
        `files=False` restores the database only, for a caller that knows no file changed (the
        effect-conformance harness compares every file after each command)."""
        started = time.monotonic()
        with self._locked():
            self._ensure_files()
            self.database.start()
            self._restore(self._snapshot(), files=files)
        return time.monotonic() - started

    def stop(self) -> bool:
        """Stop the sandbox's database server (the files stay); True if it was running."""
        with self._locked():
            return self.database.stop()

    def status(self) -> SandboxStatus:
        state = self._state() if self.state_file.exists() else {}
        wordpress = "未導入"
        if self.release.tree.is_dir():
            wordpress = self.release.describe_ja()
            if state.get("seed") not in (None, self.seed_key):  # seeded from another release until started
                wordpress += "（いまのファイルとデータは別のリリースのものです。次の start でこのリリースに切り替えます）"
        return SandboxStatus(
            home=self.home,
            created=(self.wordpress / "wp-config.php").exists(),
            database_running=self.database.running(),
            seed=state.get("seed"),
            url=f"{seed.HOME}/",
            wordpress=wordpress,
        )

    def facts(self) -> dict[str, Any]:
        """SEED_FACTS plus the IDs WordPress assigned while seeding (attachments, menu items, …)."""
        return self._snapshot().facts

    def wp_command(self) -> list[str]:
        """`php … wp-cli.phar` for this site (the phar verified); add `--path` and the arguments."""
        return php_command(verified_phar(), self.opcache)

    def wp(
        self, *args: str, check: bool = True, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run real WP-CLI on this site as its owner (for provisioning and test harnesses)."""
        command = self.as_owner([*self.wp_command(), f"--path={self.wordpress}", *args])
        completed = subprocess.run(  # noqa: S603 - our own argv, no shell
            command,
            capture_output=True,
            text=True,
            env=self.wp_environment(env),
            timeout=_WP_CLI_TIMEOUT_SECONDS,
            check=False,
        )
        if check and completed.returncode != 0:
            raise SandboxError(
                "wp_cli_failed",
                f"サンドボックスの WP-CLI が失敗しました（wp {' '.join(args[:3])}）: {completed.stderr.strip()[-300:]}",
                log=completed.stderr[-4000:],
            )
        return completed

    def sql(self, statements: str) -> list[list[str]]:
        """Rows of a query on the WordPress database (tab-separated fields), as the administrator."""
        output = self.database.sql(statements, database=DATABASE)
        return [line.split("\t") for line in output.splitlines()]

    # --- files and configuration ---------------------------------------------------------------

    def _ensure_files(self) -> None:
        if not self.release.tree.is_dir():
            raise SandboxError(
                "wordpress_missing",
                f"WordPress のファイル（{self.release.tree}）がありません。`wp-agent sandbox install` でサンドボックスに"
                "必要なもの（Debian の wordpress パッケージなど）を入れてください。",
            )
        created = (self.wordpress / "wp-config.php").exists()
        if not created:
            self.home.mkdir(parents=True, exist_ok=True)
            self._chown(self.home)
            self.home.chmod(0o711)  # the database socket lives below; contents stay the owner's
            for directory in (self.opcache, self.database.home):
                directory.mkdir(mode=0o700, exist_ok=True)
                self._chown(directory)
            self._sync_wordpress()
        # The database password and WordPress's keys and salts: made once, kept with the sandbox.
        state = self._state()
        if "db_password" not in state or "salts" not in state:
            state.setdefault("db_password", secrets.token_urlsafe(24))
            state.setdefault("salts", {name: secrets.token_urlsafe(48) for name in _SALTS})
            self._write_state(state)
        if not created:
            self._write_config(multisite=False)

    def _sync_wordpress(self) -> int:
        owner = self._owner_ids()
        changes = sync_tree(
            self.release.tree,
            self.wordpress,
            include=wordpress_file_filter,
            keep=lambda relative: (
                relative in {"wp-config.php", "wp-content/uploads"} or relative in self.extra_files
            ),
            owner=owner,
            links_root=self.release.root,
        )
        for relative, text in self.extra_files.items():
            path = self.wordpress / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            self._chown(path.parent)
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                path.write_text(text, encoding="utf-8")
                self._chown(path)
        return changes

    def _write_config(self, *, multisite: bool) -> None:
        state = self._state()
        password = state["db_password"]
        keys = "\n".join(f"define( '{name}', '{value}' );" for name, value in state["salts"].items())
        network = (
            "define( 'WP_ALLOW_MULTISITE', true );\n"
            "define( 'MULTISITE', true );\n"
            "define( 'SUBDOMAIN_INSTALL', false );\n"
            f"define( 'DOMAIN_CURRENT_SITE', '{seed.HOME.removeprefix('https://')}' );\n"
            "define( 'PATH_CURRENT_SITE', '/' );\n"
            "define( 'SITE_ID_CURRENT_SITE', 1 );\n"
            "define( 'BLOG_ID_CURRENT_SITE', 1 );\n"
            if multisite
            else ""
        )
        text = f"""<?php
// The wp-agent sandbox's own configuration (Debian's wp-config.php reads /etc/wordpress; not used here).
define( 'DB_NAME', '{DATABASE}' );
define( 'DB_USER', '{DB_USER}' );
define( 'DB_PASSWORD', '{password}' );
define( 'DB_HOST', 'localhost:{self.database.socket}' );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );
{keys}
$table_prefix = 'wp_';
define( 'WP_DEBUG', false );
// Debian's files are updated by apt, never by WordPress itself.
define( 'WP_AUTO_UPDATE_CORE', false );
define( 'AUTOMATIC_UPDATER_DISABLED', true );
// No web server answers for this site, so WordPress's page-load cron (a request to its own
// wp-cron.php) cannot run; without this every command would still try, and stamp the attempt.
define( 'DISABLE_WP_CRON', true );
// WordPress 6.6+ caches each theme's block patterns in a site transient keyed by the theme's path and
// kept 30 minutes, so any command (a read included) rewrites it once it expired, or when the seed was
// restored into another directory. Theme development mode keeps patterns uncached: the sandbox's
// database then changes only by what its commands do (WordPress before 6.3 ignores the constant).
define( 'WP_DEVELOPMENT_MODE', 'theme' );
{network}if ( ! defined( 'ABSPATH' ) ) {{
	define( 'ABSPATH', __DIR__ . '/' );
}}
require_once ABSPATH . 'wp-settings.php';
"""
        config = self.wordpress / "wp-config.php"
        temporary = config.with_name("wp-config.php.tmp")
        temporary.write_text(text, encoding="utf-8")
        temporary.chmod(0o600)
        self._chown(temporary)
        temporary.replace(config)

    # --- seeding -------------------------------------------------------------------------------

    def _snapshot(self) -> SeedSnapshot:
        return self.cache.get_or_build(self.seed_key, self._provision)

    def _restore(self, snapshot: SeedSnapshot, *, files: bool = True) -> None:
        """Bring the database and the files back to the seeded state.

        Only what differs is restored: a table whose CHECKSUM TABLE and AUTO_INCREMENT equal the
        seeded ones is left alone, changed tables are reloaded from their dump, tables the seed does
        not have (a new site's) are dropped. A test that touched three tables costs three reloads.
        """
        self._create_database_user()
        self.database.sql(
            f"CREATE DATABASE IF NOT EXISTS `{DATABASE}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
        )
        current = self.table_state(list(snapshot.tables))
        stale = [table for table in current if table not in snapshot.tables]
        changed = [table for table, seeded in snapshot.tables.items() if current.get(table) != seeded]
        if stale or changed:
            script = (
                b"SET FOREIGN_KEY_CHECKS=0;\n"
                + "".join(f"DROP TABLE IF EXISTS `{t}`;\n" for t in stale).encode()
            )
            script += b"".join(snapshot.table_dump(table) for table in changed)
            self.database.client([DATABASE], script)
        if not files:
            return
        self._sync_wordpress()
        sync_tree(snapshot.uploads, self.wordpress / "wp-content" / "uploads", owner=self._owner_ids())
        self._write_config(multisite=True)
        self._write_state({**self._state(), "seed": snapshot.key})

    def table_state(self, tables: list[str] | None = None) -> dict[str, list[str]]:
        """Every table of the WordPress database: [CHECKSUM TABLE, AUTO_INCREMENT] (as text)."""
        increments = {row[0]: row[1] for row in self.sql(_AUTO_INCREMENTS)}
        names = sorted(set(increments) | set(tables or []))
        if not names:
            return {}
        checksums = {
            row[0].split(".", 1)[1]: row[1]
            for row in self.sql("CHECKSUM TABLE " + ", ".join(f"`{name}`" for name in names))
        }
        return {name: [checksums.get(name, "NULL"), increments[name]] for name in names if name in increments}

    def _provision(self, target: Path) -> dict[str, Any]:
        """Build the seeded site here with real WP-CLI, then dump it into `target` (the cache entry)."""
        self._create_database_user()
        self.database.sql(
            f"DROP DATABASE IF EXISTS `{DATABASE}`;"
            f"CREATE DATABASE `{DATABASE}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;"
        )
        self._write_config(multisite=False)
        uploads = self.wordpress / "wp-content" / "uploads"
        _clear_directory(uploads)
        self._chown(uploads)
        for command in seed.install_commands(secrets.token_urlsafe(24)):
            self.wp(*command)
        self._write_config(multisite=True)
        with tempfile.TemporaryDirectory(prefix="wp-agent-seed-") as scratch:
            media = Path(scratch) / "media"
            media.mkdir()
            self._chown(Path(scratch))
            self._chown(media)
            plan_file = Path(scratch) / "plan.json"
            wp = [*self.wp_command(), f"--path={self.wordpress}"]
            plan_file.write_text(json.dumps(seed.plan(str(media), wp), ensure_ascii=False), encoding="utf-8")
            self._chown(plan_file)
            self.wp("eval-file", str(PROVISION_SCRIPT), str(plan_file))
        # As on any site WordPress has updated once: the updater (6.3+) schedules its weekly clean-up
        # of temporary backups when it starts, and `maintenance-mode status` starts it too.
        for path, *_ in seed.SITES.values():
            self.wp(f"--url={seed.HOME}{path}", "eval", _UPDATER_STARTED)
        facts = self._verified_facts()
        tables = self.table_state()
        (target / "tables").mkdir()
        for table in tables:
            self.database.dump_table(DATABASE, table, target / "tables" / f"{table}.sql")
        (target / "tables.json").write_text(json.dumps(tables), encoding="utf-8")
        sync_tree(uploads, target / "uploads")
        return facts

    def _create_database_user(self) -> None:
        password = self._state()["db_password"]
        quoted = password.replace("'", "''")
        self.database.sql(
            f"CREATE USER IF NOT EXISTS '{DB_USER}'@'localhost' IDENTIFIED BY '{quoted}';"
            f"ALTER USER '{DB_USER}'@'localhost' IDENTIFIED BY '{quoted}';"
            f"GRANT ALL PRIVILEGES ON `{DATABASE}`.* TO '{DB_USER}'@'localhost';"
        )

    def _verified_facts(self) -> dict[str, Any]:
        """SEED_FACTS checked against the database, plus what WordPress assigned while seeding."""
        rows = self.sql("SELECT ID, post_type, post_status, post_name, post_title FROM wp_posts")
        posts = {int(r[0]): (r[1], r[2], r[3], r[4]) for r in rows}
        facts: dict[str, Any] = json.loads(json.dumps(seed.SEED_FACTS))
        expected_status = {
            "draft_post_ids": "draft", "publish_post_ids": "publish", "future_post_ids": "future",
            "private_post_ids": "private", "pending_post_ids": "pending", "trash_post_ids": "trash",
        }  # fmt: skip
        problems = [
            f"post {post_id} is {posts.get(post_id)}, not {status}"
            for key, status in expected_status.items()
            for post_id in facts[key]
            if posts.get(post_id, ("", ""))[1] != status
        ]
        problems += [f"page {i} missing" for i in facts["page_ids"] if posts.get(i, ("",))[0] != "page"]
        if facts["missing_post_id"] in posts:
            problems.append(f"post {facts['missing_post_id']} exists")
        users = {r[1]: int(r[0]) for r in self.sql("SELECT ID, user_login FROM wp_users")}
        problems += [
            f"user {login} is {users.get(login)}"
            for login, i in facts["users"].items()
            if users.get(login) != i
        ]
        sites = [
            f"https://{r[0]}{r[1]}" for r in self.sql("SELECT domain, path FROM wp_blogs ORDER BY blog_id")
        ]
        if sites != facts["multisite_urls"]:
            problems.append(f"sites are {sites}")
        if problems:
            raise SandboxError(
                "seed_mismatch", "サンプルデータの投入結果が想定と異なります: " + "; ".join(problems)
            )
        facts["attachment_ids"] = {r[3]: i for i, r in posts.items() if r[0] == "attachment"}
        facts["menu_item_ids"] = sorted(i for i, r in posts.items() if r[0] == "nav_menu_item")
        # What WordPress hands out next (restores put AUTO_INCREMENT back, so these hold after a reset).
        increments = {row[0]: int(row[1] or 0) for row in self.sql(_AUTO_INCREMENTS)}
        facts["next_post_id"] = increments["wp_posts"]
        facts["next_term_id"] = increments["wp_terms"]
        facts["next_comment_id"] = increments["wp_comments"]
        facts["term_ids"] = {
            f"{r[1]}:{r[2]}": int(r[0])
            for r in self.sql(
                "SELECT t.term_id, tt.taxonomy, t.slug FROM wp_terms t JOIN wp_term_taxonomy tt USING (term_id)"
            )
        }
        comments: dict[str, list[int]] = {}
        for comment_id, approved in self.sql(
            "SELECT comment_ID, comment_approved FROM wp_comments ORDER BY comment_ID"
        ):
            comments.setdefault(_COMMENT_STATUS.get(approved, approved), []).append(int(comment_id))
        facts["comment_ids"] = comments
        return facts

    # --- helpers -------------------------------------------------------------------------------

    def _state(self) -> dict[str, Any]:
        try:
            loaded: object = json.loads(self.state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return dict(loaded) if isinstance(loaded, dict) else {}

    def _write_state(self, state: dict[str, Any]) -> None:
        temporary = self.state_file.with_suffix(".tmp")
        temporary.write_text(json.dumps(state), encoding="utf-8")
        temporary.chmod(0o600)
        temporary.replace(self.state_file)

    def wp_environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment WP-CLI runs in on this site (its owner's HOME, a UTF-8 locale), plus `extra`."""
        home = pwd.getpwnam(self.owner).pw_dir
        env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOME": home if Path(home).is_dir() else str(self.home),
            "LANG": "C.UTF-8",
        }
        if self.owner == "root":
            env["WP_CLI_ALLOW_ROOT"] = "1"
        env.update(extra or {})
        return env

    def process_user(self) -> str | None:
        """Who runs this site's processes (WP-CLI, its HTTP front): the owner when we are root, else ourselves (None)."""
        return self.owner if os.geteuid() == 0 and self.owner != "root" else None

    def as_owner(self, argv: Sequence[str]) -> list[str]:
        """`argv` run as `process_user` (when it is someone else): its user, group and groups, none of
        ours (the site's PHP runs plugin code). Through util-linux's setpriv: Popen(user=…) would make
        Python fork where it vforks, ~25 ms for a big test or API process, every command."""
        user = self.process_user()
        if user is None:
            return list(argv)
        entry = pwd.getpwnam(user)
        return [_SETPRIV, f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups", "--", *argv]

    def _owner_ids(self) -> tuple[int, int] | None:
        entry = pwd.getpwnam(self.owner)
        if os.geteuid() != 0 or entry.pw_uid == 0:
            return None
        return entry.pw_uid, entry.pw_gid

    def _chown(self, path: Path) -> None:
        owner = self._owner_ids()
        if owner is not None:
            os.lchown(path, *owner)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.home.mkdir(parents=True, exist_ok=True)
        with (self.home / ".lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _clear_directory(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for entry in directory.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
