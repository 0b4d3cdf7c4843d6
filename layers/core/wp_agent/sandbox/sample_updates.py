"""Plugins and a theme with a version installed and a newer one offered by the update server — one newer
version that works, and ones broken the ways sites break after an update: a fatal error on the front end
only (WP-CLI never runs `template_redirect`), in the dashboard only, on the REST API only, and an empty
page with status 200. Each old version works. Used with sandbox/update_server.py."""

from __future__ import annotations

from wp_agent.sandbox.update_server import Extension

INSTALLED = "1.0.0"
OFFERED = "1.1.0"

# What each newer version adds, by plugin; the installed version adds a harmless footer comment.
_BREAKS = {
    "wpa-sample-good": "add_action( 'wp_footer', static function () { echo '<!-- wpa-sample-good 1.1.0 -->'; } );",
    "wpa-sample-front-fatal": "add_action( 'template_redirect', static function () { wpa_sample_missing(); } );",
    "wpa-sample-admin-fatal": "add_action( 'admin_init', static function () { wpa_sample_missing(); } );",
    "wpa-sample-rest-fatal": "add_action( 'rest_api_init', static function () { wpa_sample_missing(); } );",
    "wpa-sample-empty-page": "add_action( 'template_redirect', static function () { exit; } );",
}
SAMPLE_THEME = "wpa-sample-theme"


def plugin(slug: str, version: str, code: str) -> Extension:
    """A one-file plugin `<slug>/<slug>.php` with WordPress's header and `code` after it."""
    header = f"<?php\n/*\nPlugin Name: {slug}\nVersion: {version}\nRequires PHP: 7.4\n*/\n"
    return Extension("plugin", slug, version, {f"{slug}.php": header + code + "\n"})


def theme(slug: str, version: str, index: str) -> Extension:
    """A classic theme: its stylesheet header and `index.php`."""
    style = f"/*\nTheme Name: {slug}\nVersion: {version}\nRequires PHP: 7.4\n*/\n"
    return Extension("theme", slug, version, {"style.css": style, "index.php": index})


_WORKING_INDEX = (
    "<!doctype html><html><head><?php wp_head(); ?></head><body>"
    "<?php while ( have_posts() ) { the_post(); the_title( '<h2>', '</h2>' ); } wp_footer(); ?>"
    "</body></html>\n"
)


def installed() -> list[Extension]:
    """The versions the site has before the update: each works."""
    footer = "add_action( 'wp_footer', static function () { echo '<!-- %s 1.0.0 -->'; } );"
    return [plugin(slug, INSTALLED, footer % slug) for slug in _BREAKS] + [
        theme(SAMPLE_THEME, INSTALLED, _WORKING_INDEX)
    ]


def offered() -> list[Extension]:
    """The newer versions the update server offers: the good one and the broken ones; the theme's newer
    version fatals on every page it draws."""
    return [plugin(slug, OFFERED, code) for slug, code in _BREAKS.items()] + [
        theme(SAMPLE_THEME, OFFERED, "<?php wpa_sample_theme_missing();\n")
    ]
