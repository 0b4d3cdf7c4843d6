"""Fetches are effects (issue 38): what makes WordPress's server (or the agent, for media) fetch a URL
runs without approval only for public hosts whose names resolve to public addresses when the policy
decides; everything else waits."""

from __future__ import annotations

import pytest

from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.effects.table import WRITE_EFFECTS
from wp_agent.policy.effects.values import SERVER_FETCH_RULE
from wp_agent.policy.fetches import embedded_urls, linked_urls
from wp_agent.policy.host_resolution import MAX_HOSTS, static_resolver

ZONE = {
    "public.example": ["93.184.215.14"],
    "inward.example": ["10.0.0.5"],
    "metadata.example": ["169.254.169.254"],
    "mixed.example": ["93.184.215.14", "127.0.0.1"],
    "v6.example": ["fd00::1"],
}
POLICY = CommandPolicy(resolver=static_resolver(ZONE))
INWARD = ("inward.example", "metadata.example", "mixed.example", "v6.example", "nowhere.example")
# Every value that makes the server fetch, as a command (`{u}`: the URL).
FETCHING = (
    "post update 45 --post_content='<p>{u}</p>'",
    "post update 45 --post_content='<p>a</p>\n{u}\n'",
    "post update 45 --post_content='[embed]{u}[/embed]'",
    """post update 45 --post_content='<!-- wp:embed {{"url":"{u}"}} /-->'""",
    """post create --post_title=x --post_content='<!-- wp:cover {{"backgroundType":"embed-video","url":"{u}"}} -->'""",
    "post create --post_title=x --post_status=publish --post_content='<p><a href=\"{u}\">link</a></p>'",
    "post update 45 --post_content='<p>see {u} for more</p>'",
    "widget add block sidebar-1 --content='<p>{u}</p>'",
    "widget update block-2 --content='{u}'",
    "media import {u}",
)


@pytest.mark.parametrize("form", FETCHING)
@pytest.mark.parametrize("host", INWARD)
def test_a_fetch_from_a_name_that_does_not_resolve_publicly_waits(form: str, host: str) -> None:
    decision = POLICY.classify(form.format(u=f"https://{host}/latest/x.png"))
    assert decision.category is PolicyCategory.DESTRUCTIVE, decision
    assert decision.rule == SERVER_FETCH_RULE
    assert host in decision.reason_ja


@pytest.mark.parametrize("form", FETCHING)
def test_a_fetch_from_a_public_host_runs(form: str) -> None:
    decision = POLICY.classify(form.format(u="https://public.example/2024/a.png"))
    assert decision.category is PolicyCategory.WRITE, decision.reason_ja


@pytest.mark.parametrize("form", FETCHING[:-1])
@pytest.mark.parametrize("address", ["169.254.169.254", "127.0.0.1", "10.1.2.3", "[::1]", "0x7f.1"])
def test_a_fetch_from_an_inward_address_waits_without_asking_dns(form: str, address: str) -> None:
    if address == "[::1]" and ("href" in form or "see" in form):
        pytest.skip("wp_extract_urls() finds no link without a dot: WordPress pings and encloses nothing")
    decision = POLICY.classify(form.format(u=f"http://{address}/latest/meta-data/"))
    assert decision.category is PolicyCategory.DESTRUCTIVE, decision
    assert decision.rule == SERVER_FETCH_RULE


def test_a_widgets_links_are_not_fetched_but_a_posts_are() -> None:
    link = '<p><a href="https://inward.example/">x</a></p>'
    assert (
        POLICY.classify(f"widget add custom_html sidebar-1 --content='{link}'").category
        is PolicyCategory.WRITE
    )
    assert POLICY.classify(f"post update 45 --post_content='{link}'").rule == SERVER_FETCH_RULE


def test_more_names_than_it_looks_up_wait() -> None:
    links = " ".join(f"https://h{i}.public.example/" for i in range(MAX_HOSTS + 1))
    many = {f"h{i}.public.example": ["93.184.215.14"] for i in range(MAX_HOSTS + 1)}
    policy = CommandPolicy(resolver=static_resolver(many))
    assert policy.classify(f"post update 45 --post_content='<p>{links}</p>'").rule == SERVER_FETCH_RULE


def test_every_fetching_value_check_is_covered() -> None:
    """A new field whose value makes the server fetch must be one of the forms above."""
    fetching = {
        (" ".join(path), name)
        for path, effect in WRITE_EFFECTS.items()
        for name, check in [*effect.fields.items(), *((f"arg{i}", c) for i, c in enumerate(effect.args))]
        if check.fetches is not None
    }
    covered = {("post update", "post_content"), ("post create", "post_content"), ("widget add", "content"),
               ("widget update", "content"), ("media import", "arg0"), ("widget add", "text"),
               ("widget update", "text")}  # fmt: skip
    assert fetching <= covered, fetching - covered


def test_wordpress_finds_the_urls_it_would_fetch() -> None:
    assert embedded_urls('<p class="x">\n https://a.example/v \n</p>') == ["https://a.example/v"]
    assert linked_urls("x <a href='//b.example/p'>y</a> c.example/nopath /local/a.png") == ["//b.example/p"]
    assert linked_urls("a" * 5_000 + ".b/c") is None  # too long to read in bounded time: it waits


def test_a_name_that_does_not_answer_in_time_counts_as_not_resolving(monkeypatch: pytest.MonkeyPatch) -> None:
    import time as clock

    from wp_agent.policy import host_resolution

    monkeypatch.setattr(host_resolution, "_TIMEOUT_SECONDS", 0.2)

    def slow(host: str) -> list[str] | None:
        if host == "slow.example":
            clock.sleep(2)
        return ["93.184.215.14"]

    started = clock.monotonic()
    assert host_resolution.not_public(["slow.example", "fast.example"], slow) == ["slow.example"]
    assert clock.monotonic() - started < 1.5


def test_a_forked_process_looks_names_up_with_threads_of_its_own() -> None:
    """The lookup pool's threads are not in a forked child (a forking server, the tests' CLI runs):
    there the lookups still run, in time."""
    import os
    import time as clock

    from wp_agent.policy import host_resolution

    host_resolution._lookups.pool.submit(lambda: None).result()  # the parent's pool has a thread, now idle
    pid = os.fork()
    if pid == 0:  # the child ends here whatever happens
        code = 1
        try:
            started = clock.monotonic()
            answered = host_resolution._lookups.pool.submit(lambda: "answered").result(timeout=2)
            code = 0 if answered == "answered" and clock.monotonic() - started < 1 else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ("<p>下書き <a href='https://public.example/a'>x</a></p>", PolicyCategory.WRITE),
        ("<p>下書き <a href='https://inward.example/a'>x</a></p>", PolicyCategory.DESTRUCTIVE),
        ("<p>http://169.254.169.254/latest/meta-data/</p>", PolicyCategory.DESTRUCTIVE),
        (None, PolicyCategory.WRITE),  # no such post (the first the command names): WP-CLI refuses it
    ],
)
def test_publishing_a_stored_draft_reads_its_links_first(
    stored: str | None, expected: PolicyCategory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A draft a person wrote is not judged as a value: publishing it makes the server ping its links."""
    from wp_agent.policy import host_resolution
    from wp_agent.policy.post_targets import guard_post_targets

    monkeypatch.setattr(host_resolution, "system_resolver", static_resolver(ZONE))

    def read(argv: list[str]) -> str | None:
        if "--field=post_content" in argv:
            return stored
        return "post" if argv[:2] == ["post", "get"] else ""

    decision = guard_post_targets(POLICY.classify("post update 40 --post_status=publish"), read)
    assert decision.category is expected, decision.reason_ja
    if expected is PolicyCategory.DESTRUCTIVE:
        assert "ID 40 の本文にあるリンク" in decision.reason_ja
    # new content in the same write is judged as a value instead: nothing stored is read
    given = POLICY.classify("post update 40 --post_status=publish --post_content='<p>x</p>'")
    assert guard_post_targets(given, read).category is PolicyCategory.WRITE
