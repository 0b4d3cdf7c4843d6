"""`wp-agent sandbox install`'s parts that need no apt-get (sandbox/install.py): what is missing, and
the WP-CLI phar copied only when its SHA-512 is the pinned one (downloaded when no copy is given)."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

import pytest

from wp_agent.sandbox import SandboxError, install
from wp_agent.sandbox.wp_cli import INSTALLED_PHAR, pinned_sha512, pinned_version

pytestmark = pytest.mark.skipif(not INSTALLED_PHAR.is_file(), reason="make setup installs the verified phar")


def sha512(path: Path) -> str:
    return hashlib.sha512(path.read_bytes()).hexdigest()


def test_a_verified_copy_is_installed(tmp_path: Path) -> None:
    said: list[str] = []
    destination = tmp_path / "share" / "wp-agent" / "wp-cli.phar"
    assert install.install_phar(INSTALLED_PHAR, said.append, destination) == destination
    assert sha512(destination) == pinned_sha512()
    assert destination.stat().st_mode & 0o777 == 0o644
    assert said == [f"WP-CLI {pinned_version()}（SHA-512 確認済み）: {destination}"]


def test_a_phar_that_is_not_the_pinned_one_is_refused_with_both_checksums(tmp_path: Path) -> None:
    tampered = tmp_path / "wp-cli.phar"
    tampered.write_bytes(INSTALLED_PHAR.read_bytes() + b"\n<?php echo 'x';")
    destination = tmp_path / "installed.phar"
    with pytest.raises(SandboxError) as refused:
        install.install_phar(tampered, lambda _: None, destination)
    assert refused.value.cause == "wp_cli_checksum"
    assert sha512(tampered) in refused.value.message_ja
    assert pinned_sha512() in refused.value.message_ja
    assert not destination.exists()


def test_without_a_copy_it_downloads_from_the_pinned_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    def fake_urlopen(url: str, timeout: float) -> Any:
        asked.append(url)
        return io.BytesIO(INSTALLED_PHAR.read_bytes())

    monkeypatch.delenv(install.DOWNLOAD_ENV, raising=False)
    monkeypatch.setattr("urllib.request.urlopen", fake_urlopen)
    destination = tmp_path / "wp-cli.phar"
    install.install_phar(None, lambda _: None, destination)
    assert asked == [
        f"https://github.com/wp-cli/wp-cli/releases/download/v{pinned_version()}/wp-cli-{pinned_version()}.phar"
    ]
    assert sha512(destination) == pinned_sha512()
    install.install_phar(None, lambda _: None, destination)  # already there and verified: no download
    assert len(asked) == 1


def test_missing_parts_are_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no php here
    monkeypatch.setenv("WP_CLI_PHAR", str(tmp_path / "nowhere.phar"))
    missing = install.missing_parts()
    assert "PHP" in missing
    assert f"WP-CLI {pinned_version()}" in missing


def test_packages_are_not_installed_without_root_or_sudo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/apt-get" if name == "apt-get" else None)
    with pytest.raises(SandboxError) as refused:
        install.install_packages(["php-cli"], lambda _: None)
    assert refused.value.cause == "not_root"
    assert "sudo apt-get install php-cli" in refused.value.message_ja
