"""The sandbox's pieces that need no WordPress: file syncing, the socket directory, the seed plan.
(The sandbox itself, on a real WordPress and MariaDB, is tested in tests/integration/test_sandbox.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wp_agent.sandbox import SandboxError, seed
from wp_agent.sandbox.files import sync_tree, wordpress_file_filter
from wp_agent.sandbox.mariadb import MariaDb


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): (f"-> {os.readlink(p)}" if p.is_symlink() else p.read_text())
        for p in sorted(root.rglob("*"))
        if p.is_file() or p.is_symlink()
    }


def test_sync_tree_makes_the_target_equal_to_the_source(tmp_path: Path) -> None:
    source, target = tmp_path / "source", tmp_path / "target"
    (source / "wp-content" / "themes").mkdir(parents=True)
    (source / "index.php").write_text("<?php // index")
    (source / "wp-content" / "themes" / "style.css").write_text("body {}")
    (source / "link").symlink_to("/usr/share/php/getid3")
    assert sync_tree(source, target) == 5  # two directories, two files, one link
    assert _tree(target) == _tree(source)
    assert sync_tree(source, target) == 0  # nothing to do the second time

    (target / "index.php").write_text("<?php // changed by a test")
    (target / "wp-content" / "plugins" / "new").mkdir(parents=True)
    (target / "wp-config.php").write_text("<?php // ours")
    (target / "link").unlink()
    (target / "link").write_text("not a link any more")
    sync_tree(source, target, keep=lambda relative: relative == "wp-config.php")
    assert _tree(target) == {**_tree(source), "wp-config.php": "<?php // ours"}
    assert not (target / "wp-content" / "plugins").exists()


def test_only_japanese_language_files_and_never_debians_config() -> None:
    assert wordpress_file_filter("wp-content/languages/ja.mo")
    assert wordpress_file_filter("wp-content/languages/admin-network-ja.mo")
    assert not wordpress_file_filter("wp-content/languages/de_DE.mo")
    assert not wordpress_file_filter("wp-content/languages/admin-ja_JP-x.mo")
    assert not wordpress_file_filter("wp-config.php")  # Debian's reads /etc/wordpress
    assert not wordpress_file_filter("wp-content/uploads")
    assert wordpress_file_filter("wp-includes/version.php")


def test_the_socket_fits_sockaddr_un_and_a_planted_directory_is_refused(tmp_path: Path) -> None:
    assert MariaDb(tmp_path / "sb").socket == tmp_path / "sb" / "mariadb.sock"
    deep = MariaDb(tmp_path / ("d" * 120))
    assert len(str(deep.socket)) <= 100
    assert deep.socket.parent.name.startswith("wp-agent-db-")
    deep.socket.parent.mkdir(mode=0o777)
    deep.socket.parent.chmod(0o777)  # someone else's, writable by all: never adopted
    try:
        with pytest.raises(SandboxError) as caught:
            deep._prepare_socket_dir()
        assert caught.value.cause == "mariadb_socket"
    finally:
        deep.socket.parent.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    deep.socket.parent.symlink_to(elsewhere)  # a planted link is refused too
    try:
        with pytest.raises(SandboxError):
            deep._prepare_socket_dir()
    finally:
        deep.socket.parent.unlink()
    deep._prepare_socket_dir()  # made by us: used
    assert deep.socket.parent.stat().st_mode & 0o777 == 0o700
    deep.socket.parent.rmdir()


def test_the_seed_plan_is_real_wp_cli_with_fixed_ids_first() -> None:
    plan = seed.plan("/media", ["wp"])
    steps = plan["steps"]
    creates = [s for s in steps if s["argv"][:2] == ["post", "create"] and s["blog"] == 1]
    ids = [int(next(a for a in s["argv"] if a.startswith("--import_id=")).split("=")[1]) for s in creates]
    assert ids == sorted(ids)
    first_automatic = next(
        i for i, s in enumerate(steps) if s["argv"][:2] in (["post", "update"], ["media", "import"])
    )
    assert steps.index(creates[-1]) < first_automatic  # revisions and uploads take IDs only afterwards
    assert seed.SEED_FACTS["missing_post_id"] not in ids
    # WordPress's own command code builds everything: no SQL, no PHP of ours. Commands that end the
    # WP-CLI process (update, delete) or need the newly activated theme run as their own process.
    own_process = {("post", "update"), ("post", "delete"), ("menu", "location")}
    for step in steps:
        assert step["argv"][0] not in {"db", "eval", "eval-file", "shell"}, step["argv"]
        assert step["launch"] is (tuple(step["argv"][:2]) in own_process)
    assert seed.fingerprint() == seed.fingerprint()


def test_a_stale_pid_file_never_stops_another_process(tmp_path: Path) -> None:
    """The server was killed outright and its pid now belongs to someone else: stop leaves it alone."""
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        server = MariaDb(tmp_path / "db")
        server.home.mkdir()
        server.pid_file.write_text(f"{bystander.pid}\n", encoding="utf-8")
        assert server.stop() is False
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()
