"""The agent's check of posts addressed by ID (agent/post_targets.py): an update of an internal post
type such as a draft customizer changeset is refused; the real-WordPress proof is in
tests/e2e/test_redteam_real_site.py."""

from __future__ import annotations

import pytest

from wp_agent.agent.post_targets import RULE, guard_post_targets
from wp_agent.policy import CommandPolicy


def reader(answer: str | None, seen: list[list[str]], types: str | None = "45 64") -> object:
    """`answer` to the internal-type read, `types` to the declared effect's read of which addressed
    posts are posts or pages."""

    def read(argv: list[str]) -> str | None:
        seen.append(argv)
        return answer if any("customize_changeset" in a for a in argv) else types

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
    ("command", "types_read", "category"),
    [
        ("post update 45 64 --post_title=x", "45 64", "write"),
        ("post update 45 64 --post_title=x", "45", "destructive"),  # 64: a menu item, a block, gone…
        ("post update 45 --post_title=x", None, "destructive"),  # the read failed
        ("post update 45 --post_title=x", "Error", "destructive"),
    ],
)
def test_an_update_runs_without_approval_only_on_posts_and_pages(
    command: str, types_read: str | None, category: str
) -> None:
    seen: list[list[str]] = []
    decision = guard_post_targets(CommandPolicy().classify(command), reader("", seen, types_read))  # type: ignore[arg-type]
    assert decision.category.value == category
    assert any(a == "--post_type=post,page,attachment" for a in seen[1])  # texts only: media too
    if category == "destructive":
        assert decision.rule == "confirm.site_check"
        assert "投稿・固定ページ" in decision.reason_ja


def test_a_media_item_takes_only_its_texts_without_approval() -> None:
    seen: list[list[str]] = []
    command = "post update 58 --post_status=publish"
    guard_post_targets(CommandPolicy().classify(command), reader("", seen, "58"))  # type: ignore[arg-type]
    assert "--post_type=post,page" in seen[1]


def test_every_check_reads_the_site_the_write_goes_to() -> None:
    """On a network post 8 of one site is not post 8 of another: the reads carry the write's --url."""
    seen: list[list[str]] = []
    command = "post update 45 --post_status=publish --url=https://example.test/en/"
    guard_post_targets(CommandPolicy().classify(command), reader("", seen, "45"))  # type: ignore[arg-type]
    assert len(seen) == 2
    assert all(argv[-1] == "--url=https://example.test/en/" for argv in seen)
    seen.clear()
    command = "media regenerate 58 --yes --url=https://example.test/en/"
    guard_post_targets(CommandPolicy().classify(command), reader("", seen, "[]"))  # type: ignore[arg-type]
    assert [argv[-1] for argv in seen] == ["--url=https://example.test/en/"]
