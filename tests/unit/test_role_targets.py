"""An editor's write names posts and terms by ID: the site says whether they are content (issue 27)."""

from __future__ import annotations

import pytest

from wp_agent.models.target import Role
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.role_targets import guard_role_targets
from wp_agent.policy.roles import ROLE_RULE
from wp_agent.policy.site_reads import SiteReads

POLICY = CommandPolicy()
TERMS = ("term", "list", "category", "post_tag", "--field=term_id")


def post_type(post_id: str, answer: str | None, *url: str) -> dict[tuple[str, ...], str | None]:
    return {("post", "get", post_id, "--field=post_type", *url): answer}


def term(term_id: str, answer: str | None) -> dict[tuple[str, ...], str | None]:
    return {(*TERMS, f"--include={term_id}"): answer}


def decide(
    command: str, role: Role | None, answers: dict[tuple[str, ...], str | None]
) -> tuple[object, SiteReads]:
    reads = SiteReads(answers)
    return guard_role_targets(POLICY.classify(command), role, reads), reads


@pytest.mark.parametrize(
    ("command", "answers"),
    [
        ("post update 77 --post_title=x", post_type("77", "product\n")),
        (
            "post update 45 77 --post_status=draft",
            {**post_type("45", "post\n"), **post_type("77", "wp_global_styles\n")},
        ),
        ("post delete 77", post_type("77", "shop_order\n")),
        ("post meta update 77 _price 1", post_type("77", "product\n")),
        ("post meta patch insert 77 data a b", post_type("77", "wp_template\n")),
        ("post term set 77 category news", post_type("77", "product\n")),
        ("post create --from-post=77 --post_title=x", post_type("77", "nav_menu_item\n")),
        (
            "media import https://example.com/a.jpg --post_id=77 --featured_image",
            post_type("77", "product\n"),
        ),
        ("comment create --comment_post_ID=77 --comment_content=x", post_type("77", "shop_order\n")),
        ("term meta update 11 color red", term("11", "")),
        ("post update 45 --post_title=x", post_type("45", None)),  # the read failed: unconfirmed
        ("term meta update 5 color red", term("5", None)),
    ],
)
def test_an_editor_is_refused_what_the_site_says_is_not_content(
    command: str, answers: dict[tuple[str, ...], str | None]
) -> None:
    decision, reads = decide(command, Role.EDITOR, answers)
    assert reads.requested == []
    assert decision.category is PolicyCategory.BLOCKED  # type: ignore[attr-defined]
    assert decision.rule == ROLE_RULE  # type: ignore[attr-defined]
    assert "管理者（admin）" in decision.reason_ja  # type: ignore[attr-defined]
    assert "編集者（editor）" in decision.reason_ja  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("command", "answers"),
    [
        ("post update 45 --post_title=x", post_type("45", "post\n")),
        ("post delete 46", post_type("46", "page\n")),
        ("post meta update 58 alt x", post_type("58", "attachment\n")),
        ("term meta update 5 color red", term("5", "5\n")),
        ("post create --post_title=x", {}),  # names no post
        ("comment create --comment_post_ID=1 --comment_content=x", post_type("1", "post")),
    ],
)
def test_an_editor_keeps_content(command: str, answers: dict[tuple[str, ...], str | None]) -> None:
    before = POLICY.classify(command)
    decision, reads = decide(command, Role.EDITOR, answers)
    assert reads.requested == []
    assert decision == before


def test_the_types_are_asked_for_first_on_the_writes_own_site() -> None:
    command = "post update 45 77 --post_title=x --url=https://a.example/"
    decision, reads = decide(command, Role.EDITOR, {})
    assert decision == POLICY.classify(command)  # unknown yet: decided again with the answers
    assert reads.requested == [
        ("post", "get", "45", "--field=post_type", "--url=https://a.example/"),
        ("post", "get", "77", "--field=post_type", "--url=https://a.example/"),
    ]
    answered = {
        **post_type("45", "post", "--url=https://a.example/"),
        **post_type("77", "product", "--url=https://a.example/"),
    }
    assert guard_role_targets(POLICY.classify(command), Role.EDITOR, SiteReads(answered)).rule == ROLE_RULE


@pytest.mark.parametrize("role", [Role.ADMIN, None])
def test_an_admin_and_a_refusal_are_not_read_for(role: Role | None) -> None:
    command = "post update 77 --post_title=x"
    decision, reads = decide(command, role, {})
    assert reads.requested == []
    assert decision == POLICY.classify(command)


def test_reads_are_not_read_for() -> None:
    decision, reads = decide("post get 77", Role.EDITOR, {})
    assert reads.requested == []
    assert decision.category is PolicyCategory.READ  # type: ignore[attr-defined]
