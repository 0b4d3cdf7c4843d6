"""The health probe on a real WordPress served over loopback HTTP, broken in the ways WP-CLI cannot see.

Each breakage is a must-use plugin of a few lines: a fatal only on the front end (`template_redirect`),
only in the dashboard (`admin_init`), only on the REST API (`rest_api_init`), a 200 with an empty page, a
fatal while WordPress loads (WP-CLI itself cannot start), only on the login page, every visitor sent to
another site, the site's address moved. The probe runs as it runs on a server (staged,
`wp eval-file`), the server fetching its own site; `compare` names what got worse than the baseline, and
what was already broken before is not blamed on the change.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.fakes.wordpress import TestWordPress
from wp_agent.executors.sandbox import SandboxWpCli
from wp_agent.executors.site_health import HealthReport, compare, probe
from wp_agent.sandbox.http_front import HttpFront

BREAKAGES = {
    "front": "add_action( 'template_redirect', static function () { wp_agent_no_such_function(); } );",
    "admin": "add_action( 'admin_init', static function () { wp_agent_no_such_function(); } );",
    "rest": "add_action( 'rest_api_init', static function () { wp_agent_no_such_function(); } );",
    "empty": "add_action( 'template_redirect', static function () { status_header( 200 ); exit; } );",
    "load": "wp_agent_no_such_function();",
    "login": "add_action( 'login_init', static function () { wp_agent_no_such_function(); } );",
    "elsewhere": "add_action( 'template_redirect', static function () { wp_redirect( 'https://elsewhere.example/' ); exit; } );",
    "moved": "add_filter( 'option_home', static fn () => 'https://moved.example' );",
}
LOGGING = "ini_set( 'log_errors', '1' ); ini_set( 'error_log', WP_CONTENT_DIR . '/wp-agent-probe-test.log' );"


@contextmanager
def must_use(site: TestWordPress, name: str, code: str) -> Iterator[None]:
    plugin = Path(site.site.wordpress) / "wp-content" / "mu-plugins" / f"wp-agent-test-{name}.php"
    plugin.parent.mkdir(parents=True, exist_ok=True)
    plugin.write_text(f"<?php\n{code}\n", encoding="utf-8")
    plugin.chmod(0o644)
    try:
        yield
    finally:
        plugin.unlink(missing_ok=True)


@pytest.fixture
def served(fresh_wordpress: TestWordPress) -> Iterator[tuple[TestWordPress, SandboxWpCli, str]]:
    with HttpFront(fresh_wordpress.site, workers=2) as front:
        yield fresh_wordpress, SandboxWpCli(fresh_wordpress.site), f"127.0.0.1:{front.port}"
    (Path(fresh_wordpress.site.wordpress) / "wp-content" / "wp-agent-probe-test.log").unlink(missing_ok=True)


def test_each_breakage_is_named_and_the_healthy_site_passes(
    served: tuple[TestWordPress, SandboxWpCli, str],
) -> None:
    site, wp, connect = served

    def now(log_from: int | None = None, baseline: HealthReport | None = None) -> HealthReport:
        address = baseline.address if baseline is not None else None
        return probe(wp, wp, connect=connect, log_from=log_from, address=address)

    baseline = now()
    assert baseline.healthy, baseline.lines_ja()
    assert {p.name for p in baseline.probed} == {
        "front",
        "post",
        "admin",
        "rest",
        "login",
        "address",
        "wpcli",
        "log",
    }
    expected = {
        "front": ("front", "post"),
        "admin": ("admin",),
        "rest": ("rest",),
        "empty": ("front", "post"),
        "load": ("wpcli",),
        "login": ("login",),
        "elsewhere": ("front", "post"),
        "moved": ("address",),
    }
    for name, code in BREAKAGES.items():
        with must_use(site, name, code):
            after = now(baseline=baseline)
        assert compare(baseline, after).worse == expected[name], (name, after.lines_ja())
    assert now().healthy  # each plugin removed: the site works again


def test_new_php_errors_in_the_log_and_a_site_already_broken(
    served: tuple[TestWordPress, SandboxWpCli, str],
) -> None:
    site, wp, connect = served
    with must_use(site, "logging", LOGGING):
        before = probe(wp, wp, connect=connect)
        assert before.log_size is not None  # the log is found where PHP writes it
        with must_use(site, "front", BREAKAGES["front"]):
            after = probe(wp, wp, connect=connect, log_from=before.log_size)
            again = probe(wp, wp, connect=connect, log_from=after.log_size)
    verdict = compare(before, after)
    assert "log" in verdict.worse
    assert any("wp_agent_no_such_function" in line for line in after.new_log_lines)
    assert "トップページ" in verdict.text_ja()
    # Broken before the change as after it: reported, not blamed on the change.
    already = compare(after, again)
    assert not already.got_worse
    assert set(already.already_broken) >= {"front", "post"}
    assert "変更前から" in already.text_ja()
