"""How WP-CLI is started over SSH (executors/php_launch.py) on the real sshd rig, whose `wp` is the plain
phar as on a VPS: PHP with a private opcache file cache of the SSH user, probed once per connection;
a cache directory another account could write is refused and `wp` runs as configured."""

from __future__ import annotations

import logging
import os
import pwd
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import TestWordPress
from wp_agent.cli.doctor import all_checks
from wp_agent.executors.php_launch import CACHE_DIR_BELOW_HOME, LaunchReason
from wp_agent.executors.ssh import SshConnectionPool, SshWpCli

pytestmark = pytest.mark.sshd

BLOGNAME = ["option", "get", "blogname"]
TITLE = "Argo Note サンプルサイト\n"


@pytest.fixture(scope="module")
def rig(wordpress: TestWordPress) -> Iterator[SshdRig]:
    """A rig of this module's own: its login user's home is changed here."""
    with SshdRig(wordpress) as own:
        yield own


@pytest.fixture
def home(rig: SshdRig) -> Iterator[Path]:
    """The login user's home (sshd's SetEnv HOME), emptied after each test."""
    yield rig.home_dir
    for entry in rig.home_dir.iterdir():
        if entry.is_symlink() or entry.is_file():
            entry.unlink()
        else:
            _make_removable(entry)
            shutil.rmtree(entry)


def _make_removable(path: Path) -> None:
    for directory in [path, *(p for p in path.rglob("*") if p.is_dir() and not p.is_symlink())]:
        directory.chmod(0o700)


def _executor(rig: SshdRig, **overrides: object) -> tuple[SshWpCli, SshConnectionPool]:
    pool = SshConnectionPool()
    return SshWpCli(rig.settings(**overrides), pool=pool), pool


def _login_user(rig: SshdRig) -> pwd.struct_passwd:
    return pwd.getpwnam(rig.user)


def test_the_plain_phar_runs_through_php_with_the_ssh_users_private_cache(
    rig: SshdRig, home: Path, seeded_wordpress: TestWordPress, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="wp_agent.executors.ssh")
    wp, pool = _executor(rig)
    try:
        answer = wp.run(BLOGNAME)
        assert (answer.exit_code, answer.stdout, answer.stderr) == (0, TITLE, "")
        launch = wp.php_launch()
        assert launch.reason is LaunchReason.OPCACHE, launch.detail
        assert launch.script == str(rig.bin_dir / "wp")
        assert launch.shebang == "#!/usr/bin/env php"
        cache = home / CACHE_DIR_BELOW_HOME
        assert launch.cache_dir == str(cache)
        for directory in (cache, cache.parent, cache.parent.parent):
            assert (directory.stat().st_mode & 0o777, directory.stat().st_uid) == (
                0o700,
                _login_user(rig).pw_uid,
            )
        assert any(cache.rglob("*.bin"))
        assert "if [ -d " in wp.remote_command(BLOGNAME, launch)
        # Probed once for the connection: later commands (here concurrent ones) reuse the choice.
        with ThreadPoolExecutor(max_workers=3) as workers:
            results = list(workers.map(wp.run, [["post", "get", "45", "--field=ID"]] * 3))
        assert [r.stdout for r in results] == ["45\n"] * 3
        assert wp.php_launch() is launch
        assert [r.getMessage() for r in caplog.records].count("wp-cli launch chosen") == 1
    finally:
        pool.close_all()
    # Off by the setting: `wp` exactly as configured.
    off, pool = _executor(rig, wp_agent_opcache=False)
    try:
        assert off.php_launch().reason is LaunchReason.DISABLED
        assert off.run(BLOGNAME).stdout == TITLE
    finally:
        pool.close_all()


def test_php_named_in_wp_cli_bin_over_ssh(rig: SshdRig, home: Path, seeded_wordpress: TestWordPress) -> None:
    wp, pool = _executor(rig, wp_cli_bin=f"php {rig.phar_path}")
    try:
        assert wp.run(BLOGNAME).stdout == TITLE
        launch = wp.php_launch()
        assert (launch.reason, launch.program, launch.shebang) == (LaunchReason.OPCACHE, ("php",), "")
    finally:
        pool.close_all()


class Attacker:
    """Prepares the login user's ~/.cache as another account (or a careless past) could have left it."""

    def __init__(self, rig: SshdRig, home: Path) -> None:
        self.login = _login_user(rig)
        self.nobody = pwd.getpwnam("nobody")
        self.home = home
        self.cache = home / CACHE_DIR_BELOW_HOME
        self.planted = rig.dir / "planted"  # a directory anyone can write
        self.planted.mkdir(mode=0o777, exist_ok=True)
        self.planted.chmod(0o777)
        self.cache.parent.mkdir(parents=True)
        for directory in (home / ".cache", self.cache.parent):
            self._own(directory, self.login, 0o700)

    def _own(self, path: Path, owner: pwd.struct_passwd, mode: int) -> None:
        os.chown(path, owner.pw_uid, owner.pw_gid)
        path.chmod(mode)

    def _cache_dir(self, owner: pwd.struct_passwd | None = None, mode: int = 0o700) -> None:
        self.cache.mkdir()
        self._own(self.cache, owner or self.login, mode)

    def another_owner(self) -> None:  # the cache directory itself, pre-created by another account
        self._cache_dir(self.nobody, 0o777)

    def another_owners_ancestor(self) -> None:  # ~/.cache theirs (0755): they could swap what is below
        self._own(self.home / ".cache", self.nobody, 0o755)
        self._cache_dir()

    def another_owners_private_parent(self) -> None:  # ~/.cache/wp-agent private, but not the user's
        self._own(self.cache.parent, self.nobody, 0o700)

    def open_mode(self) -> None:
        self._cache_dir(mode=0o777)

    def group_writable(self) -> None:
        self._cache_dir(mode=0o770)

    def writable_ancestor(self) -> None:  # anyone could swap wp-agent/opcache for their own
        (self.home / ".cache").chmod(0o777)

    def symlink(self) -> None:
        self.cache.symlink_to(self.planted)

    def symlink_to_own_private_dir(self) -> None:  # a link is never trusted, even to a private directory
        own = self.home / "elsewhere"
        own.mkdir()
        self._own(own, self.login, 0o700)
        self.cache.symlink_to(own)

    def dangling_symlinked_ancestor(self) -> None:  # ~/.cache -> a path another account could create first
        _make_removable(self.home / ".cache")
        shutil.rmtree(self.home / ".cache")
        (self.home / ".cache").symlink_to(self.planted / "not-yet")

    def planted_inside(self) -> None:  # private now, holding what another account wrote while it was open
        self._cache_dir()
        inside = self.cache / "planted-while-open"
        inside.mkdir()
        self._own(inside, self.nobody, 0o700)

    def symlink_inside(self) -> None:  # private, holding a link out to a directory anyone can write
        self._cache_dir()
        (self.cache / "out").symlink_to(self.planted)

    def cleanup(self) -> None:
        _make_removable(self.planted)
        shutil.rmtree(self.planted)


ATTACKS = [name for name in vars(Attacker) if not name.startswith("_") and name != "cleanup"]


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_cache_directory_another_account_could_write_is_refused(
    rig: SshdRig, home: Path, seeded_wordpress: TestWordPress, attack: str
) -> None:
    if os.geteuid() != 0:
        pytest.skip("preparing the login user's home as another account needs root")
    attacker = Attacker(rig, home)
    getattr(attacker, attack)()
    before = sorted(str(p) for p in attacker.planted.rglob("*"))
    wp, pool = _executor(rig)
    try:
        answer = wp.run(BLOGNAME)
        assert (answer.exit_code, answer.stdout) == (0, TITLE)
        launch = wp.php_launch()
        assert launch.reason is LaunchReason.UNSAFE_DIR, launch
        assert "opcache" not in wp.remote_command(BLOGNAME, launch)
        compiled = [p for p in (attacker.cache, attacker.planted) if p.is_dir() for _ in p.rglob("*.bin")]
        assert compiled == [], "PHP never used the refused directory"
        assert sorted(str(p) for p in attacker.planted.rglob("*")) == before, "nothing made through a link"
        doctor = {
            check.name: check for check in all_checks(rig.settings(anthropic_api_key="x"), lambda s: wp)
        }
        assert doctor["wp.php_launch"].ok
        assert doctor["wp.php_launch"].warning
        assert "安全でない" in doctor["wp.php_launch"].detail
    finally:
        pool.close_all()
        attacker.cleanup()


def test_a_home_the_user_cannot_write_runs_wp_as_configured(
    rig: SshdRig, home: Path, seeded_wordpress: TestWordPress
) -> None:
    if os.geteuid() != 0:
        pytest.skip("a home owned by another account needs root")
    login = _login_user(rig)
    os.chown(home, 0, 0)  # as www-data's /var/www often is
    try:
        wp, pool = _executor(rig)
        try:
            assert wp.run(BLOGNAME).stdout == TITLE
            launch = wp.php_launch()
            assert launch.reason is LaunchReason.NO_CACHE_DIR, launch
            doctor = {
                check.name: check for check in all_checks(rig.settings(anthropic_api_key="x"), lambda s: wp)
            }
            assert doctor["wp.php_launch"].ok
            assert "作成・書き込みできない" in doctor["wp.php_launch"].detail
            assert CACHE_DIR_BELOW_HOME in doctor["wp.php_launch"].warning
        finally:
            pool.close_all()
    finally:
        os.chown(home, login.pw_uid, login.pw_gid)


def test_what_changes_on_the_host_after_the_probe_is_seen_per_command(
    rig: SshdRig, home: Path, seeded_wordpress: TestWordPress
) -> None:
    wp, pool = _executor(rig)
    try:
        assert wp.run(BLOGNAME).stdout == TITLE
        assert wp.php_launch().cached
        # The cache directory removed: PHP would stop at start-up; the guard runs `wp` as configured.
        _make_removable(home / ".cache")
        shutil.rmtree(home / ".cache")
        answer = wp.run(BLOGNAME)
        assert (answer.exit_code, answer.stdout, answer.stderr) == (0, TITLE, "")
        assert not (home / ".cache").exists()
        # `wp` replaced by a shell wrapper (here the fault injector): the wrapper runs, not PHP on it.
        rig.set_fault("option get", error="from the wrapper", times=1)
        failed = wp.run(BLOGNAME)
        assert (failed.exit_code, failed.stderr.strip()) == (1, "Error: from the wrapper")
        rig.clear_faults()
        assert wp.run(BLOGNAME).stdout == TITLE
    finally:
        rig.clear_faults()
        pool.close_all()


def test_doctor_shows_how_php_starts(rig: SshdRig, home: Path, seeded_wordpress: TestWordPress) -> None:
    checks = {check.name: check for check in all_checks(rig.settings(anthropic_api_key="x"))}
    launch = checks["wp.php_launch"]
    assert launch.ok
    assert not launch.warning
    assert launch.detail.startswith("opcache のファイルキャッシュを使って PHP を起動します")
    assert str(home / CACHE_DIR_BELOW_HOME) in launch.detail
