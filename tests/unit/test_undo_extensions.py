"""Undo of a plugin's or theme's code (undo/site_kinds.EXTENSION): from its before-image and its state
now, the WP-CLI commands that put it back — each one a change of code the executors guard."""

from __future__ import annotations

import json

import pytest

from wp_agent.executors.port import CommandResult
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.undo.capture import capture_before
from wp_agent.undo.entities import KINDS, CaptureError


def restore(key: list[str], before: object, now: object) -> list[list[str]]:
    return [step.argv for step in KINDS["extension"].restore(key, before, now)]


def test_an_update_goes_back_to_the_recorded_version_and_state() -> None:
    was = {"version": "1.0.0", "status": "active"}
    assert restore(["plugin", "x"], was, {"version": "1.1.0", "status": "active"}) == [
        ["plugin", "update", "x", "--version=1.0.0"]
    ]
    assert restore(["plugin", "x"], was, {"version": "1.1.0", "status": "inactive"}) == [
        ["plugin", "update", "x", "--version=1.0.0"],
        ["plugin", "activate", "x"],
    ]
    assert restore(
        ["theme", "t"], {"version": "2", "status": "active"}, {"version": "3", "status": "active"}
    ) == [["theme", "update", "t", "--version=2"]]


def test_a_deleted_one_is_installed_again_and_an_installed_one_removed() -> None:
    assert restore(["plugin", "x"], {"version": "1.0.0", "status": "active"}, None) == [
        ["plugin", "install", "x", "--version=1.0.0"],
        ["plugin", "activate", "x"],
    ]
    assert restore(["plugin", "x"], None, {"version": "2.0.0", "status": "active"}) == [
        ["plugin", "deactivate", "x"],
        ["plugin", "delete", "x"],
    ]
    assert restore(["theme", "t"], None, {"version": "1", "status": "inactive"}) == [["theme", "delete", "t"]]
    assert restore(["plugin", "x"], None, None) == []


@pytest.mark.parametrize(
    ("key", "before", "now"),
    [
        (["theme", "t"], None, {"version": "1", "status": "active"}),  # WordPress keeps one theme active
        (["plugin", "x"], None, {"version": "1", "status": "active-network"}),
        (["plugin", "x"], {"version": "", "status": "inactive"}, None),  # no version to fetch
        (["plugin", "x"], {"version": "1", "status": "must-use"}, {"version": "1", "status": "inactive"}),
        (["plugin", "--url=https://elsewhere.example/"], {"version": "1", "status": "inactive"}, None),
    ],
)
def test_what_cannot_be_put_back_says_why(key: list[str], before: object, now: object) -> None:
    with pytest.raises(CaptureError) as raised:
        restore(key, before, now)
    assert any(words in raised.value.reason_ja for words in ("元に戻せ", "入れ直せません", "渡せない"))


def test_all_updates_record_each_plugin_the_site_has_less_the_excluded() -> None:
    asked: list[list[str]] = []

    def read(argv: list[str]) -> CommandResult:
        asked.append(argv)
        if argv[:2] == ["option", "list"]:
            return CommandResult("[]", "", 0, 1)
        if argv[:2] == ["plugin", "list"] and "--field=name" in argv:
            return CommandResult("akismet\nhello\nsmtp\n", "", 0, 1)
        name = next(a.removeprefix("--name=") for a in argv if a.startswith("--name="))
        rows = [] if name == "hello" else [{"name": name, "version": "1.0", "status": "inactive"}]
        return CommandResult(json.dumps(rows), "", 0, 1)

    capture = capture_before(("plugin", "update"), ["plugin", "update", "--all", "--exclude=smtp"], read)
    assert capture.revertible
    assert asked[0] == ["plugin", "list", "--skip-update-check", "--field=name"]
    policy = CommandPolicy()
    assert all(policy.classify_argv(argv).category is PolicyCategory.READ for argv in asked)  # reads only
    images = {tuple(item.entity.key): item.before for item in capture.items}
    assert images[("plugin", "akismet")] == {"version": "1.0", "status": "inactive"}
    assert images[("plugin", "hello")] is None  # not there: read as absent, not as a failure
    assert ("plugin", "smtp") not in images
    assert ("recently_activated",) in images  # an undo that deactivates again stamps it: set back too
