"""Active content (issue 38): every text a visitor or an administrator sees is judged by kses's rules
whatever WordPress user runs the command; the payloads wait for approval, ordinary content does not."""

from __future__ import annotations

import pytest

from tests.fakes.xss_payloads import ORDINARY, payloads
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.active_content import active_parts, kses_bad_protocol
from wp_agent.policy.effects.table import WRITE_EFFECTS
from wp_agent.policy.effects.values import ACTIVE_CONTENT_RULE

POLICY = CommandPolicy()
SAMPLE = "<script>alert(1)</script>"
# Flag names that carry a text WordPress shows (and any new path that uses one of them is judged).
SHOWN_FLAGS = frozenset(
    {"post_title", "post_content", "post_excerpt", "title", "content", "text", "description", "desc",
     "caption", "display_name", "nickname", "first_name", "last_name", "comment_content",
     "comment_author_url", "user_url", "link", "link_url", "attr-title", "image_title", "name",
     "tags_input"}
)  # fmt: skip
# Positional texts WordPress shows: (path, index).
SHOWN_ARGUMENTS = {
    (("menu", "item", "add-custom"), 1),
    (("menu", "item", "add-custom"), 2),
    (("term", "create"), 1),
    (("menu", "create"), 0),
    (("post", "term", "add"), 2),  # a new tag's name
    (("post", "term", "set"), 2),
}
# Every text write path of the red team × one form of the command with the value in it.
TEXT_WRITES = (
    "post create --post_status=publish --post_title=x --post_content={v}",
    "post create --post_status=publish --post_title={v}",
    "post update 45 --post_excerpt={v}",
    "post update 45 --post_title=x --post_content={v}",
    "widget add custom_html sidebar-1 --content={v}",
    "widget add text sidebar-1 --text={v}",
    "widget add block sidebar-1 --content={v}",
    "widget add text sidebar-1 --title={v}",
    "menu item add-custom 10 {v} https://example.com/",
    "menu item update 61 --title={v}",
    "menu item update 61 --description={v}",
    "menu item update 61 --attr-title={v}",
    "term create category {v}",
    "term update category 3 --description={v}",
    "user update 3 --display_name={v}",
    "user update 3 --description={v}",
    "user update 3 --nickname={v}",
    "comment create --comment_post_ID=45 --comment_content={v}",
    "comment update 3 --comment_content={v}",
    "site create --slug=news --title={v}",
    "media import https://example.com/a.jpg --title={v}",
    "post meta update 45 subtitle {v}",
    "post term add 45 post_tag {v}",
    "post create --post_title=x --tags_input={v}",
)


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "'\"'\"'") + "'"


def test_every_field_wordpress_shows_is_judged() -> None:
    """The property that would have caught the red team's finding: no declared text that a visitor or
    an administrator is shown takes markup without the active-content judge."""
    unjudged = [
        f"{' '.join(path)} --{name}"
        for path, effect in WRITE_EFFECTS.items()
        for name, check in effect.fields.items()
        if name in SHOWN_FLAGS
        and path[-1] not in {"list", "get"}  # filters of a lookup show nothing
        and check.accepts(SAMPLE)
        and check.held_because is None
    ] + [
        f"{' '.join(path)} argument {index}"
        for path, index in SHOWN_ARGUMENTS
        if WRITE_EFFECTS[path].args[index].held_because is None
    ]
    assert not unjudged


@pytest.mark.parametrize("form", TEXT_WRITES)
@pytest.mark.parametrize("payload", payloads(), ids=lambda p: p.template[:30])
def test_payloads_wait_on_every_text_write(form: str, payload: object) -> None:
    command = form.format(v=_quoted(payload.with_marker("xss0000abcd")))  # type: ignore[attr-defined]
    decision = POLICY.classify(command)
    assert decision.category in {PolicyCategory.DESTRUCTIVE, PolicyCategory.BLOCKED}, (command, decision.rule)


@pytest.mark.parametrize("form", [f for f in TEXT_WRITES if "url" not in f and "comment_author" not in f])
@pytest.mark.parametrize("value", ORDINARY[:6] + ORDINARY[-4:])
def test_ordinary_rich_content_runs_as_before(form: str, value: str) -> None:
    decision = POLICY.classify(form.format(v=_quoted(value)))
    assert decision.rule != ACTIVE_CONTENT_RULE, decision.reason_ja


def test_the_approval_says_what_runs_in_whose_browser() -> None:
    decision = POLICY.classify("menu item add-custom 10 '<img src=x onerror=alert(1)>' https://example.com/")
    assert decision.rule == ACTIVE_CONTENT_RULE
    assert "onerror" in decision.reason_ja
    assert "メニューが表示される全ページの訪問者" in decision.reason_ja


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("https://example.com/", True),
        ("mailto:a@example.com", True),
        ("javascript:alert(1)", False),
        ("/wiki/Category:Foo", False),  # kses reads "/wiki/Category" as a protocol it does not know
        ("?q=a:b", False),
        ("/?q=a:b", True),  # kses leaves a colon after "/?" alone
        ("feed:https://example.com/", True),
        ("feed:javascript:alert(1)", False),
    ],
)
def test_urls_are_read_as_kses_reads_them(url: str, kept: bool) -> None:
    assert (kses_bad_protocol(url) == url) is kept


def test_a_tag_left_open_or_a_second_body_is_held() -> None:
    assert active_parts("<img src=x onerror=alert(1)//")
    assert active_parts("<body onload=alert(1)>")
    assert not active_parts("3 < 5 & 5 > 3")


@pytest.mark.parametrize(
    "value",
    [
        "<table><img src=x onerror=alert(1)></table>",  # moved in front of the table on a page
        "<table><svg onload=alert(1)></table>",
        "<math><mi><![CDATA[x><img src=x onerror=alert(1)>]]></mi></math>",  # a bogus comment in browsers
        "<math></p><![CDATA[x><img src=x onerror=alert(1)>]]>",
        "</div><script>alert(1)</script>",  # out of the theme's element
        "<textarea>swallows the rest",
    ],
)
def test_what_a_page_reads_differently_from_a_fragment_is_held(value: str) -> None:
    assert active_parts(value)


def test_encoded_angle_brackets_in_an_attribute_are_ordinary() -> None:
    assert not active_parts('<img alt="a &lt; b" src="https://example.com/a.png">')
    assert active_parts('<img alt="a < b" src="https://example.com/a.png">')
