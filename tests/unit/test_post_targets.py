"""The agent's check of posts addressed by ID (policy/post_targets.py): an update of an internal post
type such as a draft customizer changeset is refused; the real-WordPress proof is in
tests/e2e/test_redteam_real_site.py."""

from __future__ import annotations

import pytest

from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.post_targets import RULE, guard_post_targets
from wp_agent.policy.site_reads import SiteReads


def reader(answer: str | None, seen: list[list[str]], types: dict[str, str | None] | None = None) -> object:
    """`answer` to the internal-type read; `types` (ID → post_type, None: not found) to the declared
    effect's read of each addressed post (a post by default)."""

    def read(argv: list[str]) -> str | None:
        seen.append(argv)
        if argv[:2] == ["post", "get"]:
            return (types or {}).get(argv[2], "post")
        if "--orderby=ID" in argv:  # the newest post the site has
            return "60"
        return answer

    return read


@pytest.mark.parametrize(
    ("answer", "blocked"), [("", False), ("64\n", True), ("45 64", True), (None, True), ("Error", True)]
)
def test_an_update_is_refused_when_an_addressed_post_is_internal(answer: str | None, blocked: bool) -> None:
    seen: list[list[str]] = []
    decision = CommandPolicy().classify("post update 45 64 --post_status=publish")
    guarded = guard_post_targets(decision, reader(answer, seen))  # type: ignore[arg-type]
    assert guarded.blocked is blocked
    assert (guarded.rule == RULE) is blocked
    argv = seen[0]
    assert argv[:3] == ["post", "list", "--post__in=45,64"]
    assert "customize_changeset" in argv[3]
    assert "auto-draft" in argv[4]
    assert "trash" in argv[4]
    assert CommandPolicy().classify_argv(argv).category.value == "read"


@pytest.mark.parametrize(
    "command",
    [
        "post list --format=ids",
        "post get 64",
        "post create --post_title=x",
        "post update --post_status=draft",
    ],
)
def test_other_commands_are_not_read(command: str) -> None:
    seen: list[list[str]] = []
    decision = CommandPolicy().classify(command)
    assert guard_post_targets(decision, reader("64", seen)) is decision  # type: ignore[arg-type]
    assert seen == []


def test_a_copy_of_an_internal_post_is_refused() -> None:
    seen: list[list[str]] = []
    decision = CommandPolicy().classify("post create --from-post=64 --post_status=publish")
    assert guard_post_targets(decision, reader("64", seen)).blocked  # type: ignore[arg-type]
    assert seen[0][2] == "--post__in=64"
    assert not guard_post_targets(decision, reader("", [])).blocked  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("command", "types", "category"),
    [
        ("post update 45 64 --post_title=x", {}, "write"),
        ("post update 45 64 --post_status=publish", {"64": "page"}, "write"),
        ("post update 45 47 --post_status=publish", {"47": None}, "write"),  # 47 is gone: WP-CLI refuses it
        ("post update 45 61 --post_title=x", {"61": "nav_menu_item"}, "destructive"),
        ("post update 45 --post_title=x", {"45": "wp_block"}, "destructive"),
        ("post update 58 --post_title=x", {"58": "attachment"}, "write"),  # a media item's texts
        ("post update 58 --post_status=publish", {"58": "attachment"}, "destructive"),
        ("post update 58 --post_type=post", {"58": "attachment"}, "destructive"),
    ],
)
def test_an_update_runs_without_approval_only_on_posts_and_pages(
    command: str, types: dict[str, str | None], category: str
) -> None:
    seen: list[list[str]] = []
    decision = guard_post_targets(CommandPolicy().classify(command), reader("", seen, types))  # type: ignore[arg-type]
    assert decision.category.value == category, decision.reason_ja
    ids = CommandPolicy().classify(command).argv[2:]
    assert [argv for argv in seen if argv[:2] == ["post", "get"] and argv[3] == "--field=post_type"] == [
        ["post", "get", i, "--field=post_type"] for i in ids if i.isdigit()
    ]
    # publishing also reads each stored content for the links the server will ping (issue 38)
    publishing = "--post_status=publish" in command
    assert [argv[2] for argv in seen if argv[3:] == ["--field=post_content"]] == (
        [i for i in ids if i.isdigit()] if publishing else []
    )
    if category == "destructive":
        assert decision.rule == "confirm.site_check"
        assert "投稿・固定ページ" in decision.reason_ja


def test_every_check_reads_the_site_the_write_goes_to() -> None:
    """On a network post 8 of one site is not post 8 of another: the reads carry the write's --url."""
    seen: list[list[str]] = []
    command = "post update 45 --post_status=publish --url=https://example.test/en/"
    guard_post_targets(CommandPolicy().classify(command), reader("", seen))  # type: ignore[arg-type]
    assert len(seen) == 3  # the internal-type list, the post's type, its stored content (links it will ping)
    assert all(argv[-1] == "--url=https://example.test/en/" for argv in seen)
    seen.clear()
    command = "media regenerate 58 --yes --url=https://example.test/en/"
    guard_post_targets(CommandPolicy().classify(command), reader("[]", seen))  # type: ignore[arg-type]
    assert [argv[-1] for argv in seen] == ["--url=https://example.test/en/"]


def test_every_read_is_asked_in_one_round_and_an_unanswered_one_holds() -> None:
    """The turn runs the reads a decision asks for (SiteReads) and decides again: all of a write's reads
    are asked at once, and until they are answered nothing runs without approval."""
    decision = CommandPolicy().classify("post update 45 46 47 48 49 --post_title=x")
    first = SiteReads()
    assert guard_post_targets(decision, first).blocked  # the post type is not known yet
    assert [argv[:2] for argv in first.requested] == [("post", "list"), *[("post", "get")] * 5]
    answers = {argv: ("" if argv[1] == "list" else "post") for argv in first.requested}
    second = SiteReads(answers)
    assert guard_post_targets(decision, second).category is PolicyCategory.WRITE
    assert second.requested == []
    del answers[first.requested[-1]]  # one post's type not read: the update waits for approval
    held = guard_post_targets(decision, SiteReads(answers))
    assert (held.category, held.rule) == (PolicyCategory.DESTRUCTIVE, "confirm.site_check")


@pytest.mark.parametrize(("answer", "blocked"), [("48 49", False), ("48", True), ("", True), (None, True)])
def test_a_menu_item_delete_of_something_else_is_refused(answer: str | None, blocked: bool) -> None:
    """Issue 37: `menu item delete 58` deleted attachment 58 with its files (WP-CLI deletes any post)."""
    seen: list[list[str]] = []
    decision = CommandPolicy().classify("menu item delete 48 49 --url=https://example.test/en/")

    def read(argv: list[str]) -> str | None:
        seen.append(argv)
        return answer

    guarded = guard_post_targets(decision, read)
    assert guarded.blocked is blocked
    assert (guarded.rule == "blocked.not_a_menu_item") is blocked
    assert "--post_type=nav_menu_item" in seen[0]
    assert seen[0][-1] == "--url=https://example.test/en/"  # read on the command's own site
    assert CommandPolicy().classify_argv(seen[0]).category.value == "read"
    if answer == "48":
        assert "ID 49" in guarded.reason_ja
