"""Guarded code changes on a real WordPress served over loopback HTTP: a change that breaks the site is
taken back by itself and the site ends healthy; one that does not is kept; the report says which.

Plugins and themes are written for the test: one that fatals on the front end only, one in the dashboard
only, one that is fine, and a theme whose templates fatal. Each is changed through the guard exactly as
an approved command runs (executors/code_guard.py); the site is read directly afterwards.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.fakes.wordpress import TestWordPress
from wp_agent.executors.code_guard import GuardedWpCli
from wp_agent.executors.sandbox import SandboxWpCli
from wp_agent.sandbox.http_front import HttpFront

PLUGINS = {
    "wp-agent-front-fatal": "add_action( 'template_redirect', static function () { wp_agent_no_such_function(); } );",
    "wp-agent-admin-fatal": "add_action( 'admin_init', static function () { wp_agent_no_such_function(); } );",
    "wp-agent-fine": "add_action( 'wp_footer', static function () { echo '<!-- fine -->'; } );",
}
THEME = "wp-agent-broken-theme"


def _write(path: Path, text: str, owner: str) -> None:
    import shutil

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    for part in (path.parent, path):
        shutil.chown(part, owner)


@pytest.fixture
def guarded(fresh_wordpress: TestWordPress) -> Iterator[tuple[TestWordPress, GuardedWpCli, SandboxWpCli]]:
    site = fresh_wordpress.site
    content = Path(site.wordpress) / "wp-content"
    written = [content / "plugins" / slug for slug in PLUGINS] + [content / "themes" / THEME]
    for slug, code in PLUGINS.items():
        header = f"<?php\n/*\nPlugin Name: {slug}\nVersion: 1.0\n*/\n"
        _write(content / "plugins" / slug / f"{slug}.php", header + code + "\n", site.owner)
    _write(content / "themes" / THEME / "style.css", f"/*\nTheme Name: {THEME}\n*/\n", site.owner)
    _write(content / "themes" / THEME / "index.php", "<?php wp_agent_no_such_function();\n", site.owner)
    wp = SandboxWpCli(site)
    try:
        with HttpFront(site, workers=2) as front:

            @contextmanager
            def connect() -> Iterator[str | None]:
                yield f"127.0.0.1:{front.port}"

            yield fresh_wordpress, GuardedWpCli(wp, wp, connect=connect), wp
    finally:
        import shutil

        for path in written:
            shutil.rmtree(path, ignore_errors=True)


def active(wp: SandboxWpCli) -> set[str]:
    done = wp.run(["plugin", "list", "--status=active", "--field=name", "--skip-update-check"])
    return set(done.stdout.split())


def test_a_change_that_breaks_the_site_is_taken_back_one_it_survives_is_kept(
    guarded: tuple[TestWordPress, GuardedWpCli, SandboxWpCli],
) -> None:
    """One site, one front (the suite's time): broken changes taken back, then a fine one kept."""
    _, guard, wp = guarded
    before = active(wp)
    for slug, broken in (("wp-agent-front-fatal", "トップページ"), ("wp-agent-admin-fatal", "管理画面")):
        done = guard.run(["plugin", "activate", slug])
        assert done.exit_code == 1, done
        assert broken in done.stderr
        assert "戻しました" in done.stderr
        assert "サイトは変更前と同じく動いています" in done.stderr
        assert active(wp) == before  # read directly: as it was
    done = guard.run(["theme", "activate", THEME])
    assert done.exit_code == 1, done
    assert wp.run(["option", "get", "stylesheet"]).stdout.strip() != THEME


def test_a_change_the_site_survives_is_kept(
    guarded: tuple[TestWordPress, GuardedWpCli, SandboxWpCli],
) -> None:
    _, guard, wp = guarded
    done = guard.run(["plugin", "activate", "wp-agent-fine"])
    assert done.exit_code == 0, done
    assert "サイトは正常です" in done.stdout
    assert "wp-agent-fine" in active(wp)


def test_the_files_come_back_exactly(guarded: tuple[TestWordPress, GuardedWpCli, SandboxWpCli]) -> None:
    site, guard, _ = guarded
    main = Path(site.site.wordpress) / "wp-content" / "plugins" / "wp-agent-fine" / "wp-agent-fine.php"
    digest = hashlib.sha256(main.read_bytes()).hexdigest()
    snapshot = guard.on_server({"op": "snapshot", "plugins": ["wp-agent-fine", "wp-agent-new"]})
    backup = snapshot["backup"]
    assert Path(backup).stat().st_mode & 0o777 == 0o700
    assert not backup.startswith(str(site.site.wordpress))  # outside the web root
    main.write_text("<?php wp_agent_no_such_function();\n", encoding="utf-8")  # an update that broke it
    added = main.parent.parent / "wp-agent-new"
    _write(added / "wp-agent-new.php", "<?php\n", site.site.owner)  # installed by the change
    assert guard.on_server({"op": "restore_files", "backup": backup}, "--skip-wordpress")["restored"]
    assert hashlib.sha256(main.read_bytes()).hexdigest() == digest
    assert not added.exists()
    assert guard.on_server({"op": "discard", "backup": backup}) == {"discarded": True}
    assert not Path(backup).exists()
    assert "error" in guard.on_server({"op": "discard", "backup": "/etc"})  # only its own backups
    assert "error" in guard.on_server({"op": "restore_files", "backup": "/tmp"}, "--skip-wordpress")


def test_a_backup_left_by_a_change_stopped_midway_is_reported_by_the_probe(
    guarded: tuple[TestWordPress, GuardedWpCli, SandboxWpCli],
) -> None:
    """Killed between the backup and the change's end: the backup stays (it is the way back) and every
    later probe — the doctor's, the next guarded change's — names it after an hour."""
    import os

    from tests.fakes.clock import site_now
    from wp_agent.executors.site_health import probe

    site, guard, wp = guarded
    backup = guard.on_server({"op": "snapshot", "plugins": ["wp-agent-fine"]})["backup"]
    try:
        assert not probe(wp, wp).leftovers  # a change under way is not a leftover
        two_hours_ago = site_now(site.site).timestamp() - 7200  # by the server's clock, as PHP judges it
        os.utime(backup, (two_hours_ago, two_hours_ago))
        [left] = probe(wp, wp).leftovers
        assert backup in left
        assert "plugins:wp-agent-fine" in left
    finally:
        assert guard.on_server({"op": "discard", "backup": backup}) == {"discarded": True}


def test_a_change_on_a_site_whose_database_is_down_is_not_made_and_says_why(
    guarded: tuple[TestWordPress, GuardedWpCli, SandboxWpCli],
) -> None:
    """Nothing can be saved to go back to: the change is not made, and the reason is WP-CLI's own."""
    site, guard, wp = guarded
    before = (Path(site.path) / "wp-content" / "plugins" / "wp-agent-fine" / "wp-agent-fine.php").read_bytes()
    wp.prepare()  # (prepared, the sandbox's executor does not start the database again)
    site.site.stop()
    try:
        result = guard.run(["plugin", "activate", "wp-agent-fine"])
    finally:
        site.site.start()
    assert result.exit_code == 1
    assert "変更前の状態を保存できなかったため、変更を実行しませんでした" in result.stderr
    assert "database" in result.stderr.lower()  # WP-CLI's reason, not an empty pair of brackets
    assert "wp-agent-fine" not in active(wp)
    assert (
        Path(site.path) / "wp-content" / "plugins" / "wp-agent-fine" / "wp-agent-fine.php"
    ).read_bytes() == before
