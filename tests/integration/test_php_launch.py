"""How local WP-CLI is started (executors/php_launch.py) against real sh, PHP, the real WP-CLI phar and
the tests' WordPress: the cache is used only where it is private and the program is the same, and
every way it can go wrong runs `wp` as configured with the same answer."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.wordpress import TestWordPress
from wp_agent.cli.doctor import all_checks
from wp_agent.config import CliSettings, WpCliMode
from wp_agent.executors.local import LocalWpCli
from wp_agent.executors.php_launch import CACHE_DIR_BELOW_HOME, LaunchReason, opcache_flags
from wp_agent.sandbox.wp_cli import verified_phar

BLOGNAME = ["option", "get", "blogname"]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (another owner, mounts)")


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    """A home and a bin/ with the plain phar as `wp` (0755 all the way, as a person's home)."""
    (tmp_path / "home").mkdir(mode=0o755)
    (tmp_path / "bin").mkdir(mode=0o755)
    tmp_path.chmod(0o755)
    shutil.copyfile(verified_phar(), tmp_path / "bin" / "wp")
    (tmp_path / "bin" / "wp").chmod(0o755)
    return tmp_path


def _local(bench: Path, wordpress: TestWordPress, wp_cli_bin: str = "wp", **env: str) -> LocalWpCli:
    environment = {
        "HOME": str(bench / "home"),
        "PATH": f"{bench / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        **env,
    }
    return LocalWpCli(
        wordpress.path, wp_cli_bin=wp_cli_bin, env=environment, opcache=True, timeout_seconds=60
    )


def _cache(bench: Path) -> Path:
    return bench / "home" / CACHE_DIR_BELOW_HOME


def test_a_plain_phar_runs_through_php_with_a_private_cache(
    bench: Path, seeded_wordpress: TestWordPress
) -> None:
    wp = _local(bench, seeded_wordpress)
    launch = wp.php_launch()
    assert launch.reason is LaunchReason.OPCACHE, launch.detail
    assert launch.program == ("/usr/bin/env", "php")
    assert launch.script == str(bench / "bin" / "wp")
    cache = _cache(bench)
    assert launch.cache_dir == str(cache)
    for directory in (cache, cache.parent, cache.parent.parent):
        assert (directory.stat().st_mode & 0o777) == 0o700
        assert directory.stat().st_uid == os.geteuid()
    answer = wp.run(BLOGNAME)
    assert (answer.exit_code, answer.stdout, answer.stderr) == (0, "Argo Note サンプルサイト\n", "")
    assert wp.command_line(BLOGNAME, launch)[: len(launch.php_argv())] == launch.php_argv()
    assert any(cache.rglob("*.bin")), "PHP wrote its compiled files into the cache"
    # The same answer as `wp` as configured.
    plain = LocalWpCli(seeded_wordpress.path, wp_cli_bin=str(bench / "bin" / "wp"), env={"HOME": str(bench)})
    assert plain.php_launch().reason is LaunchReason.DISABLED
    assert plain.run(BLOGNAME).stdout == answer.stdout


@pytest.mark.parametrize("opcache", [True, False])
def test_doctor_shows_the_local_choice_and_the_setting_turns_it_off(
    bench: Path, seeded_wordpress: TestWordPress, monkeypatch: pytest.MonkeyPatch, opcache: bool
) -> None:
    """WP_CLI_MODE=local built from the settings, as `wp-agent doctor` builds it."""
    monkeypatch.setenv("HOME", str(bench / "home"))
    monkeypatch.setenv("PATH", f"{bench / 'bin'}:/usr/local/bin:/usr/bin:/bin")
    settings = CliSettings(
        anthropic_api_key="x",
        wp_cli_mode=WpCliMode.LOCAL,
        wp_local_path=seeded_wordpress.path,
        wp_agent_opcache=opcache,
    )
    checks = {check.name: check for check in all_checks(settings)}
    launch = checks["wp.php_launch"]
    assert launch.ok
    assert not launch.warning
    if opcache:
        assert launch.detail.startswith("opcache のファイルキャッシュを使って PHP を起動します")
        assert str(_cache(bench)) in launch.detail
    else:
        assert launch.detail.startswith("WP_AGENT_OPCACHE=false のため")
        assert not _cache(bench).exists()


def test_php_named_in_wp_cli_bin_keeps_the_operators_options(
    bench: Path, seeded_wordpress: TestWordPress
) -> None:
    phar = bench / "bin" / "wp"
    wp = _local(bench, seeded_wordpress, f"php -d memory_limit=300M {phar}")
    launch = wp.php_launch()
    assert launch.reason is LaunchReason.OPCACHE, launch.detail
    assert launch.php_argv() == [
        "php",
        *opcache_flags(launch.cache_dir),
        "-d",
        "memory_limit=300M",
        str(phar),
    ]
    assert wp.run(BLOGNAME).stdout == "Argo Note サンプルサイト\n"
    # The operator's own opcache settings win: then PHP starts as configured.
    off = _local(bench, seeded_wordpress, f"php -d opcache.enable=0 {phar}")
    assert off.php_launch().reason is LaunchReason.OPCACHE_OFF
    elsewhere = _local(bench, seeded_wordpress, f"php -d opcache.file_cache=/tmp {phar}")
    assert elsewhere.php_launch().reason is LaunchReason.OPCACHE_OFF
    # Without php.ini there is no opcache (Debian loads it from there).
    assert _local(bench, seeded_wordpress, f"php -n {phar}").php_launch().reason is LaunchReason.NO_OPCACHE


def test_wrappers_scripts_and_missing_php_run_as_configured(
    bench: Path, seeded_wordpress: TestWordPress
) -> None:
    wrapper = bench / "bin" / "wp-wrapper"
    wrapper.write_text(f'#!/bin/sh\nexec php {bench / "bin" / "wp"} "$@"\n')
    wrapper.chmod(0o755)
    wp = _local(bench, seeded_wordpress, "wp-wrapper")
    assert wp.php_launch().reason is LaunchReason.NOT_PHP
    assert wp.run(BLOGNAME).stdout == "Argo Note サンプルサイト\n"
    assert not _cache(bench).exists()

    script = bench / "bin" / "wp-script"
    script.write_text("#!/usr/bin/env php\n<?php echo 'not wp-cli';\n")
    script.chmod(0o755)
    assert _local(bench, seeded_wordpress, "wp-script").php_launch().reason is LaunchReason.NOT_PHAR
    assert _local(bench, seeded_wordpress, "no-such-wp").php_launch().reason is LaunchReason.NOT_FOUND
    # `#!/usr/bin/env php` with no php on PATH: the kernel could not start it either.
    tools = bench / "tools"
    tools.mkdir()
    for tool in ("id", "timeout"):
        (tools / tool).symlink_to(shutil.which(tool) or tool)
    no_php = _local(bench, seeded_wordpress, PATH=f"{bench / 'bin'}:{tools}")
    assert no_php.php_launch().reason is LaunchReason.NOT_FOUND


def test_the_shebangs_php_runs_not_the_one_first_on_path(
    bench: Path, tmp_path: Path, seeded_wordpress: TestWordPress
) -> None:
    """A phar whose `#!` names a PHP binary is started with that binary, with the cache."""
    php = Path(os.path.realpath(shutil.which("php") or "php"))
    tiny = bench / "bin" / "tiny.phar"
    build = (
        "$p = new Phar($argv[1]); $p->addFromString('main.php', '<?php echo PHP_BINARY, \"|\", "
        'ini_get("opcache.file_cache"), "\\n";\');'
        f"$p->setStub(\"#!{php}\\n<?php Phar::mapPhar(); include 'phar://' . __FILE__ . '/main.php'; __HALT_COMPILER();\");"
    )
    subprocess.run(["php", "-d", "phar.readonly=0", "-r", build, str(tiny)], check=True)
    tiny.rename(bench / "bin" / "tiny")
    tiny = bench / "bin" / "tiny"
    tiny.chmod(0o755)
    decoy = bench / "bin" / "php"  # first on PATH: must not be what runs the phar
    decoy.write_text("#!/bin/sh\necho decoy\n")
    decoy.chmod(0o755)
    wp = _local(bench, seeded_wordpress, "tiny")
    launch = wp.php_launch()
    assert launch.reason is LaunchReason.OPCACHE, launch.detail
    assert launch.program == (str(php),)
    assert wp.run([]).stdout == f"{php}|{_cache(bench)}\n"


@pytest.mark.parametrize(
    "prepare",
    [
        pytest.param(lambda cache: (cache.mkdir(parents=True), cache.chmod(0o755)), id="reachable-by-others"),
        pytest.param(lambda cache: (cache.parent.mkdir(parents=True), cache.parent.chmod(0o777)),
                     id="ancestor-writable-by-others"),
        pytest.param(lambda cache: (cache.parent.mkdir(parents=True), cache.write_text("")), id="a-file"),
        pytest.param(lambda cache: _symlink(cache, private=True), id="symlink-to-a-private-dir"),
        pytest.param(lambda cache: _symlink(cache, private=False), id="symlink-to-a-shared-dir"),
        pytest.param(lambda cache: _inside(cache, "link"), id="a-link-inside-to-a-shared-dir"),
        pytest.param(lambda cache: _inside(cache, "open-dir"), id="a-directory-inside-others-can-write"),
        pytest.param(lambda cache: _inside(cache, "open-file"), id="a-file-inside-others-can-write"),
    ],
)  # fmt: skip
def test_an_unsafe_cache_directory_is_never_used(
    bench: Path, seeded_wordpress: TestWordPress, prepare: object
) -> None:
    cache = _cache(bench)
    prepare(cache)  # type: ignore[operator]
    before = _tree(bench)
    wp = _local(bench, seeded_wordpress)
    launch = wp.php_launch()
    assert launch.reason is LaunchReason.UNSAFE_DIR, launch
    assert "安全でない" in launch.describe_ja()
    assert wp.run(BLOGNAME).stdout == "Argo Note サンプルサイト\n"
    assert _tree(bench) == before, "nothing was written into or next to the refused directory"


@ROOT_ONLY
@pytest.mark.parametrize("theirs", ["the-directory", "an-ancestor", "an-entry-inside"])
def test_a_directory_another_account_prepared_is_refused(
    bench: Path, seeded_wordpress: TestWordPress, theirs: str
) -> None:
    nobody = pwd.getpwnam("nobody")
    cache = _cache(bench)
    cache.mkdir(parents=True, mode=0o700)
    for directory in (cache, cache.parent, cache.parent.parent):
        directory.chmod(0o700)
    owned = {
        "the-directory": cache,  # private, but not ours
        "an-ancestor": cache.parent.parent,  # ~/.cache: they could swap what is below
        "an-entry-inside": cache / "planted",  # written while the directory was open: PHP would load it
    }[theirs]
    owned.mkdir(mode=0o700, exist_ok=True)
    os.chown(owned, nobody.pw_uid, nobody.pw_gid)
    before = _tree(bench)
    wp = _local(bench, seeded_wordpress)
    assert wp.php_launch().reason is LaunchReason.UNSAFE_DIR
    assert wp.run(BLOGNAME).ok
    assert _tree(bench) == before


@ROOT_ONLY
def test_a_link_of_another_account_on_the_way_is_followed_once(
    bench: Path, seeded_wordpress: TestWordPress
) -> None:
    """HOME reached through a link another account owns in a sticky directory (as /tmp): the cache is
    the private directory it resolved to; re-pointing the link later changes nothing."""
    nobody = pwd.getpwnam("nobody")
    sticky = bench / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    theirs = sticky / "theirs"
    theirs.mkdir(mode=0o777)
    theirs.chmod(0o777)
    os.chown(theirs, nobody.pw_uid, nobody.pw_gid)
    link = sticky / "home"
    link.symlink_to(bench / "home")
    os.chown(link, nobody.pw_uid, nobody.pw_gid, follow_symlinks=False)
    wp = _local(bench, seeded_wordpress, HOME=str(link))
    launch = wp.php_launch()
    assert launch.reason is LaunchReason.OPCACHE, launch.detail
    assert launch.cache_dir == str(_cache(bench))
    link.unlink()
    link.symlink_to(theirs)  # as they could: the link is theirs
    assert wp.run(BLOGNAME).stdout == "Argo Note サンプルサイト\n"
    assert list(theirs.iterdir()) == []
    assert any(_cache(bench).rglob("*.bin"))


def test_a_home_that_does_not_exist_is_not_created(bench: Path, seeded_wordpress: TestWordPress) -> None:
    """As `nobody`'s /nonexistent: only the cache below an existing home is ever made (we run as root)."""
    wp = _local(bench, seeded_wordpress, HOME=str(bench / "nonexistent"))
    launch = wp.php_launch()
    assert launch.reason is LaunchReason.NO_CACHE_DIR, launch
    assert "ホームディレクトリがありません" in launch.describe_ja()
    assert wp.run(BLOGNAME).stdout == "Argo Note サンプルサイト\n"
    assert not (bench / "nonexistent").exists()


def test_a_cache_directory_removed_later_falls_back_per_command(
    bench: Path, seeded_wordpress: TestWordPress
) -> None:
    wp = _local(bench, seeded_wordpress)
    assert wp.php_launch().cached
    shutil.rmtree(bench / "home" / ".cache")
    assert wp.run(BLOGNAME).stdout == "Argo Note サンプルサイト\n"
    assert not (bench / "home" / ".cache").exists()  # not re-created behind the probe's back


def test_php_refusing_the_cache_at_start_up_reruns_the_command_as_configured(
    bench: Path, seeded_wordpress: TestWordPress, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The directory vanishes between the guard and PHP's start: PHP ran nothing, so it runs again."""
    wp = _local(bench, seeded_wordpress)
    launch = wp.php_launch()
    assert launch.cached
    monkeypatch.setattr(type(launch), "guard_holds_here", lambda self: True)
    shutil.rmtree(bench / "home" / ".cache")
    answer = wp.run(BLOGNAME)
    assert (answer.exit_code, answer.stdout) == (0, "Argo Note サンプルサイト\n")
    assert wp.php_launch().reason is LaunchReason.STARTUP_REFUSED
    assert wp.run(BLOGNAME).stdout == "Argo Note サンプルサイト\n"


@ROOT_ONLY
@pytest.mark.parametrize("options", ["noexec", "size=64k"], ids=["noexec", "full-disk"])
def test_a_noexec_or_full_cache_disk_still_answers(
    bench: Path, seeded_wordpress: TestWordPress, options: str
) -> None:
    cache_root = bench / "home" / ".cache"
    cache_root.mkdir(mode=0o700)
    with _tmpfs(cache_root, f"{options},mode=0700,uid={os.geteuid()}"):
        wp = _local(bench, seeded_wordpress)
        assert wp.php_launch().cached
        for _ in range(3):  # compiles (or fails to store), then reads what was stored
            answer = wp.run(["post", "get", "45", "--field=post_title"])
            assert (answer.exit_code, answer.stderr) == (0, ""), answer.stderr
            assert answer.stdout.strip()


def _symlink(cache: Path, *, private: bool) -> None:
    target = cache.parent.parent / ("private-target" if private else "shared-target")
    target.mkdir(parents=True, mode=0o700 if private else 0o777)
    target.chmod(0o700 if private else 0o777)
    cache.parent.mkdir(parents=True, mode=0o700)
    cache.symlink_to(target)


def _inside(cache: Path, what: str) -> None:
    """A private cache directory holding something others could write (planted while it was open)."""
    cache.mkdir(parents=True, mode=0o700)
    cache.chmod(0o700)
    entry = cache / "entry"
    if what == "link":
        shared = cache.parent.parent / "shared-target"
        shared.mkdir(mode=0o777)
        shared.chmod(0o777)
        entry.symlink_to(shared)
    elif what == "open-dir":
        entry.mkdir(mode=0o777)
        entry.chmod(0o777)
    else:
        entry.write_text("")
        entry.chmod(0o666)


def _tree(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.lstat().st_mode) for p in root.rglob("*"))


@contextlib.contextmanager
def _tmpfs(where: Path, options: str) -> Iterator[None]:
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], check=True)
    try:
        yield
    finally:
        subprocess.run(["umount", str(where)], check=True)
