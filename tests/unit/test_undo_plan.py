"""The undo package without a site: what is revertible up front, images, conflicts, masking.
(On the real WordPress: tests/integration/test_undo_corpus.py.)"""

from __future__ import annotations

import json

from wp_agent.executors.port import CommandResult
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.approval_summary import describe
from wp_agent.undo.capture import assess, capture_before, record_after, with_undo_note
from wp_agent.undo.plan import RunCommand, build_plan

POLICY = CommandPolicy()


class FakeOptions:
    """A site's options as `option list --search=<name> --unserialize --format=json` shows them."""

    def __init__(self, **options: object) -> None:
        self.options = dict(options)
        self.autoload: dict[str, str] = {}  # as stored (default "yes"; WordPress 6.6+: on/off/auto…)
        self.reads: list[list[str]] = []

    def read(self, argv: list[str]) -> CommandResult:
        assert POLICY.classify_argv(argv).category is PolicyCategory.READ, argv
        self.reads.append(argv)
        name = next(a.split("=", 1)[1] for a in argv if a.startswith("--search="))
        rows = (
            [
                {
                    "option_name": name,
                    "option_value": self.options[name],
                    "autoload": self.autoload.get(name, "yes"),
                }
            ]
            if name in self.options
            else []
        )
        return CommandResult(json.dumps(rows), "", 0, 1)


def _run(site: FakeOptions, command: str, change: tuple[str, object | None]) -> RunCommand:
    decision = POLICY.classify(command)
    capture = capture_before(decision.command_path, list(decision.argv), site.read)
    name, value = change
    if value is None:
        site.options.pop(name, None)
    else:
        site.options[name] = value
    record_after(decision.command_path, list(decision.argv), capture, "Success", site.read)
    return RunCommand(command=command, capture=capture)


def test_what_cannot_be_undone_is_known_before_anything_runs() -> None:
    assert assess(("post", "update"), ["post", "update", "45", "--post_title=x"]).revertible
    for path, argv in [
        (("plugin", "uninstall"), ["plugin", "uninstall", "hello-dolly"]),
        (("core", "update"), ["core", "update", "--minor"]),
        (("language", "core", "install"), ["language", "core", "install", "de_DE"]),
        (("plugin", "install"), ["plugin", "install", "hello", "--activate-network"]),
        (("term", "delete"), ["term", "delete", "category", "3"]),
        (("user", "update"), ["user", "update", "2", "--user_pass=secret-1"]),
        (("option", "update"), ["option", "update", "mailserver_pass", "x"]),
        (("plugin", "deactivate"), ["plugin", "deactivate", "akismet", "--network"]),
        (("search-replace",), ["search-replace", "a", "b"]),
    ]:
        verdict = assess(path, argv)
        assert not verdict.revertible, argv
        assert verdict.reason_ja.endswith("元に戻せません。") or "戻せません" in verdict.reason_ja
        assert "元に戻せません" in with_undo_note(path, argv, "影響の説明。")
    assert with_undo_note(("post", "update"), ["post", "update", "1"], "影響。") == "影響。"


def test_an_option_is_set_back_and_a_new_one_removed() -> None:
    site = FakeOptions(blogname="元の名前")
    runs = [
        _run(site, "option update blogname 新しい名前", ("blogname", "新しい名前")),
        _run(site, "option add my_setting 1", ("my_setting", "1")),
    ]
    plan = build_plan("run_1", runs, site.read)
    assert [s.argv for s in plan.steps] == [
        ["option", "delete", "my_setting"],  # newest first
        ["option", "update", "blogname", "元の名前"],
    ]
    assert plan.skipped == []


def test_autoload_is_restored_by_what_it_does_in_words_wp_cli_takes() -> None:
    """WordPress 6.6+ stores on/off/auto/auto-on/auto-off; WP-CLI 2.10 only takes --autoload=yes|no.
    A switch from `auto` to `on` changed nothing WordPress does (both load): no flag; `auto` to `off`
    did: the flag that loads it again."""
    site = FakeOptions(theme_mods_x="a", gone="v")
    site.autoload = {"theme_mods_x": "auto", "gone": "auto-off"}

    run = _run(site, "option update theme_mods_x b", ("theme_mods_x", "b"))
    site.autoload["theme_mods_x"] = "on"  # as a theme switch leaves it
    assert run.capture is not None
    record_after(("option", "update"), ["option", "update", "theme_mods_x", "b"], run.capture, "", site.read)
    plan = build_plan("run_1", [run], site.read)
    assert [s.argv for s in plan.steps] == [["option", "update", "theme_mods_x", "a"]]
    site.options["theme_mods_x"], site.autoload["theme_mods_x"] = "a", "auto"
    run = _run(site, "option update theme_mods_x b", ("theme_mods_x", "b"))
    site.autoload["theme_mods_x"] = "off"
    assert run.capture is not None
    record_after(("option", "update"), ["option", "update", "theme_mods_x", "b"], run.capture, "", site.read)
    plan = build_plan("run_2", [run], site.read)
    assert [s.argv for s in plan.steps] == [["option", "update", "theme_mods_x", "a", "--autoload=yes"]]
    deleted = _run(site, "option delete gone", ("gone", None))
    plan = build_plan("run_3", [deleted], site.read)
    assert [s.argv for s in plan.steps] == [["option", "add", "gone", "v", "--autoload=no"]]


def test_something_changed_since_the_run_is_skipped_and_reported() -> None:
    site = FakeOptions(blogname="元の名前", blogdescription="元の説明")
    runs = [
        _run(site, "option update blogname A", ("blogname", "A")),
        _run(site, "option update blogdescription B", ("blogdescription", "B")),
    ]
    site.options["blogname"] = "誰かが直した名前"
    plan = build_plan("run_1", runs, site.read)
    assert [s.argv for s in plan.steps] == [["option", "update", "blogdescription", "元の説明"]]
    assert [(s.entity_ja, "上書きせず" in s.reason_ja) for s in plan.skipped] == [("設定「blogname」", True)]


def test_the_same_thing_changed_twice_goes_back_to_its_first_state() -> None:
    site = FakeOptions(blogname="最初")
    runs = [
        _run(site, "option update blogname 二番目", ("blogname", "二番目")),
        _run(site, "option update blogname 三番目", ("blogname", "三番目")),
    ]
    plan = build_plan("run_1", runs, site.read)
    assert [s.argv for s in plan.steps] == [["option", "update", "blogname", "最初"]]


def test_a_before_image_holding_a_secret_is_not_kept() -> None:
    site = FakeOptions(my_plugin_settings={"api_key": "sk-live-0123456789abcdef0123456789"})
    capture = capture_before(
        ("option", "update"), ["option", "update", "my_plugin_settings", "{}", "--format=json"], site.read
    )
    assert not capture.revertible
    assert "秘密情報" in capture.reason_ja
    assert "sk-live" not in capture.model_dump_json()


def test_commands_not_run_or_not_revertible_are_reported_not_planned() -> None:
    site = FakeOptions()
    plugin = POLICY.classify("plugin uninstall hello-dolly")
    capture = capture_before(plugin.command_path, list(plugin.argv), site.read)
    plan = build_plan(
        "run_1",
        [
            RunCommand("plugin uninstall hello-dolly", capture),
            RunCommand("option update x 1", None, ran=False),
        ],
        site.read,
    )
    assert plan.steps == []
    assert [s.entity_ja for s in plan.skipped] == ["wp plugin uninstall hello-dolly"]
    assert site.reads == []  # nothing to read for a command that cannot be undone


def test_approval_says_a_meta_deletion_can_be_undone_unless_it_cannot() -> None:
    for command, undoable in [
        ("post meta delete 10 views", True),
        ("post meta delete 10 --all", True),
        ("term meta delete 2 color", True),
        ("user meta delete 3 nickname", True),
        ("comment meta delete 1 rating", False),  # comment meta is not kept for undo
    ]:
        decision = POLICY.classify(command)
        _, impact = describe(decision)
        impact = with_undo_note(decision.command_path, decision.argv, impact)
        assert ("元に戻せません" not in impact) is undoable, (command, impact)


def test_every_option_a_delete_names_is_put_back() -> None:
    """Issue 37: undo read only the first key of `option delete a b` (by position) while both were
    deleted; it reads the command as the policy does now (command_grammar), so both come back."""
    site = FakeOptions(date_format="Y-m-d", time_format="H:i")
    decision = POLICY.classify("option delete date_format time_format")
    capture = capture_before(decision.command_path, list(decision.argv), site.read)
    site.options.clear()
    record_after(decision.command_path, list(decision.argv), capture, "Success", site.read)
    plan = build_plan("run_1", [RunCommand(command=decision.command, capture=capture)], site.read)
    assert sorted(s.argv[:3] for s in plan.steps) == [
        ["option", "add", "date_format"],
        ["option", "add", "time_format"],
    ]


def test_a_site_named_by_slug_is_captured() -> None:
    reads: list[list[str]] = []

    def read(argv: list[str]) -> CommandResult:
        assert POLICY.classify_argv(argv).category is PolicyCategory.READ, argv
        reads.append(argv)
        if "--format=csv" in argv:  # the network's sites, to find --slug's
            return CommandResult(
                "blog_id,url\n1,https://example.test/\n3,https://example.test/shop/\n", "", 0, 1
            )
        row = {"blog_id": 3, "url": "https://example.test/shop/", "archived": "0", "spam": "0", "deleted": "0",
               "public": "1"}  # fmt: skip
        return CommandResult(json.dumps([row]), "", 0, 1)

    decision = POLICY.classify("site archive --slug=shop")
    capture = capture_before(decision.command_path, list(decision.argv), read)
    assert capture.revertible, capture.reason_ja
    assert [item.entity.key for item in capture.items] == [["3"]]
