"""`wp-agent sandbox install` starts the sandbox on the WordPress it has just fetched, not on the one
that was current before the fetch (on a fresh machine: the system's 6.1 instead of Debian unstable's 7.x)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wp_agent.cli.main import main
from wp_agent.sandbox import SandboxSite, install, release
from wp_agent.sandbox.site import SandboxStatus


def test_install_starts_the_release_it_fetched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fetched = tmp_path / "releases" / "7.1.4"
    (fetched / "root" / "usr" / "share" / "wordpress").mkdir(parents=True)
    (fetched / "release.json").write_text(
        json.dumps({"origin": "Debian unstable", "packages": {"wordpress": "7.1.4"}})
    )
    monkeypatch.setenv("WP_AGENT_SANDBOX_SITE", str(tmp_path / "sandbox"))
    monkeypatch.delenv(release.RELEASE_ENV, raising=False)
    monkeypatch.setattr(install, "missing_packages", list)
    monkeypatch.setattr(install, "install_phar", lambda phar, say: None)
    monkeypatch.setattr(
        release, "fetch_release", lambda say: monkeypatch.setenv(release.RELEASE_ENV, str(fetched))
    )
    started: list[Path] = []
    monkeypatch.setattr(SandboxSite, "start", lambda site: started.append(site.release.tree))
    monkeypatch.setattr(
        SandboxSite,
        "status",
        lambda site: SandboxStatus(site.home, True, True, "seeded", "https://example.test/"),
    )
    assert main(["sandbox", "install"]) == 0
    assert started == [fetched / "root" / "usr" / "share" / "wordpress"]
