"""Issue 36: the WordPress release the sandbox runs (wp_agent/sandbox/release.py): chosen by
WP_AGENT_WORDPRESS, fetched from Debian's archive with apt's own signature checks (never the system's
packages), its links into other packages resolved inside its own root, and a clear Japanese fallback
when the archive cannot be reached or cannot be trusted."""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.network import closed_loopback_port
from tests.fakes.wordpress import TestWordPress
from tests.fakes.wordpress_fixtures import CURRENT, OLDER
from wp_agent.cli import sandbox as sandbox_cli
from wp_agent.sandbox import SandboxError, SandboxSite, release
from wp_agent.sandbox.files import sync_tree


def _fake_release(directory: Path, version: str = "7.9.9") -> Path:
    tree = directory / "root" / "usr" / "share" / "wordpress" / "wp-includes"
    tree.mkdir(parents=True)
    (tree / "version.php").write_text(f"<?php\n$wp_version = '{version}';\n", encoding="utf-8")
    record = {"origin": "テスト", "packages": {"wordpress": f"{version}+dfsg1-1"}}
    (directory / "release.json").write_text(json.dumps(record), encoding="utf-8")
    return directory


def test_the_environment_chooses_the_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = tmp_path / "prefix"
    _fake_release(prefix / "releases" / "7.9.9+dfsg1-1")
    monkeypatch.delenv(release.RELEASE_ENV, raising=False)
    assert release.chosen_release(prefix).tree == release.system_release().tree  # nothing fetched yet
    (prefix / "current").write_text("7.9.9+dfsg1-1\n", encoding="utf-8")
    assert release.chosen_release(prefix).version == "7.9.9"
    monkeypatch.setenv(release.RELEASE_ENV, "current")
    assert release.chosen_release(prefix).version == "7.9.9"
    monkeypatch.setenv(release.RELEASE_ENV, "system")
    assert release.chosen_release(prefix).tree == Path("/usr/share/wordpress")
    other = _fake_release(tmp_path / "other", "7.0.1")
    monkeypatch.setenv(release.RELEASE_ENV, str(other))
    assert release.chosen_release(prefix).describe_ja() == "WordPress 7.0.1（テスト）"
    monkeypatch.setenv(release.RELEASE_ENV, str(tmp_path))
    with pytest.raises(SandboxError) as refused:
        release.chosen_release(prefix)
    assert refused.value.cause == "wordpress_release"
    assert "release.json" in refused.value.message_ja


@pytest.mark.parametrize(
    ("debian", "upstream"),
    [("7.1.4+dfsg1-1", "7.1.4"), ("7.0.3+dfsg1-1", "7.0.3"), ("1:7.2-1", "7.2"), ("7.2~rc1-1", "7.2~rc1")],
)
def test_the_upstream_version_is_read_from_debians(debian: str, upstream: str) -> None:
    assert release._upstream(debian) == upstream


def test_links_out_of_the_tree_are_copied_from_the_releases_own_root(tmp_path: Path) -> None:
    """Debian's package links into PHPMailer (relative) and the CA bundle (absolute): the copy holds
    the files of the release's root, not links that would break (or lead into the system's files)."""
    root = tmp_path / "root"
    tree = root / "usr" / "share" / "wordpress"
    (tree / "wp-includes" / "PHPMailer").mkdir(parents=True)
    (root / "usr" / "share" / "php" / "mailer").mkdir(parents=True)
    (root / "usr" / "share" / "php" / "mailer" / "PHPMailer.php").write_text(
        "<?php // the release's", "utf-8"
    )
    (root / "etc" / "ssl" / "certs").mkdir(parents=True)
    (root / "etc" / "ssl" / "certs" / "bundle.crt").write_text("the release's bundle", "utf-8")
    (tree / "wp-includes" / "PHPMailer" / "PHPMailer.php").symlink_to("../../../php/mailer/PHPMailer.php")
    (tree / "wp-includes" / "bundle.crt").symlink_to("/etc/ssl/certs/bundle.crt")
    (tree / "wp-includes" / "load.php").write_text("<?php // in the tree", "utf-8")
    (tree / "wp-includes" / "inside.php").symlink_to("load.php")
    (tree / "wp-includes" / "broken.php").symlink_to("../../nowhere.php")
    target = tmp_path / "site"
    sync_tree(tree, target, links_root=root)
    mailer = target / "wp-includes" / "PHPMailer" / "PHPMailer.php"
    assert not mailer.is_symlink()
    assert mailer.read_text("utf-8") == "<?php // the release's"
    bundle = target / "wp-includes" / "bundle.crt"
    assert not bundle.is_symlink()
    assert bundle.read_text("utf-8") == "the release's bundle"
    assert os.readlink(target / "wp-includes" / "inside.php") == "load.php"  # inside the tree: a link
    assert (target / "wp-includes" / "broken.php").is_symlink()
    # A second sync changes nothing; a changed library is copied again.
    assert sync_tree(tree, target, links_root=root) == 0
    (root / "usr" / "share" / "php" / "mailer" / "PHPMailer.php").write_text("<?php // updated", "utf-8")
    assert sync_tree(tree, target, links_root=root) == 1
    assert mailer.read_text("utf-8") == "<?php // updated"


def test_a_sandbox_whose_release_is_missing_says_so_in_japanese(tmp_path: Path) -> None:
    missing = release.WordPressRelease(tmp_path / "no-wordpress", tmp_path, "テスト")
    site = SandboxSite(tmp_path / "sandbox", release=missing)
    assert "WordPress: 未導入" in site.status().lines_ja()  # status reads nothing of the release
    with pytest.raises(SandboxError) as refused:
        site.start()
    assert refused.value.cause == "wordpress_missing"
    assert str(tmp_path / "no-wordpress") in refused.value.message_ja


def test_an_unreachable_archive_is_said_and_the_sandbox_keeps_what_it_had(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(release.MIRROR_ENV, f"http://127.0.0.1:{closed_loopback_port()}/debian")
    monkeypatch.setattr(release, "PREFIX", tmp_path / "prefix")
    with pytest.raises(SandboxError) as failed:
        release.fetch_release(lambda _line: None)
    assert failed.value.cause == "archive_unreachable"
    assert "取得できませんでした" in failed.value.message_ja
    assert not (tmp_path / "prefix" / "current").exists()
    said: list[str] = []
    sandbox_cli._fetch_wordpress(said.append)  # what `wp-agent sandbox install` says, and goes on
    assert f"サンドボックスは {release.system_release().describe_ja()}で動かします" in said[-1]
    # With a release fetched before, that one stays in use.
    _fake_release(tmp_path / "prefix" / "releases" / "7.9.9+dfsg1-1")
    (tmp_path / "prefix" / "current").write_text("7.9.9+dfsg1-1\n", encoding="utf-8")
    sandbox_cli._fetch_wordpress(said.append)
    assert "サンドボックスは WordPress 7.9.9（テスト）で動かします" in said[-1]


@pytest.fixture
def unsigned_archive(tmp_path: Path) -> Iterator[str]:
    """A Debian-shaped archive on loopback whose Release file carries no signature (a mirror that was
    tampered with, or a man in the middle that dropped the signature)."""
    base = tmp_path / "archive"
    packages = base / "dists" / "unstable" / "main" / "binary-amd64"
    packages.mkdir(parents=True)
    stanza = (
        "Package: wordpress\nVersion: 9.9.9-1\nArchitecture: all\nFilename: pool/w.deb\nSize: 1\nSHA256: 00\n"
    )
    (packages / "Packages.gz").write_bytes(gzip.compress(stanza.encode()))
    digest = hashlib.sha256((packages / "Packages.gz").read_bytes()).hexdigest()
    size = (packages / "Packages.gz").stat().st_size
    (base / "dists" / "unstable" / "Release").write_text(
        "Suite: unstable\nCodename: sid\nArchitectures: amd64\nComponents: main\n"
        f"SHA256:\n {digest} {size} main/binary-amd64/Packages.gz\n",
        encoding="ascii",
    )

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(base)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_an_archive_without_a_valid_signature_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unsigned_archive: str
) -> None:
    monkeypatch.setenv(release.MIRROR_ENV, unsigned_archive)
    with pytest.raises(SandboxError) as refused:
        release.fetch_release(lambda _line: None, tmp_path / "prefix")
    assert "not signed" in refused.value.log or "NO_PUBKEY" in refused.value.log, refused.value.log
    assert not (tmp_path / "prefix" / "releases").exists()  # nothing unpacked, nothing made current


@pytest.mark.skipif(CURRENT.tree == OLDER.tree, reason="no WordPress release fetched (the system's runs)")
def test_the_fetched_release_is_what_the_sandbox_runs(seeded_wordpress: TestWordPress) -> None:
    site = seeded_wordpress
    assert site.wp("core", "version").stdout.strip() == CURRENT.version
    assert int(CURRENT.version.split(".")[0]) >= release.MAJOR
    recorded = json.loads((CURRENT.root.parent / "release.json").read_text(encoding="utf-8"))
    assert set(recorded["packages"]) == set(release.PACKAGES)
    # The package's links resolved inside the release: its PHPMailer and getID3 load, its CA bundle
    # (every certificate of its ca-certificates) is where WordPress looks.
    code = (
        "require_once ABSPATH . WPINC . '/PHPMailer/PHPMailer.php';"
        "require_once ABSPATH . WPINC . '/ID3/getid3.php';"
        "echo PHPMailer\\PHPMailer\\PHPMailer::VERSION, ' ', class_exists('getID3') ? 'getid3' : '-', ' ',"
        "substr_count(file_get_contents(ABSPATH . WPINC . '/certificates/ca-bundle.crt'), 'BEGIN CERTIFICATE');"
    )
    done = site.wp("eval", code)
    assert done.returncode == 0, done.stderr
    mailer, getid3, certificates = done.stdout.split()
    assert mailer == recorded["packages"]["libphp-phpmailer"].split("-")[0]
    assert getid3 == "getid3"
    assert int(certificates) > 100
    themes = {t["name"] for t in site.wp_json("theme", "list")}
    assert {"twentytwentyfive", "twentytwentyfour", "twentytwentythree"} <= themes  # the current defaults
