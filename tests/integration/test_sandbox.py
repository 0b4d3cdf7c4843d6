"""The sandbox (WP_CLI_MODE=sandbox) is a real WordPress: real WP-CLI on Debian's WordPress and a private
MariaDB, seeded with the Japanese sample network, reset from its dump, labelled as the sandbox."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import venv
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.network import closed_loopback_port
from tests.fakes.wordpress_fixtures import sandbox_environment
from wp_agent.cli.main import main
from wp_agent.config import CliSettings
from wp_agent.executors.code_guard import unguarded
from wp_agent.executors.factory import build_wp_cli
from wp_agent.executors.sandbox import SandboxWpCli
from wp_agent.sandbox import SandboxError, SandboxSite, wp_cli
from wp_agent.sandbox.http_front import HttpFront
from wp_agent.sandbox.release import MIRROR_ENV, WordPressRelease, chosen_release, system_release
from wp_agent.sandbox.seed import COMMENTS, MEDIA, MENUS, SITES, USERS
from wp_agent.sandbox.wp_cli import PHAR_ENV, pinned_sha512, verified_phar


@pytest.fixture
def sandbox(cli_sandbox: SandboxSite) -> SandboxWpCli:
    settings = CliSettings(wp_cli_mode="sandbox", wp_agent_sandbox_site=cli_sandbox.home)
    wp = unguarded(build_wp_cli(settings))
    assert isinstance(wp, SandboxWpCli)
    return wp


def _json(wp: SandboxWpCli, *argv: str) -> Any:
    result = wp.run([*argv, "--format=json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _field(wp: SandboxWpCli, *argv: str) -> str:
    result = wp.run(list(argv))
    assert result.exit_code == 0, result.stderr
    return result.stdout.strip()


def test_real_wp_cli_on_debians_wordpress(sandbox: SandboxWpCli) -> None:
    assert sandbox.simulated is True  # answers are labelled as the sandbox's
    assert _field(sandbox, "cli", "version") == "WP-CLI 2.10.0"
    assert _field(sandbox, "core", "version") == _debian_wordpress_version()
    missing = sandbox.run(["post", "get", "987654"])
    assert (missing.exit_code, missing.stderr) == (1, "Error: Could not find the post with ID 987654.\n")


def test_the_seeded_japanese_network(sandbox: SandboxWpCli, cli_sandbox: SandboxSite) -> None:
    facts = cli_sandbox.facts()
    assert _field(sandbox, "option", "get", "blogname") == "Argo Note サンプルサイト"
    assert _field(sandbox, "option", "get", "WPLANG") == "ja"
    assert _field(sandbox, "post", "list", "--post_status=draft", "--format=ids") == " ".join(
        str(i) for i in sorted(facts["draft_post_ids"], reverse=True)
    )
    pages = _json(sandbox, "post", "list", "--post_type=page", "--post_status=any", "--fields=ID")
    assert sorted(p["ID"] for p in pages) == facts["page_ids"]
    roles = {u["user_login"]: u["roles"] for u in _json(sandbox, "user", "list", "--fields=user_login,roles")}
    assert roles == {"admin": "administrator", **{u.login: u.role for u in USERS}}
    assert {c["slug"] for c in _json(sandbox, "term", "list", "category", "--fields=slug")} >= {"news", "seo"}
    assert {m["slug"] for m in _json(sandbox, "menu", "list", "--fields=slug")} == {m[0] for m in MENUS}
    assigned = {row["location"] for row in _json(sandbox, "menu", "location", "list")}
    assert assigned == {location for _, _, location, _ in MENUS}
    comments = _json(
        sandbox, "comment", "list", "--status=all", "--fields=comment_ID"
    )  # "all": not spam, trash
    assert len(comments) == 1 + len([c for c in COMMENTS if c.approved in {"0", "1"}])  # + WordPress's own
    sites = _json(sandbox, "site", "list", "--fields=url")
    assert [s["url"] for s in sites] == [f"https://example.test{path}" for path, *_ in SITES.values()]
    assert (
        _field(sandbox, "option", "get", "blogname", "--url=https://example.test/en/") == "Argo Note English"
    )
    # Media are real files WordPress made (with its resized copies).
    uploads = cli_sandbox.wordpress / "wp-content" / "uploads"
    for media in MEDIA:
        attachment = facts["attachment_ids"][media.title]
        attached = _field(sandbox, "post", "meta", "get", str(attachment), "_wp_attached_file")
        assert (uploads / attached).is_file(), attached
    assert list(uploads.glob("2024/05/hero-image-*x*.jpg"))


def test_behaviour_only_a_real_wordpress_has(sandbox: SandboxWpCli, cli_sandbox: SandboxSite) -> None:
    """What the old simulator answered differently (issue 12), as the sandbox now answers it."""
    # Revisions after `post update`.
    assert _json(sandbox, "post", "list", "--post_type=revision", "--post_parent=12", "--fields=ID") == []
    assert sandbox.run(["post", "update", "12", "--post_content=<p>書き直しました</p>"]).ok
    assert len(_json(sandbox, "post", "list", "--post_type=revision", "--post_parent=12", "--fields=ID")) == 1
    # media import really downloads (the agent's own downloader, then WordPress imports the staged file):
    # an address that cannot be fetched fails as on a real site, and nothing is imported.
    attachments = _json(sandbox, "post", "list", "--post_type=attachment", "--fields=ID")
    failed = sandbox.run(["media", "import", "https://cdn.example.test/no-such-image.jpg"])
    assert failed.exit_code == 1
    assert failed.stderr == "Error: ホスト名を解決できませんでした: cdn.example.test\n"
    assert _json(sandbox, "post", "list", "--post_type=attachment", "--fields=ID") == attachments
    # Trashing a post trashes its comments.
    assert sandbox.run(["post", "delete", "10"]).ok
    trashed = _json(sandbox, "comment", "list", "--status=post-trashed", "--fields=comment_post_ID")
    assert [c["comment_post_ID"] for c in trashed] == ["10", "10"]
    # Duplicate term names are accepted under another slug; capabilities are user meta.
    assert sandbox.run(["term", "create", "post_tag", "初心者", "--slug=beginner-2"]).ok
    assert _json(sandbox, "user", "meta", "get", "2", "wp_capabilities") == {"editor": True}
    # Commands the simulator did not have at all.
    assert _field(sandbox, "site", "option", "get", "site_name") == "Argo Note ネットワーク"
    assert _field(sandbox, "super-admin", "list") == "admin"
    assert "sidebar-1" in _field(sandbox, "sidebar", "list", "--fields=id", "--format=csv")
    assert _json(sandbox, "widget", "list", "sidebar-1", "--fields=id")
    assert "wp_version_check" in _field(sandbox, "cron", "event", "list", "--fields=hook", "--format=csv")
    assert _field(sandbox, "transient", "get", "argo_note_feed_cache") == "cached-feed-body"
    dry_run = sandbox.run(["search-replace", "example.test", "example.org", "--dry-run"])
    assert dry_run.ok
    assert "replacements to be made" in dry_run.stdout


def _files(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def test_reset_restores_the_seed_in_about_a_second(cli_sandbox: SandboxSite) -> None:
    facts = cli_sandbox.facts()
    uploads = cli_sandbox.wordpress / "wp-content" / "uploads"
    seeded_files = _files(uploads)
    cli_sandbox.wp("post", "update", "45", "--post_status=publish")
    cli_sandbox.wp("site", "create", "--slug=tokyo")
    cli_sandbox.wp("media", "import", str(uploads / "2024" / "01" / "logo.png"))
    assert _files(uploads) != seeded_files
    started = time.monotonic()
    cli_sandbox.reset()
    assert time.monotonic() - started < 5  # ~0.3 s on an idle machine; generous for a shared one
    assert cli_sandbox.wp("post", "get", "45", "--field=post_status").stdout.strip() == "draft"
    sites = cli_sandbox.wp("site", "list", "--field=url").stdout.split()
    assert sites == facts["multisite_urls"]
    assert "wp_4_posts" not in {row[0] for row in cli_sandbox.sql("SHOW TABLES")}
    assert _files(uploads) == seeded_files  # the import's files are gone
    assert cli_sandbox.table_state() == cli_sandbox._snapshot().tables


def test_sandbox_command_status_reset_stop(
    cli_sandbox: SandboxSite, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in sandbox_environment(cli_sandbox).items():
        monkeypatch.setenv(name, value)
    assert main(["sandbox", "status"]) == 0
    status = capsys.readouterr().out
    assert f"場所: {cli_sandbox.home}" in status
    assert "データベース: 稼働中" in status
    cli_sandbox.wp("option", "update", "blogname", "変更されたサイト名")
    assert main(["sandbox", "reset"]) == 0
    assert "サンプルデータの状態に戻しました" in capsys.readouterr().out
    assert cli_sandbox.wp("option", "get", "blogname").stdout.strip() == "Argo Note サンプルサイト"
    assert main(["sandbox", "stop"]) == 0
    assert "停止しました" in capsys.readouterr().out
    assert main(["sandbox", "status"]) == 0
    assert "データベース: 停止中" in capsys.readouterr().out
    assert main(["sandbox", "start"]) == 0  # and back, for the tests after this one
    assert cli_sandbox.status().database_running


def _serving(port: int) -> list[int]:
    """The processes whose command line serves 127.0.0.1:`port` (`php -S` and its workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # not a process, or it ended meanwhile
            continue
        if f"127.0.0.1:{port}".encode() in words:
            found.append(int(entry.name))
    return found


def test_the_http_front_ends_with_its_workers(session_sandbox: SandboxSite) -> None:
    with HttpFront(session_sandbox) as front:
        assert front.get("/").status == 200
        port = front.port
        assert len(_serving(port)) > 1  # the server and the workers it forked
    deadline = time.monotonic() + 5
    while _serving(port) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _serving(port) == []


def test_a_tampered_wp_cli_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tampered = tmp_path / "wp-cli.phar"
    shutil.copyfile(verified_phar(), tampered)
    with tampered.open("ab") as handle:
        handle.write(b"<?php system($_GET['x']);")
    monkeypatch.setenv(PHAR_ENV, str(tampered))
    with pytest.raises(SandboxError) as caught:
        verified_phar()
    assert caught.value.cause == "wp_cli_checksum"
    assert "SHA-512" in caught.value.message_ja
    monkeypatch.setenv(PHAR_ENV, str(tmp_path / "nothing-here.phar"))
    with pytest.raises(SandboxError) as caught:
        verified_phar()
    assert caught.value.cause == "wp_cli_missing"


def test_wp_cli_starts_from_the_verified_phars_files_extracted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    phar = verified_phar()
    monkeypatch.setattr(wp_cli, "INSTALLED_PHAR", tmp_path / "share" / "wp-cli.phar")
    with ThreadPoolExecutor(4) as pool:  # concurrent first starts agree on one tree
        entries = set(pool.map(lambda _: wp_cli.started_from_files(phar), range(4)))
    (entry,) = entries
    assert entry.name == "boot-fs.php"
    assert [p.name for p in (tmp_path / "share").iterdir()] == [entry.parents[4].name]  # nothing left aside
    done = subprocess.run(
        ["php", str(entry), "--version", "--allow-root"], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == f"WP-CLI {wp_cli.pinned_version()}"
    modes = {oct(p.stat().st_mode & 0o777) for p in entry.parents[4].rglob("*")}
    assert modes == {"0o755", "0o644"}  # the site's owner reads it; only we may change it
    entry.parents[4].chmod(0o775)  # a tree others may change is not run
    assert wp_cli.started_from_files(phar) == phar
    entry.parents[4].chmod(0o755)
    # Where no tree can be kept, the phar itself runs.
    (tmp_path / "file").write_text("")
    monkeypatch.setattr(wp_cli, "INSTALLED_PHAR", tmp_path / "file" / "wp-cli.phar")
    assert wp_cli.started_from_files(phar) == phar


def _debian_wordpress_version() -> str:
    """The version of the release the sandbox runs (Debian unstable's once fetched, else the system's)."""
    return chosen_release().version


# --------------------------------------------------------------------------------- the install script

INSTALL = Path(__file__).resolve().parents[2] / "scripts" / "install-wordpress.sh"


def _venv_with_wp_agent(path: Path) -> Path:
    """A virtualenv of its own (its prefix is where the phar goes) whose `wp-agent` is this checkout's."""
    venv.create(path, with_pip=False, symlinks=True)
    python = path / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    ours = [
        entry
        for entry in sys.path
        if entry and Path(entry).is_dir() and not entry.startswith(sys.base_prefix)
    ]
    (Path(purelib) / "checkout.pth").write_text("\n".join(ours) + "\n")
    script = path / "bin" / "wp-agent"
    script.write_text(f'#!/bin/sh\nexec {python} -m wp_agent.cli.main "$@"\n')
    script.chmod(0o755)
    return path


def _install(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The install script on a venv of its own. Debian's archive is a closed port on loopback (tests
    touch no other network): the WordPress 7.x step says it falls back, and the script goes on."""
    archive = {MIRROR_ENV: f"http://127.0.0.1:{closed_loopback_port()}/debian"}
    return subprocess.run(
        [str(INSTALL)],
        capture_output=True, text=True, timeout=600, check=False,
        env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), "WP_AGENT_SKIP_SANDBOX_START": "1",
             **archive, **env},
    )  # fmt: skip


def test_install_script_checks_the_wp_cli_checksum(tmp_path: Path) -> None:
    venv_dir = _venv_with_wp_agent(tmp_path / "venv")
    done = _install({"VENV": str(venv_dir), PHAR_ENV: str(verified_phar())})
    assert done.returncode == 0, done.stderr
    installed = venv_dir / "share" / "wp-agent" / "wp-cli.phar"
    assert installed.read_bytes() == verified_phar().read_bytes()
    assert "SHA-512 確認済み" in done.stderr
    assert "から取得できませんでした" in done.stderr  # the archive out of reach: said, and setup goes on
    assert f"サンドボックスは {system_release().describe_ja()}で動かします" in done.stderr
    again = _install({"VENV": str(venv_dir)})  # idempotent: nothing to do the second time
    assert again.returncode == 0, again.stderr
    assert "SHA-512 確認済み" not in again.stderr

    bogus = tmp_path / "bogus.phar"
    bogus.write_bytes(b"#!/usr/bin/env php\n<?php echo 'not WP-CLI';")
    other = _venv_with_wp_agent(tmp_path / "other")
    refused = _install({"VENV": str(other), PHAR_ENV: str(bogus)})
    assert refused.returncode == 5
    [line] = refused.stderr.strip().splitlines()
    assert f"{bogus} の SHA-512 が固定値と一致しないため使いません" in line
    assert pinned_sha512() in line
    assert not (other / "share" / "wp-agent" / "wp-cli.phar").exists()


def test_install_script_downloads_and_checks_when_no_copy_is_at_hand(tmp_path: Path) -> None:
    import http.server
    import threading
    from functools import partial

    served = tmp_path / "served"
    served.mkdir()
    shutil.copyfile(verified_phar(), served / "wp-cli-2.10.0.phar")
    (served / "evil.phar").write_bytes(b"not the release")
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        nothing_shared = {"WP_CLI_SHARED_PHAR": str(tmp_path / "no-shared-copy.phar")}
        venv_dir = _venv_with_wp_agent(tmp_path / "venv")
        done = _install(
            {"VENV": str(venv_dir), "WP_CLI_DOWNLOAD_URL": f"{base}/wp-cli-2.10.0.phar", **nothing_shared}
        )
        assert done.returncode == 0, done.stderr
        assert (venv_dir / "share" / "wp-agent" / "wp-cli.phar").read_bytes() == verified_phar().read_bytes()
        bad = _install(
            {"VENV": str(_venv_with_wp_agent(tmp_path / "v2")), "WP_CLI_DOWNLOAD_URL": f"{base}/evil.phar",
             **nothing_shared}
        )  # fmt: skip
        assert bad.returncode == 5
        assert "の SHA-512 が固定値と一致しないため使いません" in bad.stderr
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_status_says_when_the_files_are_another_releases(cli_sandbox: SandboxSite) -> None:
    """Seeded from one release, asked about another (WP_AGENT_WORDPRESS changed): the status says the
    next start switches, rather than naming a release the files do not hold."""
    assert "次の start" not in cli_sandbox.status().wordpress
    now = cli_sandbox.release
    other = SandboxSite(
        cli_sandbox.home, release=WordPressRelease(now.tree, now.root, "別の取得", {"wordpress": "0"})
    )
    assert other.seed_key != cli_sandbox.seed_key
    assert "次の start でこのリリースに切り替えます" in other.status().wordpress
