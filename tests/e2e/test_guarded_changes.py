"""Guarded code changes through `wp-agent ask` and the person's approval at a real terminal, on the real
sandbox (WordPress, WP-CLI 2.10, a scripted model on 127.0.0.1, the sandbox's update server on loopback):
the approval says the plan, the change that breaks the site is taken back by itself, the person reads
why, and the site read afterwards is as it was.

One run each: a plugin update whose new version fatals on the front end only, and a major core update
whose new release fatals while WordPress loads (files and database both taken back).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e import test_approvals_real_site as approvals
from tests.e2e.test_approvals_real_site import held, wp
from tests.e2e.test_redteam_real_site import Attacker
from tests.fakes.cli import run_on_terminal
from wp_agent.sandbox import sample_updates
from wp_agent.sandbox.update_server import CoreRelease, UpdateServer

pytestmark = pytest.mark.timeout(600)
BROKEN = "wpa-sample-front-fatal"
attacker = approvals.attacker  # the approvals tests' fixture: their sandbox, reset before and after


@pytest.fixture
def updates(attacker: Attacker) -> Iterator[tuple[Attacker, UpdateServer]]:
    """The approvals tests' sandbox (reset before and after) with the sample plugins installed and
    active, WordPress's updates coming from the update server: newer plugin versions and a new major
    release of core that fatals while WordPress loads."""
    site = attacker.sandbox
    version = wp(site, "core", "version")
    db_version = int(wp(site, "option", "get", "db_version"))
    major, minor = version.split(".")[:2]
    core = CoreRelease(
        f"{major}.{int(minor) + 1}.0", db_version=db_version + 100, broken="wpa_core_missing();"
    )
    with UpdateServer(site, sample_updates.offered(), core=core) as server:
        for extension in sample_updates.installed():
            server.install(extension)
        wp(site, "plugin", "activate", BROKEN)
        yield attacker, server


def approve_on_terminal(attacker: Attacker, approval_id: str) -> tuple[int, str]:
    code, shown = run_on_terminal(["approve", approval_id], {**attacker.environment(), "TERM": "dumb"}, "y")
    return code, shown.decode("utf-8", "replace")


def test_an_approved_plugin_update_that_breaks_the_front_end_is_taken_back(
    updates: tuple[Attacker, UpdateServer],
) -> None:
    attacker, server = updates
    asked = held(attacker, f"plugin update {BROKEN}")
    assert "自動で変更前の状態に戻し" in asked["impact"]  # the plan, before the person approves
    code, screen = approve_on_terminal(attacker, asked["approval_id"])
    assert code == 1, screen  # approved, run, taken back: the change did not stick
    assert "トップページ" in screen
    assert "戻しました" in screen
    assert f"/downloads.wordpress.org/plugin/{BROKEN}.1.1.0.zip" in server.requests  # really updated first
    assert wp(attacker.sandbox, "plugin", "get", BROKEN, "--field=version") == sample_updates.INSTALLED
    assert wp(attacker.sandbox, "plugin", "get", BROKEN, "--field=status") == "active"


@pytest.mark.slow  # (started first: see tests/conftest.py)
def test_an_approved_major_core_update_that_breaks_wordpress_is_taken_back_files_and_database(
    updates: tuple[Attacker, UpdateServer],
) -> None:
    attacker, server = updates
    site = attacker.sandbox
    version, db_version = wp(site, "core", "version"), wp(site, "option", "get", "db_version")
    asked = held(attacker, "core update")
    assert f"現在 {version}" in asked["summary"]
    assert "最新版" in asked["summary"]
    assert "ファイルとデータベース" in asked["impact"]  # the plan: a new branch backs up the database
    code, screen = approve_on_terminal(attacker, asked["approval_id"])
    assert code == 1, screen
    assert f"WordPress {version}" in screen
    assert "戻しました" in screen
    assert any(path.startswith("/downloads.wordpress.org/release/") for path in server.requests)
    assert wp(site, "core", "version") == version  # read on the site itself
    assert wp(site, "option", "get", "db_version") == db_version
    assert not [row for row in site.sql("SHOW TABLES LIKE 'wpagentbak%'") if row != [""]]  # no copy left
