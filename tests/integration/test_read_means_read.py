"""Property on the real WordPress: a command the policy calls `read` changes nothing.

The corpus is generated, not hand-picked: for every `read` entry of the command table, sample
arguments for its positionals (below), then the real WP-CLI's own synopsis (`wp cli cmd-dump`) adds
every `--format` it offers, every switch it has (`--skip-update-check`, `--force-check`, `--all`…)
and a run on another site of the network (`--url`). Each form the policy classifies as `read` runs on
the seeded site; afterwards CHECKSUM TABLE and AUTO_INCREMENT of every table of every site, and the
uploads directory (names and contents), must be exactly as before. A read that changes state is a
policy bug: the policy classifies it as a write (see command_table.py / argument_rules.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes.wordpress import TestWordPress
from tests.fakes.wordpress_fixtures import OLDER_GROUP
from wp_agent.executors.ability_reads import ABILITY_READS
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.command_table import ALLOWED_COMMANDS, NEWER_THAN_PINNED

# Both releases of the version matrix: the older site is started on one worker only.
pytestmark = pytest.mark.xdist_group(OLDER_GROUP)

POLICY = CommandPolicy()
OTHER_SITE = "--url=https://example.test/en/"
# The Abilities registry's reads are answered by our reader where WP-CLI has no ability command (the
# pinned one): tests/integration/test_ability_reads.py proves them on the real site, tables compared.
# Reads newer than the pinned phar cannot run here: they are read by the command reference.
READ_PATHS = sorted(
    path
    for path, entry in ALLOWED_COMMANDS.items()
    if entry.category is PolicyCategory.READ and path not in ABILITY_READS and path not in NEWER_THAN_PINNED
)


def sample_positionals(facts: dict[str, Any]) -> dict[tuple[str, ...], list[list[str]]]:
    """Arguments an agent would give each read command on the sample site (IDs from the seed's facts)."""
    term = str(facts["term_ids"]["category:news"])
    comment = str(facts["comment_ids"]["approved"][0])
    trashed = str(facts["comment_ids"]["trash"][0])
    hero = str(facts["attachment_ids"]["hero-image"])
    return {
        ("post", "get"): [["45"], ["10"]],
        ("post", "exists"): [["45"], [str(facts["missing_post_id"])]],
        ("post", "url-to-id"): [["https://example.test/blog/seo-basics/"]],
        ("post", "meta", "list"): [["10"]],
        ("post", "meta", "get"): [["10", "views"]],
        ("post", "meta", "pluck"): [[hero, "_wp_attachment_metadata", "width"]],
        ("post", "term", "list"): [["10", "category", "post_tag"]],
        ("post-type", "get"): [["post"]],
        ("taxonomy", "get"): [["category"]],
        ("term", "list"): [["category", "post_tag"]],
        ("term", "get"): [["category", term], ["category", "news", "--by=slug"]],
        ("term", "meta", "list"): [[term]],
        ("term", "meta", "get"): [[term, "color"]],
        ("term", "meta", "pluck"): [[term, "color", "hex"]],
        ("comment", "get"): [[comment]],
        ("comment", "count"): [[], ["10"]],
        ("comment", "exists"): [[comment]],
        ("comment", "status"): [[comment]],
        ("menu", "item", "list"): [["main-menu"]],
        ("theme", "get"): [["twentytwentyone"]],
        ("theme", "status"): [[], ["twentytwentyone"]],
        ("theme", "search"): [["twenty"]],
        ("theme", "is-installed"): [["twentytwentyone"]],
        ("theme", "is-active"): [["twentytwentyone"]],
        ("theme", "mod", "get"): [["nav_menu_locations"]],
        ("widget", "list"): [["sidebar-1"]],
        ("plugin", "get"): [["akismet"]],
        ("plugin", "status"): [[], ["akismet"]],
        ("plugin", "search"): [["seo"]],
        ("plugin", "is-installed"): [["akismet"]],
        ("plugin", "is-active"): [["akismet"]],
        ("plugin", "verify-checksums"): [["akismet"]],
        ("plugin", "auto-updates", "status"): [["akismet"]],
        ("language", "plugin", "list"): [["akismet"]],
        ("language", "theme", "list"): [["twentytwentyone"]],
        ("user", "get"): [["hanako"]],
        ("user", "list-caps"): [["hanako"]],
        ("user", "meta", "list"): [["hanako"]],
        ("user", "meta", "get"): [["hanako", "nickname"]],
        ("user", "meta", "pluck"): [["hanako", "nickname", "0"]],  # privilege keys are refused even to read
        ("user", "session", "list"): [["hanako"]],
        ("role", "exists"): [["editor"]],
        ("cap", "list"): [["editor"]],
        ("option", "get"): [["blogname"]],
        ("option", "pluck"): [["theme_mods_twentytwentyone", "nav_menu_locations"]],
        ("site", "option", "get"): [["site_name"]],
        # The second is an expired transient (the seed has one, as real sites do).
        ("transient", "get"): [["argo_note_feed_cache"], ["argo_note_stale_cache"]],
        ("help",): [["post", "list"]],
        ("config", "get"): [["table_prefix"], ["DB_NAME"]],
        ("config", "has"): [["WP_DEBUG"]],
        ("config", "is-true"): [["MULTISITE"]],
        ("db", "columns"): [["wp_posts"]],
        ("comment", "meta", "list"): [[comment]],
        ("site", "meta", "list"): [["2"]],
        ("network", "meta", "list"): [["1"]],
        ("network", "meta", "get"): [["1", "site_name"]],
        ("network", "meta", "pluck"): [["1", "site_admins", "0"]],
        ("site", "option", "pluck"): [["site_admins", "0"]],
        ("user", "term", "list"): [["1", "category"]],
        ("language", "core", "is-installed"): [["ja"]],
        ("language", "plugin", "is-installed"): [["akismet", "ja"]],
        ("language", "theme", "is-installed"): [["twentytwentyone", "ja"]],
        # A trashed comment keeps its status and time as meta; site 2 has a plan record (the seed).
        ("comment", "meta", "get"): [[trashed, "_wp_trash_meta_status"]],
        ("comment", "meta", "pluck"): [[trashed, "_wp_trash_meta_time"]],
        ("site", "meta", "get"): [["2", "argo_note_plan"]],
        ("site", "meta", "pluck"): [["2", "argo_note_plan", "tier"]],
        ("option", "get-autoload"): [["blogname"]],
        ("cache", "supports"): [["add_multiple"]],
        ("embed", "cache", "find"): [["https://www.youtube.com/watch?v=dQw4w9WgXcQ"]],
    }


def read_only_forms(facts: dict[str, Any]) -> list[list[str]]:
    """Writing commands that a flag makes a read (policy/read_only_flags.py): proven here like reads."""
    hero = str(facts["attachment_ids"]["hero-image"])
    return [
        ["media", "fix-orientation", hero, "--dry-run"],
        ["media", "fix-orientation", "--dry-run"],
        ["embed", "provider", "match", "https://www.youtube.com/watch?v=dQw4w9WgXcQ", "--no-discover"],
    ]


def _synopses(site: TestWordPress) -> dict[tuple[str, ...], tuple[str, str]]:
    """(synopsis, long description) of every WP-CLI command, from the real WP-CLI."""
    done = site.wp("cli", "cmd-dump")
    assert done.returncode == 0, done.stderr
    found: dict[tuple[str, ...], tuple[str, str]] = {}

    def walk(node: dict[str, Any], path: tuple[str, ...]) -> None:
        for sub in node.get("subcommands", []):
            here = (*path, sub["name"])
            found[here] = (sub.get("synopsis") or "", sub.get("longdesc") or "")
            walk(sub, here)

    walk(json.loads(done.stdout), ())
    return found


def _formats(longdesc: str) -> list[str]:
    """The `options:` listed under [--format=<format>] in the command's own documentation."""
    block = re.search(r"\[--format=<format>\]\n.*?options:\n((?:\s+- \S+\n)+)", longdesc, re.DOTALL)
    return re.findall(r"- (\S+)", block.group(1)) if block else []


def generate_forms(
    path: tuple[str, ...], synopsis: str, longdesc: str, positionals: list[list[str]]
) -> Iterator[list[str]]:
    switches = re.findall(r"\[--([a-z][a-z0-9-]*)\]", synopsis)
    for arguments in positionals:
        base = [*path, *arguments]
        yield base
        yield from ([*base, f"--format={fmt}"] for fmt in _formats(longdesc))
        yield from ([*base, f"--{switch}"] for switch in switches)
    yield [*path, *positionals[0], OTHER_SITE]


@pytest.fixture(scope="module")
def corpus(matrix_wordpress: TestWordPress) -> list[list[str]]:
    """The read forms, on each release of the version matrix (its facts give the sample IDs)."""
    wordpress = matrix_wordpress
    if wordpress.dirty:
        wordpress.reset()
    synopses = _synopses(wordpress)
    samples = sample_positionals(wordpress.facts)
    forms: list[list[str]] = []
    for path in READ_PATHS:
        synopsis, longdesc = synopses[path]
        required = re.sub(r"\[[^\]]*\]", "", synopsis)
        positionals = samples.get(path, [[]])
        assert positionals != [[]] or "<" not in required, (
            f"no sample arguments for `{' '.join(path)}`: {synopsis}"
        )
        forms += [
            form
            for form in generate_forms(path, synopsis, longdesc, positionals)
            if POLICY.classify_argv(form).category is PolicyCategory.READ
        ]
    flagged = read_only_forms(wordpress.facts)
    assert all(POLICY.classify_argv(form).category is PolicyCategory.READ for form in flagged)
    return forms + flagged


def state(site: TestWordPress) -> dict[str, Any]:
    """What a write would change: every table (checksum, next ID) of every site, every uploaded file."""
    return {"tables": site.site.table_state(), "uploads": site.uploads_listing()}


def _changes(site: TestWordPress, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    tables = sorted(
        t for t in {*before["tables"], *after["tables"]} if before["tables"].get(t) != after["tables"].get(t)
    )
    uploads = sorted(set(before["uploads"].items()) ^ set(after["uploads"].items()))
    return tables + [f"uploads/{name}" for name, _ in uploads]


def test_the_command_table_names_only_real_wp_cli_commands(seeded_wordpress: TestWordPress) -> None:
    """An allowed path WP-CLI does not have is a rule nobody can check (`user exists` was one)."""
    # The Abilities reads: WP-CLI's where it has them, else ours; newer commands: read by the reference.
    real = set(_synopses(seeded_wordpress)) | ABILITY_READS | NEWER_THAN_PINNED
    assert sorted(" ".join(path) for path in ALLOWED_COMMANDS if path not in real) == []


def test_the_corpus_covers_every_read_entry(corpus: list[list[str]]) -> None:
    covered = {path for path in READ_PATHS for form in corpus if tuple(form[: len(path)]) == path}
    assert covered == set(READ_PATHS)
    assert len(corpus) > 2 * len(READ_PATHS)  # formats, switches and another site, not just the bare commands


def _never_checked(site: TestWordPress) -> None:
    """From the seed, and as if WordPress had never checked for updates: whether a lookup runs an update
    check (and stores its result) would otherwise depend on how old the seed's last check is."""
    site.reset()
    done = site.wp("transient", "delete", "--all", "--network")
    assert done.returncode == 0, done.stderr


def _by_site(corpus: list[list[str]]) -> dict[str | None, list[list[str]]]:
    """The forms per site they run on (the --url of another site, or the main one), without that flag."""
    sites: dict[str | None, list[list[str]]] = {}
    for form in corpus:
        url = next((word.split("=", 1)[1] for word in form if word.startswith("--url=")), None)
        sites.setdefault(url, []).append([word for word in form if not word.startswith("--url=")])
    return sites


def writes_among(site: TestWordPress, corpus: list[list[str]]) -> dict[str, list[str]]:
    """The forms of `corpus` that changed the site, with what each changed."""
    _never_checked(site)
    seeded = state(site)
    findings: dict[str, list[str]] = {}
    # In batches, each run inside one WP-CLI process on its site (WordPress boots once per batch, as it
    # boots for each command; every command then runs as WP-CLI runs it, hooks included): a batch that
    # changed nothing is cleared at once. One that did is replayed from the seed command by command, each
    # in a process of its own, to name the commands that wrote.
    for url, forms in _by_site(corpus).items():
        for start in range(0, len(forms), 40):
            chunk = forms[start : start + 40]
            site.wp_batch(chunk, url=url)
            if state(site) == seeded:
                continue
            _never_checked(site)
            for form in chunk:
                command = [*form, *([f"--url={url}"] if url else [])]
                site.wp(*command)
                after = state(site)
                if after != seeded:
                    findings[" ".join(command)] = _changes(site, seeded, after)
                    _never_checked(site)
    return findings


def test_read_commands_change_nothing(
    matrix_wordpress: TestWordPress, corpus: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh_wordpress = matrix_wordpress
    fresh_wordpress.dirty = True
    started: list[tuple[str, ...]] = []
    real_wp = fresh_wordpress.site.wp

    def counted(*args: str, **kwargs: Any) -> Any:
        started.append(args)
        return real_wp(*args, **kwargs)

    monkeypatch.setattr(fresh_wordpress.site, "wp", counted)
    findings = writes_among(fresh_wordpress, corpus)
    assert findings == {}, "read commands that changed the site:\n" + "\n".join(
        f"  wp {command}: {', '.join(changed)}" for command, changed in findings.items()
    )
    # The suite's time budget: the forms share WP-CLI processes (one per batch, and one for each
    # command that ends its process), not one each.
    assert len(started) < len(corpus) / 8, len(started)


def test_a_write_among_the_reads_is_named(matrix_wordpress: TestWordPress, corpus: list[list[str]]) -> None:
    """The batches see what a write changes, on either site, and the replay names the command."""
    fresh_wordpress = matrix_wordpress
    fresh_wordpress.dirty = True
    write = ["option", "update", "blogdescription", "書き込み"]
    mixed = [*corpus[:3], write, ["help", "post", "list"], [*write, OTHER_SITE], *corpus[3:5]]
    findings = writes_among(fresh_wordpress, mixed)
    assert sorted(findings) == [" ".join(write), " ".join([*write, OTHER_SITE])]
    assert all(any(t.endswith("options") for t in changed) for changed in findings.values()), findings
