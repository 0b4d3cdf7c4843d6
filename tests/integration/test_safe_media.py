"""Media without SSRF: the agent downloads with every address and redirect checked and pinned,
stages the file privately on the WordPress host (local temp dir / SFTP), imports it, removes it.

Against a real HTTP server on 127.0.0.1 that redirects to loopback, link-local (metadata), private,
CGNAT, unique-local and IPv4-in-IPv6 addresses. On a real WordPress 6.1 (before this), WP-CLI's
`media import http://169.254.169.254/…` and `http://100.64.0.1/…` were fetched by WordPress
itself (its URL check refuses 127.0.0.1 but not those).
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import sys
from pathlib import Path

import pytest

from tests.fakes.media_server import JPEG, MediaServer
from tests.fakes.sshd import SshdRig
from wp_agent.executors.local import LocalWpCli
from wp_agent.executors.media_staging import MediaImporter
from wp_agent.executors.ssh import SshConnectionPool, SshWpCli
from wp_agent.media.safe_download import MediaDownloadError, SafeDownloader, parse_test_hosts
from wp_agent.policy import CommandPolicy
from wp_agent.policy.custom_rules import CustomRules

STUB = Path(__file__).resolve().parents[1] / "fakes" / "wp_stub.py"
STUB_BIN = f"{shlex.quote(sys.executable)} {shlex.quote(str(STUB))}"

FORBIDDEN_TARGETS = [
    "http://127.0.0.1/latest",
    "http://127.0.0.1:1/x.jpg",
    "http://localhost/x.jpg",
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://169.254.170.2/v2/credentials",
    "http://10.0.0.5/x.jpg",
    "http://172.16.0.1/x.jpg",
    "http://192.168.1.1/x.jpg",
    "http://100.64.0.1/x.jpg",
    "http://0.0.0.0/x.jpg",
    "http://0x7f.1/x.jpg",
    "http://2130706433/x.jpg",
    "http://017700000001/x.jpg",
    "http://[::1]/x.jpg",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://[fe80::1]/x.jpg",
    "http://[::ffff:169.254.169.254]/x.jpg",
    "http://[64:ff9b::a9fe:a9fe]/x.jpg",
    "http://[2002:a9fe:a9fe::1]/x.jpg",
    "file:///etc/passwd",
    "gopher://127.0.0.1:25/x",
    "http://user:pw@203.0.113.10/x.jpg",
]


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every TCP connection the downloader opens (to prove refusals happen before connecting)."""
    opened: list[tuple[str, int]] = []
    real = socket.create_connection

    def recording(address: tuple[str, int], *args: object, **kwargs: object) -> socket.socket:
        opened.append(address)
        return real(address, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "create_connection", recording)
    return opened


def downloader(server: MediaServer, **kwargs: object) -> SafeDownloader:
    return SafeDownloader(test_hosts=parse_test_hosts(server.host_entry), **kwargs)  # type: ignore[arg-type]


def test_an_image_from_the_allowed_test_server_is_downloaded(media_server: MediaServer) -> None:
    media = downloader(media_server).fetch(media_server.url("/img/ai-hero.jpg?w=1200"))
    assert media.data == JPEG
    assert media.filename == "ai-hero.jpg"
    assert media.media_type.mime == "image/jpeg"


def test_without_the_test_setting_loopback_is_refused_before_any_request(
    media_server: MediaServer, connects: list[tuple[str, int]]
) -> None:
    with pytest.raises(MediaDownloadError, match="内部ネットワーク"):
        SafeDownloader().fetch(media_server.url("/img/a.jpg"))
    assert connects == []
    assert media_server.requests == []


@pytest.mark.parametrize("target", FORBIDDEN_TARGETS)
def test_a_redirect_to_an_internal_address_is_refused(
    media_server: MediaServer, connects: list[tuple[str, int]], target: str
) -> None:
    with pytest.raises(MediaDownloadError):
        downloader(media_server).fetch(media_server.url(f"/redirect?to={target}"))
    assert connects == [("127.0.0.1", media_server.port)]  # only the allowed first hop


@pytest.mark.parametrize("target", FORBIDDEN_TARGETS)
def test_an_internal_address_is_refused_directly(connects: list[tuple[str, int]], target: str) -> None:
    with pytest.raises(MediaDownloadError):
        SafeDownloader().fetch(target)
    assert connects == []


def _resolver(table: dict[str, list[str]], calls: list[str]) -> object:
    def resolve(host: str, port: int) -> list[str]:
        calls.append(host)
        return table[host]

    return resolve


@pytest.mark.parametrize(
    "answers",
    [["169.254.169.254"], ["10.1.2.3"], ["203.0.113.10", "127.0.0.1"], ["fd00::1"], ["::ffff:10.0.0.1"]],
)
def test_a_dns_name_resolving_inside_is_refused(connects: list[tuple[str, int]], answers: list[str]) -> None:
    calls: list[str] = []
    fetcher = SafeDownloader(resolver=_resolver({"images.example.com": answers}, calls))  # type: ignore[arg-type]
    with pytest.raises(MediaDownloadError, match="内部ネットワーク"):
        fetcher.fetch("https://images.example.com/a.jpg")
    assert connects == []


def test_the_connection_goes_to_the_checked_address_with_the_name_kept(
    media_server: MediaServer, connects: list[tuple[str, int]]
) -> None:
    calls: list[str] = []
    table = {"images.example": ["127.0.0.1"]}
    fetcher = downloader(media_server, resolver=_resolver(table, calls))
    media = fetcher.fetch(f"http://images.example:{media_server.port}/img/photo.png")
    assert media.media_type.extension == "png"
    assert calls == ["images.example"]  # resolved once per hop, never again at connect time
    assert connects == [("127.0.0.1", media_server.port)]


def test_type_size_and_redirect_caps(media_server: MediaServer) -> None:
    fetcher = downloader(media_server, max_bytes=1_000_000)
    with pytest.raises(MediaDownloadError, match="画像"):
        fetcher.fetch(media_server.url("/page.html"))
    with pytest.raises(MediaDownloadError, match="大きすぎます"):
        fetcher.fetch(media_server.url("/huge"))
    loop = media_server.url("/redirect?to=" + media_server.url("/redirect?to=/redirect?to=/redirect?to=/r"))
    with pytest.raises(MediaDownloadError):
        fetcher.fetch(loop)
    with pytest.raises(MediaDownloadError, match="HTTP 404"):
        fetcher.fetch(media_server.url("/missing.jpg"))


# -- executors: download, stage privately, import the staged file, remove it -----------------------


def _local(tmp_path: Path, server: MediaServer) -> LocalWpCli:
    return LocalWpCli(tmp_path, wp_cli_bin=STUB_BIN, media=MediaImporter(downloader(server)))


def test_local_media_import_runs_on_a_private_staged_file(tmp_path: Path, media_server: MediaServer) -> None:
    wp = _local(tmp_path, media_server)
    url = media_server.url("/img/hero.jpg")
    result = wp.run(
        ["media", "import", url, "--post_id=5", "--featured_image", "--porcelain", "--stub-stat-args"]
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    [staged] = report["files"]
    assert (staged["size"], staged["mode"], staged["dir_mode"]) == (len(JPEG), "0o600", "0o700")
    assert staged["path"].endswith("/hero.jpg")
    assert url not in report["argv"]
    assert report["argv"][-4:-1] == ["--post_id=5", "--featured_image", "--porcelain"]
    assert not os.path.exists(staged["path"])
    assert not os.path.exists(os.path.dirname(staged["path"]))


@pytest.mark.parametrize(
    "argv",
    [
        ["media", "import", "http://169.254.169.254/latest/meta-data/x.jpg"],
        ["media", "import", "/etc/passwd"],
        ["media", "import", "https://example.com/a.jpg", "/etc/passwd"],
    ],
)
def test_local_media_import_refusals_never_reach_wp_cli(tmp_path: Path, argv: list[str]) -> None:
    marker = tmp_path / "ran"
    wp = LocalWpCli(tmp_path, wp_cli_bin=f"{STUB_BIN} --stub-log={marker}")
    result = wp.run(argv)
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ")
    assert not marker.exists()


def test_other_commands_pass_through(tmp_path: Path, media_server: MediaServer) -> None:
    result = _local(tmp_path, media_server).run(["post", "list"])
    assert json.loads(result.stdout) == [f"--path={tmp_path}", "post", "list"]


@pytest.mark.sshd
def test_ssh_media_import_stages_over_sftp(sshd_server: SshdRig, media_server: MediaServer) -> None:
    pool = SshConnectionPool()
    try:
        settings = sshd_server.settings(
            wp_cli_bin="wp-stub", wp_agent_media_test_hosts=media_server.host_entry
        )
        wp = SshWpCli(settings, pool=pool)
        result = wp.run(
            ["media", "import", media_server.url("/img/hero.jpg"), "--porcelain", "--stub-stat-args"]
        )
        assert result.exit_code == 0, result.stderr
        [staged] = json.loads(result.stdout)["files"]
        assert staged["path"].startswith("/tmp/wp-agent-media-")
        assert (staged["size"], staged["mode"], staged["dir_mode"]) == (len(JPEG), "0o600", "0o700")
        assert not os.path.exists(os.path.dirname(staged["path"]))  # the rig's "remote" is this machine
        refused = wp.run(["media", "import", media_server.url("/redirect?to=http://10.0.0.1/x.jpg")])
        assert refused.exit_code == 1
        assert "内部ネットワーク" in refused.stderr
    finally:
        pool.close_all()


def test_the_policy_allows_a_local_server_only_with_the_test_setting(media_server: MediaServer) -> None:
    command = f"media import {media_server.url('/img/a.jpg')}"
    assert CommandPolicy().classify(command).rule == "blocked.media_private_host"
    allowed = CommandPolicy(CustomRules(), media_test_hosts=parse_test_hosts(media_server.host_entry))
    assert not allowed.classify(command).blocked
    other = f"media import {media_server.url('/a.jpg')} http://10.0.0.1/b.jpg"
    assert allowed.classify(other).blocked
