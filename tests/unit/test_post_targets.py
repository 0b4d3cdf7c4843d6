"""The agent's check of posts addressed by ID (agent/post_targets.py): an update of an internal post
type such as a draft customizer changeset is refused; the real-WordPress proof is in
tests/e2e/test_redteam_real_site.py."""

from __future__ import annotations

import pytest

from wp_agent.agent.post_targets import RULE, guard_post_targets
from wp_agent.policy import CommandPolicy


def reader(answer: str | None, seen: list[list[str]]) -> object:
    def read(argv: list[str]) -> str | None:
        seen.append(argv)
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
    [argv] = seen
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
