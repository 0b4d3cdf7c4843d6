"""Issue 24: known effects. Every write of the command table has a declared effect; a command inside it
is a write, one outside waits for approval or is refused; the site confirms what the argv cannot."""

from __future__ import annotations

import json

import pytest

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.command_table import ALLOWED_COMMANDS
from wp_agent.policy.effects.declaration import Names, Rows
from wp_agent.policy.effects.media_files import stored_names_confined
from wp_agent.policy.effects.meta_keys import holds_file_path
from wp_agent.policy.effects.table import WRITE_EFFECTS, check_declarations
from wp_agent.policy.post_targets import guard_post_targets

POLICY = CommandPolicy()
R, W, D, B = PolicyCategory.READ, PolicyCategory.WRITE, PolicyCategory.DESTRUCTIVE, PolicyCategory.BLOCKED


def test_every_write_path_declares_its_effect() -> None:
    check_declarations()
    writes = {path for path, entry in ALLOWED_COMMANDS.items() if entry.category is W}
    assert writes == set(WRITE_EFFECTS)
    assert all(
        effect.changes or effect.files or path == ("cache", "flush") for path, effect in WRITE_EFFECTS.items()
    )


@pytest.mark.parametrize(
    ("command", "expected"),
    [(c, W) for e in WRITE_EFFECTS.values() for c in e.match]
    + [(c, None) for e in WRITE_EFFECTS.values() for c in e.not_match],
)
def test_the_declarations_examples_through_the_whole_policy(
    command: str, expected: PolicyCategory | None
) -> None:
    category = POLICY.classify(command).category
    if expected is None:
        assert category in {D, B}, command
    else:
        assert category is expected, (command, POLICY.classify(command).reason_ja)


FILE_PATH_FORMS = [
    "post meta update 58 _wp_attachment_metadata '{\"sizes\":{}}' --format=json",
    "post meta add 58 _wp_attached_file ../../wp-config.php",
    "post meta patch update 58 _wp_attachment_metadata sizes thumbnail file ../../wp-config.php",
    "post meta update 58 _wp_attachment_backup_sizes x",
    "post meta update 58 _wp_attachment_context x",
    "post meta set 58 _WP_ATTACHED_FILE x",
    "post meta update 58 ' _wp_attached_file' x",
    'post update 58 --meta_input=\'{"_wp_attachment_metadata":{"file":"../../wp-config.php"}}\'',
    'post update 58 --meta_input=\'{"_wp_attached\\u200bfile":"x"}\'',
    'post create --post_title=x --meta_input=\'{"_wp_attached_file":"x"}\'',
    "post create --post_type=attachment --post_title=x",
    "post update 45 --post_type=ATTACHMENT",
    "post update 58 --file=../../../../wp-config.php",
    "media import https://example.com/a.jpg --skip-copy",
    "media import https://example.com/a.jpg --file_name=../../wp-config.php",
    "term meta update 3 _wp_attached_file x",
    "user meta update 3 _wp_attachment_metadata x",
    "post meta update 45 download_path /etc/passwd",
    "post meta update 45 _downloadable_files x",
]


@pytest.mark.parametrize("command", FILE_PATH_FORMS)
def test_file_paths_and_attachment_data_are_refused_in_every_form(command: str) -> None:
    decision = POLICY.classify(command)
    assert decision.category is B, (decision.rule, decision.reason_ja)


def test_the_file_path_class_is_by_name_not_by_list() -> None:
    assert holds_file_path("_wp_attachment_some_future_key")
    assert holds_file_path("templateFilePath")
    assert holds_file_path("_custom_upload_dir")
    assert not holds_file_path("_wp_attachment_image_alt")
    assert not holds_file_path("_thumbnail_id")
    assert not holds_file_path("profile")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("post meta update 45 _thumbnail_id 58", W),
        ("post meta update 45 _thumbnail_id 58abc", D),
        ("post meta update 45 _thumbnail_id '[58]' --format=json", D),
        ("post meta update 45 _wp_page_template template-full-width.php", D),  # WordPress includes it raw
        ("post meta update 45 _wp_page_template default", W),
        ("post meta update 45 _wp_page_template ../../wp-config.php", D),
        ("post meta update 45 _edit_lock 1", D),
        ("post meta update 45 _wp_agent_publish_id art_0123456789abcdef0123", W),  # an article job's id
        ("post meta update 45 _wp_agent_publish_id 0123456789abcdef0123456789abcdef", W),  # a random token
        ("post meta update 45 _wp_agent_publish_id art_../../wp-config.php", D),
        ("post meta update 45 _yoast_wpseo_title x", D),
        # meta is stored past kses and printed by themes: what kses would take out waits
        ("post meta update 45 subtitle '<script>x</script>'", D),
        ("post meta update 45 subtitle '<b>x</b>'", W),
        ("user meta update 1 description '<script>x</script>'", D),
        ("post meta update 45 subtitle '{\"a\":1}' --format=json", W),
        ("post meta update 45 stripe_secret x", D),
        ("term meta update 3 color '#ff0000'", W),
        ("term meta update 3 _color x", D),
        ("user meta update 3 description 自己紹介", W),
        ("user meta update 3 _private x", D),
        ("user meta update 3 locale ../../../../tmp/evil", D),  # WordPress loads <locale>.mo / .l10n.php
        ("user meta update 3 locale ja", W),
        ("user meta update 3 primary_blog 2", D),
        ("option update posts_per_page 10", W),
        ("option update posts_per_page 0", D),
        ("option update posts_per_page 10 --format=json", D),
        ("option update timezone_string Asia/Tokyo", W),
        ("option update timezone_string Mars/Base", D),
        ("option update start_of_week 7", D),
        ("option update default_comment_status closed", W),
        ("option update mailserver_pass x", D),
        ("option add some_plugin_setting x", D),
        ("option patch update posts_per_page 10", D),
        ("theme mod set background_color '#ffffff'", W),
        ("theme mod set background_color 'red;x'", D),
        ("theme mod set header_image https://evil.example/x.png", D),
        ("widget add text sidebar-1 --title=x", W),
        ("widget add rss sidebar-1 --url=https://example.com/feed", D),
        ("post create --post_title=x --post_status=trash", D),
        ("post create --post_title=x --post_type=product", D),
        ("post create --post_title=x --to_ping=http://169.254.169.254/", D),
        ("post create --post_title=x --import_id=1", D),
        ("comment create --comment_post_ID=1 --comment_content=x --user_id=1", D),
        ("site create --slug=news", W),
        ("site create --slug=wp-admin", D),  # WordPress's reserved names on a sub-directory network
        ("site create --slug=blog", D),
        ("site create --slug=Blog_1", D),
        ("site create --slug=news --email=x@example.test", D),
        ("rewrite flush --hard", D),
        ("plugin update akismet", D),
        ("plugin install akismet", D),
        ("plugin activate akismet", D),
        ("user add-role 3 contributor", W),
        ("user add-role 3 editor", D),
    ],
)
def test_keys_values_and_fields_inside_or_outside(command: str, expected: PolicyCategory) -> None:
    decision = POLICY.classify(command)
    assert decision.category is expected, (decision.rule, decision.reason_ja)


def test_stored_file_names_must_stay_in_the_attachment_folder() -> None:
    def rows(file: object, metadata: object) -> str:
        return json.dumps([{"meta_key": "_wp_attached_file", "meta_value": file},
                           {"meta_key": "_wp_attachment_metadata", "meta_value": metadata}])  # fmt: skip

    good = {
        "file": "2024/05/a.jpg",
        "sizes": {"thumbnail": {"file": "a-150x150.jpg"}},
        "original_image": "a.jpg",
    }
    assert stored_names_confined(rows("2024/05/a.jpg", good))
    assert stored_names_confined(rows("2024/05/a.pdf", ""))
    assert stored_names_confined("[]")
    for bad_size in ("../../../../wp-config.php", "/etc/passwd", "sub/a.jpg", "..", "a\\b.jpg", "phar:x"):
        assert not stored_names_confined(rows("2024/05/a.jpg", {**good, "sizes": {"t": {"file": bad_size}}}))
    for bad_file in ("../wp-config.php", "/var/www/a.jpg", "phar://a.jpg", "2024/../../a.jpg"):
        assert not stored_names_confined(rows(bad_file, good))
    assert not stored_names_confined(rows("2024/05/a.jpg", {**good, "original_image": "../x.php"}))
    assert not stored_names_confined(rows("2024/05/a.jpg", {**good, "sizes": "x"}))
    assert not stored_names_confined(None)
    assert not stored_names_confined("not json")


def _reader(answers: dict[str, str | None]) -> tuple[list[list[str]], object]:
    calls: list[list[str]] = []

    def read(argv: list[str]) -> str | None:
        calls.append(argv)
        if argv[:2] == ["post", "list"] and "--post_type=attachment" in argv:
            return answers.get("attachments")
        if argv[:3] == ["post", "meta", "list"]:
            return answers.get("storage")
        if argv[:3] == ["post", "list", "--post_type=page"]:
            return answers.get("pages", "")
        if argv[:2] == ["post", "get"]:
            return answers.get(f"type of {argv[2]}", "post")
        if "--orderby=ID" in argv:  # the newest post's ID (policy/post_targets.py newest_post_read)
            return answers.get("newest")
        return answers.get("types", "")

    return calls, read


@pytest.mark.parametrize(
    ("command", "answers", "expected", "rule"),
    [
        ("post meta update 45 _thumbnail_id 58", {"attachments": "58\n"}, W, "allow.post.meta.update"),
        ("post meta update 45 _thumbnail_id 45", {"attachments": ""}, D, "confirm.site_check"),
        ("post meta update 45 _thumbnail_id 58", {"attachments": None}, D, "confirm.site_check"),
        (
            'post update 45 --meta_input=\'{"_thumbnail_id":"12"}\'',
            {"attachments": ""},
            D,
            "confirm.site_check",
        ),
        ("theme mod set custom_logo 59", {"attachments": "59"}, W, "allow.theme.mod.set"),
        ("media regenerate 58 --yes", {"storage": "[]"}, W, "allow.media.regenerate"),
        (
            "media regenerate 58 --yes",
            {
                "storage": json.dumps(
                    [
                        {
                            "meta_key": "_wp_attachment_metadata",
                            "meta_value": {"sizes": {"t": {"file": "../../../../wp-config.php"}}},
                        }
                    ]
                )
            },
            B,
            "blocked.site_check",
        ),
        ("media regenerate 58 --yes", {"storage": None}, B, "blocked.site_check"),
        ("post meta update 45 subtitle x", {}, W, "allow.post.meta.update"),
        ("post update 45 --post_title=x", {}, W, "allow.post.update"),
        ("post update 61 --post_status=draft", {"type of 61": "nav_menu_item"}, D, "confirm.site_check"),
        ("post update 45 61 --post_title=x", {"type of 61": "wp_block"}, D, "confirm.site_check"),
        # 47 is not found: below a post the site has it stays missing (IDs are not given again) ...
        (
            "post update 45 47 --post_status=publish",
            {"type of 47": None, "newest": "60"},
            W,
            "allow.post.update",
        ),
        # ... but at the top it may be the revision the update of 45 saves before WP-CLI reaches 47
        (
            "post update 45 47 --post_status=publish",
            {"type of 47": None, "newest": "46"},
            D,
            "confirm.site_check",
        ),
        (
            "post update 45 47 --post_status=publish",
            {"type of 47": None, "newest": None},
            D,
            "confirm.site_check",
        ),
        (
            "post update 47 45 --post_status=publish",
            {"type of 47": None, "newest": "46"},
            W,
            "allow.post.update",
        ),
        ("post meta update 3 views 7", {"type of 3": "revision"}, D, "confirm.site_check"),  # → its post
        ("post meta patch insert 3 views a 1", {"type of 3": "revision"}, D, "confirm.site_check"),
        ("post meta update 47 views 7", {"type of 47": None}, W, "allow.post.meta.update"),  # not found
        (
            "media import https://example.com/a.jpg --post_id=47 --featured_image",  # the import's own post
            {"type of 47": None, "newest": "46"},
            D,
            "confirm.site_check",
        ),
        (
            "media import https://example.com/a.jpg --post_id=3 --featured_image",
            {"type of 3": "revision"},
            D,
            "confirm.site_check",
        ),
        ("site create --slug=tokyo --title=x", {"pages": ""}, W, "allow.site.create"),
        ("site create --slug=about --title=x", {"pages": "5"}, D, "confirm.site_check"),  # a page's address
        ("site create --slug=about --title=x", {"pages": None}, D, "confirm.site_check"),
    ],
)
def test_the_site_confirms_what_the_argv_cannot(
    command: str, answers: dict[str, str | None], expected: PolicyCategory, rule: str
) -> None:
    calls, read = _reader(answers)
    decision = guard_post_targets(POLICY.classify(command), read)  # type: ignore[arg-type]
    assert (decision.category, decision.rule) == (expected, rule), decision.reason_ja
    for argv in calls:
        assert POLICY.classify_argv(argv).category is R, argv  # every check is itself a policy-checked read


@pytest.mark.parametrize(
    ("command", "newest", "expected"),
    [
        ("post meta update 47 views 7", "60", W),
        ("post meta update 47 views 7", "46", D),
        ("post meta update 47 views 7", None, D),
        ("post update 47 --post_title=x", "46", D),
    ],
)
def test_a_missing_post_next_to_other_changes_of_the_reply_confirms_only_below_the_newest(
    command: str, newest: str | None, expected: PolicyCategory
) -> None:
    """Seen on the real sandbox: `post update 45 --post_content=…` and `post meta update <next ID> …`
    in one reply — the update saved its revision with that ID and the meta went to post 45."""
    calls, read = _reader({"type of 47": None, "newest": newest})
    decision = guard_post_targets(POLICY.classify(command), read, alone_in_reply=False)  # type: ignore[arg-type]
    assert decision.category is expected, decision.reason_ja
    if expected is D:
        assert "ID 47 の投稿はまだありません" in decision.reason_ja
    assert any("--orderby=ID" in argv for argv in calls)


def test_a_key_the_command_gives_is_matched_as_written_and_only_names_are_globs() -> None:
    """Found by the long run (seed 2404): `user meta add admin '[1,2]' …` wrote the key `[1,2]`, which
    the check read as a glob class (matching `1`, `,` or `2`) and reported outside the declaration."""
    argv = ("user", "meta", "add", "admin", "[1,2]", "x")
    cmd = ParsedCommand.from_argv(argv)
    (rows,) = WRITE_EFFECTS[argv[:3]].changes
    assert rows.allows_key("[1,2]", cmd, argv[:3])
    assert rows.allows_key("[1,2]".upper(), cmd, argv[:3])  # MySQL compares keys case-insensitively
    assert not rows.allows_key("1", cmd, argv[:3])
    transients = Rows("options", keys=(Names(("_transient_*",)),))
    assert transients.allows_key("_transient_theme_roots", cmd, argv[:3])
    assert not transients.allows_key("siteurl", cmd, argv[:3])
