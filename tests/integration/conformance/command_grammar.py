"""Commands generated from the command table's own grammar: every write path, its declared fields and
arguments (values each check accepts, from the declaration's samples and the seeded site's objects),
flags the real WP-CLI offers that the declaration leaves out, meta keys (public, protected, from
WordPress and popular plugins, file-path and secret ones), WordPress's own option names and plugins'
ones, and hostile values (`../`, absolute paths, URLs, HTML, JSON, PHP-serialized data)."""

from __future__ import annotations

import json
import random
import re
import shlex
from collections.abc import Callable
from typing import Any

from tests.fakes.wordpress import MISSING_IMAGE_URL, SAMPLE_IMAGE_URL
from tests.integration.test_read_means_read import sample_positionals
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.command_table import ALLOWED_COMMANDS, NEWER_THAN_PINNED
from wp_agent.policy.effects.declaration import Effect
from wp_agent.policy.effects.meta_keys import LISTED_PROTECTED
from wp_agent.policy.effects.options import OPTIONS, THEME_MODS
from wp_agent.policy.effects.table import WRITE_EFFECTS
from wp_agent.policy.effects.values import ValueCheck

HOSTILE = (
    "../../../../wp-config.php", "/etc/passwd", "/var/www/html/wp-config.php", "https://evil.example/x.php",
    "http://169.254.169.254/latest/meta-data/", "<script>alert(1)</script>", '{"a":1}', "[1,2]",
    'a:1:{s:1:"a";s:1:"b";}', 'O:8:"stdClass":0:{}', "phar://x.jpg", "file:///etc/passwd",
    "javascript:alert(1)", "", "0", "-1", "99999999", "日本語の値", "x" * 300, "wp-config.php",
)  # fmt: skip
PUBLIC_META = (
    "subtitle", "views", "color", "price", "enclosure", "footnotes", "rank_math_title", "rank_math_description",
    "wpseo_title", "download_path", "pdf_file", "api_key", "stripe_secret", "license_key", "Subtitle",
)  # fmt: skip
PROTECTED_META = (
    "_thumbnail_id", "_wp_attachment_image_alt", "_wp_page_template", "_edit_lock", "_edit_last", "_wp_old_slug",
    "_wp_attached_file", "_wp_attachment_metadata", "_wp_attachment_backup_sizes", "_WP_Attached_File",
    "_menu_item_url", "_menu_item_object_id", "_elementor_data", "_elementor_edit_mode", "_yoast_wpseo_title",
    "_yoast_wpseo_metadesc", "_product_image_gallery", "_downloadable_files", "_price", "_regular_price",
    "_sku", "_aioseo_title", "_wp_trash_meta_status", "_pingme", "_encloseme", "_wp_desired_post_slug",
)  # fmt: skip
USER_META = (
    "description", "nickname", "first_name", "locale", "rich_editing", "primary_blog", "source_domain",
    "wp_capabilities", "wp_user_level", "session_tokens", "_two_factor_totp_key", "billing_phone",
    "dismissed_wp_pointers", "wp_user-settings", "community-events-location", "show_admin_bar_front",
    "admin_color", "default_password_nag", "wp_2_capabilities",
)  # fmt: skip
PLUGIN_OPTIONS = (
    "woocommerce_currency", "woocommerce_store_address", "wpseo", "wpseo_titles", "akismet_strictness",
    "elementor_cpt_support", "jetpack_options", "litespeed.conf.cache", "wordfence_version", "WPLANG",
    "adminhash", "html_type", "show_on_front", "page_on_front", "page_for_posts", "admin_email_lifespan",
    "auto_update_plugins", "recently_activated", "wp_page_for_privacy_policy", "sticky_posts",
)  # fmt: skip
THEME_MOD_NAMES = (
    *THEME_MODS,
    "header_image",
    "custom_css_post_id",
    "nav_menu_locations",
    "sidebars_widgets",
)
WIDGETS = (
    "text",
    "custom_html",
    "rss",
    "archives",
    "search",
    "akismet_widget",
    "media_image",
    "block",
    "calendar",
)
WIDGET_IDS = ("block-2", "block-3", "block-4", "block-5", "block-6", "text-9")
LANGUAGES = ("ja", "en_US", "de_DE", "../x", "ja_JP")
TAXONOMIES = ("category", "post_tag", "post_format", "nav_menu", "wp_theme", "product_cat")
ROLES = ("subscriber", "contributor", "editor", "administrator", "shop_manager")
# Flags the declarations leave out, with values that would widen the effect if they were let through.
DANGER_FLAGS = (
    "--network", "--all", "--force", "--file=../../wp-config.php", "--ID=1", "--guid=https://evil.example/",
    "--post_mime_type=image/png", "--to_ping=http://169.254.169.254/", "--user_id=1", "--import_id=5",
    "--from-post=58", "--activate", "--skip-copy", "--hard", "--format=json", "--post_type=attachment",
    "--context=admin", "--skip-plugins", "--skip-themes",
    '--meta_input={"_wp_attached_file":"../../wp-config.php"}', "--autoload=no", "--porcelain",
)  # fmt: skip
OTHER_SITE = "--url=https://example.test/en/"
# WP-CLI's global flags a read may carry (the forbidden ones are refused before anything runs).
READ_GLOBALS = (
    "--context=admin", "--context=cli", "--skip-plugins", "--skip-themes", "--debug", "--quiet", OTHER_SITE,
    "--format=json", "--format=count", "--orderby=meta_value", "--meta_key=_two_factor_totp_key",
)  # fmt: skip
_FLAG = re.compile(r"\[--([a-z][a-z0-9_\-]*)(?:=<[^>]+>)?\]")
# How often a path is drawn: writes to the content and settings more often than extension lookups,
# installs (no internet here: they fail) rarely.
_WEIGHT = {"install": 0.3, "update": 0.5, "list": 0.5, "get": 0.5, "status": 0.5, "check-update": 0.3}


class Grammar:
    """Builds one command at a time from a random source (`random.Random` or Hypothesis's)."""

    def __init__(
        self, facts: dict[str, Any], synopses: dict[tuple[str, ...], str], option_names: list[str]
    ) -> None:
        self.facts = facts
        self.synopses = synopses
        self.option_names = sorted(set(option_names) | set(PLUGIN_OPTIONS) | set(OPTIONS))
        posts = (
            facts["publish_post_ids"] + facts["draft_post_ids"] + facts["page_ids"] + facts["future_post_ids"]
        )
        self.post_ids = [str(i) for i in posts] + [str(facts["missing_post_id"])]
        self.attachment_ids = [str(i) for i in facts["attachment_ids"].values()]
        self.menu_item_ids = [str(i) for i in facts["menu_item_ids"]]
        self.term_refs = [str(i) for i in facts["term_ids"].values()] + ["news", "tutorial", "wordpress"]
        self.comment_ids = [str(i) for ids in facts["comment_ids"].values() for i in ids]
        self.user_refs = [str(i) for i in facts["users"].values()] + list(facts["users"])
        self._hostile = False
        self.read_paths = sorted(
            p
            for p, e in ALLOWED_COMMANDS.items()
            if e.category is PolicyCategory.READ and p not in NEWER_THAN_PINNED
        )
        self.read_samples = sample_positionals(facts)
        self.paths = sorted(WRITE_EFFECTS)
        self.weights = [_WEIGHT.get(p[-1], 1.0) for p in self.paths]

    def command(self, rng: random.Random) -> str:
        """A command of a write path: about half stay with values the declaration accepts (so many run),
        the rest mix in undeclared flags and hostile values. One in six is a read (which must change
        nothing), with the flags its synopsis offers and WP-CLI's global ones."""
        if rng.random() < 1 / 6:
            return self._read(rng)
        path = rng.choices(self.paths, weights=self.weights)[0]
        effect = WRITE_EFFECTS[path]
        self._hostile = rng.random() < 0.45
        argv = [*path, *self._positionals(rng, path, effect)]
        for _ in range(rng.choice((0, 1, 1, 2, 2, 3))):
            argv.append(self._flag(rng, path, effect))
        if path == ("site", "create") and not any(a.startswith("--slug=") for a in argv):
            argv.append(f"--slug=site{rng.randrange(1000)}")
        if rng.random() < 0.1:
            argv.append(OTHER_SITE)
        return shlex.join(argv)

    def _read(self, rng: random.Random) -> str:
        path = rng.choice(self.read_paths)
        argv = [*path, *rng.choice(self.read_samples.get(path, [[]]))]
        offered = _FLAG.findall(self.synopses.get(path, ""))
        for _ in range(rng.choice((0, 1, 2))):
            if offered and rng.random() < 0.6:
                argv.append(f"--{rng.choice(offered)}")
            else:
                argv.append(rng.choice(READ_GLOBALS))
        return shlex.join(argv)

    # -- positional arguments -------------------------------------------------------------------

    def _positionals(self, rng: random.Random, path: tuple[str, ...], effect: Effect) -> list[str]:
        pools = self._positional_pools(path)
        count = len(effect.args) + (rng.choice((0, 0, 1)) if effect.repeat and effect.args else 0)
        values: list[str] = []
        for index in range(count):
            check = effect.args[min(index, len(effect.args) - 1)]
            pool = pools[min(index, len(pools) - 1)] if pools else []
            values.append(self._value(rng, check, pool))
        if path == ("media", "import"):  # the test internet's image, a missing one, or a refused source
            choices = [SAMPLE_IMAGE_URL] * 4 + [MISSING_IMAGE_URL, "/etc/passwd", "http://127.0.0.1/x.jpg"]
            values = [rng.choice(choices) if self._hostile else SAMPLE_IMAGE_URL]
        if path[-1] in {"add", "update"} and path[1:2] == ("meta",) and self._hostile and rng.random() < 0.3:
            values[-1] = json.dumps(
                {"file": rng.choice(HOSTILE), "sizes": {"thumbnail": {"file": rng.choice(HOSTILE)}}}
            )
        # A setting's value drawn from what its own check accepts (so listed settings really run).
        named = {
            ("option", "add"): OPTIONS,
            ("option", "update"): OPTIONS,
            ("theme", "mod", "set"): THEME_MODS,
        }
        listed = named.get(path, {}).get(values[0]) if values else None
        if listed is not None and len(values) > 1 and (not self._hostile or rng.random() < 0.5):
            values[1] = rng.choice(listed.samples or HOSTILE)
        return values

    def _positional_pools(self, path: tuple[str, ...]) -> list[list[str]]:
        posts, meta_keys = self.post_ids + self.attachment_ids, list(PUBLIC_META + PROTECTED_META)
        table: dict[tuple[str, ...], list[list[str]]] = {
            ("post", "update"): [posts + self.menu_item_ids],
            ("post", "term", "add"): [posts, list(TAXONOMIES), [*self.term_refs, "新着"]],
            ("media", "regenerate"): [[*self.attachment_ids, "45", "999"]],
            ("term", "create"): [list(TAXONOMIES), ["お知らせ", "news2", "<b>x</b>"]],
            ("term", "update"): [list(TAXONOMIES), self.term_refs],
            ("term", "recount"): [list(TAXONOMIES)],
            ("menu", "create"): [["メインメニュー2", "x", "main-menu"]],
            ("menu", "item", "add-post"): [["main-menu", "footer-menu", "10"], posts],
            ("menu", "item", "add-term"): [["main-menu", "footer-menu"], list(TAXONOMIES), self.term_refs],
            ("menu", "item", "add-custom"): [
                ["main-menu"],
                ["公式", "x"],
                ["https://example.com/", *HOSTILE[:6]],
            ],
            ("menu", "item", "update"): [self.menu_item_ids],
            ("menu", "location", "assign"): [["main-menu", "footer-menu"], ["primary", "footer", "x"]],
            ("theme", "get"): [["twentytwentyone", "twentytwentythree", "../x"]],
            ("theme", "status"): [["twentytwentyone"]],
            ("plugin", "status"): [["akismet", "hello"]],
            ("theme", "mod", "set"): [
                list(THEME_MOD_NAMES),
                ["#ffffff", "blank", "58", "60", "1", *HOSTILE[:8]],
            ],
            ("widget", "add"): [list(WIDGETS), ["sidebar-1", "wp_inactive_widgets"], ["1", "2"]],
            ("user", "update"): [self.user_refs],
            ("user", "add-role"): [self.user_refs, list(ROLES)],
            ("option", "update"): [self.option_names, ["10", "text/plain", "page", "6", "1", *HOSTILE]],
            ("transient", "get"): [["argo_note_feed_cache", "argo_note_stale_cache", "doing_cron", "x"]],
        }
        table[("post", "term", "set")] = table[("post", "term", "remove")] = table[("post", "term", "add")]
        table[("option", "add")] = table[("option", "update")]
        table[("menu", "location", "remove")] = table[("menu", "location", "assign")]
        table[("transient", "delete")] = table[("transient", "get")]
        for verb in ("approve", "unapprove", "spam", "unspam", "untrash", "recount", "update"):
            table[("comment", verb)] = [self.comment_ids]
        for verb in ("update", "move", "deactivate"):
            table[("widget", verb)] = [list(WIDGET_IDS)]
        owners = {"post": posts, "term": self.term_refs, "user": self.user_refs}
        for family, refs in owners.items():
            keys = list(USER_META) if family == "user" else meta_keys
            if not self._hostile:  # mostly keys a write may set, now and then one it may not
                keys = [
                    k for k in keys if not k.startswith("_") or k in LISTED_PROTECTED.get(family, {})
                ] + keys[:3]
            for verb in ("add", "update"):
                table[(family, "meta", verb)] = [refs, keys, []]
            table[(family, "meta", "patch")] = [["insert", "update"], refs, keys, ["a", "sizes", "file"], []]
        if path[:1] == ("language",) or path == ("site", "switch-language"):
            return [list(LANGUAGES)]
        return table.get(path, [])

    # -- flags ----------------------------------------------------------------------------------

    def _flag(self, rng: random.Random, path: tuple[str, ...], effect: Effect) -> str:
        declared = sorted(effect.fields)
        if declared and (not self._hostile or rng.random() < 0.6):
            name = rng.choice(declared)
            check = effect.fields[name]
            if check.accepts(None) and (not self._hostile or rng.random() < 0.7):
                return f"--{name}"
            return f"--{name}={self._value(rng, check, self._field_pool(name))}"
        if not self._hostile:
            return OTHER_SITE if rng.random() < 0.5 else "--quiet"
        offered = _FLAG.findall(self.synopses.get(path, ""))
        undeclared = [f for f in offered if f not in effect.fields]
        if undeclared and rng.random() < 0.5:
            return f"--{rng.choice(undeclared)}={rng.choice(HOSTILE)}"
        return rng.choice(DANGER_FLAGS)

    def _field_pool(self, name: str) -> list[str]:
        ids: dict[str, list[str]] = {
            "post_id": self.post_ids, "post_parent": self.post_ids, "comment_post_id": self.post_ids,
            "comment_parent": self.comment_ids, "post_author": self.user_refs[:4], "parent": self.term_refs,
            "parent-id": self.menu_item_ids, "attachment_id": self.attachment_ids,
        }  # fmt: skip
        if name == "slug":  # a new site's address: plain, reserved by WordPress, a main-site page's
            return ["tokyo", "news2026", "about", "contact", "sample-page", "wp-admin", "blog", "files",
                    "en", "shop", "Blog_1", "www"]  # fmt: skip
        if name == "meta_input":
            return [self._meta_input(random.Random(seed)) for seed in range(8)]
        return ids.get(name, [])

    @staticmethod
    def _meta_input(rng: random.Random) -> str:
        keys = rng.sample(PUBLIC_META + PROTECTED_META, k=rng.choice((1, 2)))
        values: list[Any] = ["58", "x", *HOSTILE[:4], {"file": "../../wp-config.php"}]
        return json.dumps({k: rng.choice(values) for k in keys}, ensure_ascii=False)

    def _value(self, rng: random.Random, check: ValueCheck, pool: list[str]) -> str:
        if not self._hostile:  # the site's own objects first, else the declaration's samples
            accepted = [v for v in pool if check.accepts(v)] or [v for v in check.samples if check.accepts(v)]
            if accepted:
                return rng.choice(accepted)
        accepted = [v for v in [*check.samples, *pool] if check.accepts(v)]
        if accepted and rng.random() < 0.5:
            return rng.choice(accepted)
        return rng.choice([*pool, *HOSTILE] if pool else HOSTILE)


def synopses_of(wp: Callable[..., Any]) -> dict[tuple[str, ...], str]:
    """Every WP-CLI command's synopsis, from the real WP-CLI (`wp cli cmd-dump`)."""
    done = wp("cli", "cmd-dump")
    found: dict[tuple[str, ...], str] = {}

    def walk(node: dict[str, Any], path: tuple[str, ...]) -> None:
        for sub in node.get("subcommands", []):
            here = (*path, sub["name"])
            found[here] = sub.get("synopsis") or ""
            walk(sub, here)

    walk(json.loads(done.stdout), ())
    return found
