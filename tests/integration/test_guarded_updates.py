"""Guarded updates on a real WordPress, from a real update server: WordPress's own update check and download
(routed to the sandbox's loopback update server by a must-use plugin), WP-CLI's own `plugin update`,
`theme update` and `core update`, the site served over loopback HTTP with PHP's opcache on, as a web
server runs it.

Each broken newer version is taken back by itself and the site ends as it was; the good one is kept; the
report says which. The site is read directly afterwards (versions on disk, active plugins, the database).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes.wordpress import TestWordPress
from wp_agent.executors.code_guard import GuardedWpCli, fixed
from wp_agent.executors.sandbox import SandboxWpCli
from wp_agent.sandbox import sample_updates
from wp_agent.sandbox.http_front import HttpFront
from wp_agent.sandbox.sample_updates import INSTALLED, OFFERED, SAMPLE_THEME, plugin
from wp_agent.sandbox.update_server import CoreRelease, Translation, UpdateServer

pytestmark = pytest.mark.timeout(300)
# Not among the sample breakages: a newer version that does not even parse, so WordPress (and WP-CLI,
# and the guard's own PHP) cannot load while it is active.
UNPARSABLE = "wpa-unlisted-parse-error"
BROKEN = (
    "wpa-sample-front-fatal",
    "wpa-sample-admin-fatal",
    "wpa-sample-rest-fatal",
    "wpa-sample-empty-page",
)
_FOOTER = "add_action( 'wp_footer', static function () { echo '<!-- %s 1.0.0 -->'; } );"


@dataclass
class Rig:
    wp: SandboxWpCli
    guard: GuardedWpCli
    updates: UpdateServer
    front: HttpFront

    def version(self, kind: str, slug: str) -> str:
        return self.wp.run([kind, "get", slug, "--field=version"]).stdout.strip()


@pytest.fixture
def rig(fresh_wordpress: TestWordPress) -> Iterator[Rig]:
    site = fresh_wordpress.site
    offers = [*sample_updates.offered(), plugin(UNPARSABLE, OFFERED, "function (")]
    with UpdateServer(site, offers) as updates, HttpFront(site, workers=2) as front:
        for extension in [*sample_updates.installed(), plugin(UNPARSABLE, INSTALLED, _FOOTER % UNPARSABLE)]:
            updates.install(extension)
        wp = SandboxWpCli(site)
        yield Rig(wp, GuardedWpCli(wp, wp, connect=fixed(f"127.0.0.1:{front.port}")), updates, front)


@pytest.mark.slow  # (started first: see tests/conftest.py)
def test_updating_all_plugins_takes_back_each_broken_one_alone_and_keeps_the_good_one(rig: Rig) -> None:
    """`plugin update --all --minor`: one guarded update per plugin, in WordPress's order."""
    assert rig.wp.run(["plugin", "activate", "--all"]).exit_code == 0
    done = rig.guard.run(["plugin", "update", "--all", "--minor"])
    assert done.exit_code == 1, done
    assert "6件を1件ずつ確認しながら更新しました（5件はサイトが悪くなったため戻しました）。" in done.stdout
    for broken in ("トップページ", "管理画面", "REST API", "WP-CLI の起動"):
        assert f"変更後に {broken}" in done.stderr
    assert done.stderr.count("サイトは変更前と同じく動いています") == 5
    page = rig.front.get("/")
    for slug in (*BROKEN, UNPARSABLE):
        assert rig.version("plugin", slug) == INSTALLED  # read on the site itself
        assert rig.wp.run(["plugin", "is-active", slug]).exit_code == 0
        assert f"<!-- {slug} 1.0.0 -->" in page.body  # running again, for visitors too
    assert rig.version("plugin", "wpa-sample-good") == OFFERED
    assert "wpa-sample-good 1.1.0" in page.body  # the new code is what visitors get
    served = rig.updates.requests
    assert "/api.wordpress.org/plugins/update-check/1.1/" in served
    assert "/downloads.wordpress.org/plugin/wpa-sample-good.1.1.0.zip" in served


def test_a_broken_update_of_the_active_theme_is_taken_back(rig: Rig) -> None:
    assert rig.wp.run(["theme", "activate", SAMPLE_THEME]).exit_code == 0
    assert rig.front.get("/").status == 200
    done = rig.guard.run(["theme", "update", SAMPLE_THEME])
    assert done.exit_code == 1, done
    assert "トップページ" in done.stderr.splitlines()[0]
    assert rig.version("theme", SAMPLE_THEME) == INSTALLED
    assert rig.wp.run(["option", "get", "stylesheet"]).stdout.strip() == SAMPLE_THEME
    assert rig.front.get("/").status == 200


# Broken in ways the issue does not list (found by trying them on the sandbox; each got through before).
UNLISTED = {
    # every visitor sent to another site (a hijack, or a "coming soon" plugin gone wrong)
    "wpa-unlisted-redirect": "add_action( 'template_redirect', static function () { wp_redirect( 'https://elsewhere.example/' ); exit; } );",
    # only the login page fatals: every page works, the administrators are locked out
    "wpa-unlisted-login": "add_action( 'login_init', static function () { wpa_missing(); } );",
    # activation moves the site's address and adds a table: the files alone would not bring the site back
    "wpa-unlisted-moves-home": "register_activation_hook( __FILE__, static function () { global $wpdb; "
    "$wpdb->query( \"CREATE TABLE {$wpdb->prefix}wpa_unlisted ( id INT )\" ); "
    "update_option( 'home', 'https://moved.example' ); } );",
}  # fmt: skip


def test_plugins_broken_in_ways_not_listed_are_taken_back_and_the_site_read_after_is_as_before(
    rig: Rig,
) -> None:
    site = rig.wp.site
    home = rig.wp.run(["option", "get", "home"]).stdout.strip()
    tables = sorted(row[0] for row in site.sql("SHOW TABLES"))
    for slug, code in UNLISTED.items():
        rig.updates.install(plugin(slug, INSTALLED, code))
        done = rig.guard.run(["plugin", "activate", slug])
        assert done.exit_code == 1, (slug, done)
        assert "サイトは変更前と同じく動いています" in done.stderr, (slug, done.stderr)
        assert rig.wp.run(["plugin", "is-active", slug]).exit_code != 0
    assert rig.wp.run(["option", "get", "home"]).stdout.strip() == home
    assert sorted(row[0] for row in site.sql("SHOW TABLES")) == tables  # its table dropped, no copy left
    assert rig.front.get("/").status == 200


def test_a_change_on_one_site_of_a_network_is_probed_and_taken_back_on_that_site(rig: Rig) -> None:
    """`--url` names a site of the network: the guard probes that site's pages (before, the main site's
    were probed: a plugin that broke only the named site was kept as "healthy")."""
    shop = next(
        url for url in rig.wp.run(["site", "list", "--field=url"]).stdout.split() if url.count("/") > 3
    )
    rig.updates.install(plugin("wpa-unlisted-one-site", INSTALLED, UNLISTED["wpa-unlisted-redirect"]))
    done = rig.guard.run(["plugin", "activate", "wpa-unlisted-one-site", f"--url={shop}"])
    assert done.exit_code == 1, done
    assert "別のサイト（elsewhere.example）" in done.stderr
    assert rig.wp.run(["plugin", "is-active", "wpa-unlisted-one-site", f"--url={shop}"]).exit_code != 0


def test_a_good_minor_core_update_is_kept_and_reported(fresh_wordpress: TestWordPress) -> None:
    """(A broken major one, files and database taken back: tests/e2e/test_guarded_changes.py, through ask.)"""
    site = fresh_wordpress.site
    wp = SandboxWpCli(site)
    version = wp.run(["core", "version"]).stdout.strip()
    good = CoreRelease(f"{version}.1" if version.count(".") == 1 else _next_patch(version))
    with UpdateServer(site, core=good), HttpFront(site, workers=2) as front:
        guard = GuardedWpCli(wp, wp, connect=fixed(f"127.0.0.1:{front.port}"))
        done = guard.run(["core", "update", "--minor"])
        assert done.exit_code == 0, done  # (WP-CLI's own checksum request reached the update server too)
        assert "サイトは正常です" in done.stdout
        assert wp.run(["core", "version"]).stdout.strip() == good.version
        assert front.get("/").status == 200


def _next_patch(version: str) -> str:
    major, minor, patch = version.split(".")[:3]
    return f"{major}.{minor}.{int(patch) + 1}"


def test_an_update_of_the_sites_language_pack_that_breaks_every_page_is_taken_back(
    fresh_wordpress: TestWordPress,
) -> None:
    """Translations load as PHP (`.l10n.php`): a newer pack of the site's own language that fatals."""
    site = fresh_wordpress.site
    wp = SandboxWpCli(site)
    language = wp.run(["option", "get", "WPLANG"]).stdout.strip()
    folder = Path(site.wordpress) / "wp-content" / "languages"
    before = {path.name: path.read_bytes() for path in folder.glob(f"{language}.*")}
    broken = Translation(language, {f"{language}.l10n.php": "<?php wpa_translation_missing();\n"})
    with UpdateServer(site, translations=[broken]) as server, HttpFront(site, workers=2) as front:
        guard = GuardedWpCli(wp, wp, connect=fixed(f"127.0.0.1:{front.port}"))
        done = guard.run(["language", "core", "update"])
        assert done.exit_code == 1, done
        assert "戻しました" in done.stderr.splitlines()[0], done
        assert "/downloads.wordpress.org/translation/core/" in " ".join(server.requests)  # really updated
        assert {path.name: path.read_bytes() for path in folder.glob(f"{language}.*")} == before
        assert front.get("/").status == 200
