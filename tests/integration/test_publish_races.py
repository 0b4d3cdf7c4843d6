"""Two publishes at the same time with the same new tag, on the real site over the real sshd (#42 item 1:
a "successful" article lost its tag). The interleavings that lost it are forced with barriers around the
real commands: both see the tag missing and both create it, so WordPress refuses one (`term_exists`);
and one of them fails after creating the tag the other is already using. Each publish reports what is
true of the site afterwards: a success has every tag it asked for, and a clean-up removes only what its
own call created and no other post uses."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

import pytest

from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import TestWordPress
from wp_agent.executors.port import CommandResult, WpCli
from wp_agent.executors.ssh import SshConnectionPool, SshWpCli
from wp_agent.models.article import PublishArticleInput, PublishArticleOutput
from wp_agent.policy import CommandPolicy
from wp_agent.publishing import ArticlePublisher

pytestmark = pytest.mark.sshd

TAG = "同時公開タグ"
WAIT_SECONDS = 60


class Choreographed:
    """The real executor, with a hook that may wait (or fail the command) before a given command runs."""

    def __init__(self, real: SshWpCli, before: Callable[[list[str]], CommandResult | None]) -> None:
        self._real = real
        self._before = before

    def run(self, argv: Sequence[str]) -> CommandResult:
        answer = self._before(list(argv))
        return answer if answer is not None else self._real.run(argv)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def starts(argv: list[str], *words: str) -> bool:
    return argv[: len(words)] == list(words)


@pytest.fixture
def real(sshd_server: SshdRig, rig_site: TestWordPress) -> Iterator[SshWpCli]:
    pool = SshConnectionPool()
    yield SshWpCli(sshd_server.settings(), pool=pool)
    pool.close_all()


def publish(wp: Choreographed, title: str) -> PublishArticleOutput:
    document = {"title": title, "content": "<p>本文</p>", "tags": [TAG, "共通"], "status": "draft"}
    publisher = ArticlePublisher(cast(WpCli, wp), CommandPolicy())
    return publisher.publish(PublishArticleInput.model_validate(document))


def tags_of(site: TestWordPress, post_id: int) -> set[str]:
    rows = site.wp_json("post", "term", "list", str(post_id), "post_tag", "--fields=name")
    return {row["name"] for row in rows}


def tag_rows(site: TestWordPress) -> list[dict[str, Any]]:
    return [
        row for row in site.wp_json("term", "list", "post_tag", "--fields=term_id,name") if row["name"] == TAG
    ]


def test_both_create_the_same_new_tag_and_both_articles_keep_it(
    real: SshWpCli, rig_site: TestWordPress
) -> None:
    both_listed = threading.Barrier(2, timeout=WAIT_SECONDS)

    def before(argv: list[str]) -> CommandResult | None:
        if starts(argv, "term", "create", "post_tag") and TAG in argv:
            both_listed.wait()  # each saw the tag missing; now both create it
        return None

    with ThreadPoolExecutor(max_workers=2) as pool:
        outputs = list(
            pool.map(lambda title: publish(Choreographed(real, before), title), ["一本目", "二本目"])
        )

    assert all(output.success for output in outputs), outputs
    post_ids = [output.data.post_id for output in outputs if output.data is not None]
    for post_id in post_ids:
        assert tags_of(rig_site, post_id) == {TAG, "共通"}
    assert len(tag_rows(rig_site)) == 1  # created once; the other call used it


def test_when_wordpress_keeps_both_copies_of_the_tag_both_articles_settle_on_the_older(
    real: SshWpCli, rig_site: TestWordPress
) -> None:
    """The interleaving WordPress's own duplicate check misses: the first call's term row is written, the
    second call creates the same tag (seeing no taxonomy row for the first, it finds nothing alike and
    gets a newer ID), and only then is the first call's taxonomy row written. Both copies stay; the first
    call's half is played with SQL (a PHP process paused between its two inserts), the second is the real
    `term create`."""
    both_listed = threading.Barrier(2, timeout=WAIT_SECONDS)
    first_row_written, second_created = threading.Event(), threading.Event()
    slug = rig_site.wp("eval", f"echo sanitize_title({TAG!r});").stdout.strip()
    ids: dict[str, int] = {}

    def choreography(name: str) -> Callable[[list[str]], CommandResult | None]:
        def before(argv: list[str]) -> CommandResult | None:
            if not (starts(argv, "term", "create", "post_tag") and TAG in argv):
                return None
            both_listed.wait()
            if name == "second":
                assert first_row_written.wait(WAIT_SECONDS)
                answer = real.run(argv)
                ids[name] = int(answer.stdout.split()[-1])
                second_created.set()
                return answer
            rows = rig_site.sql(
                f"INSERT INTO wp_terms (name, slug, term_group) VALUES ('{TAG}', '{slug}', 0); "
                "SELECT LAST_INSERT_ID();"
            )
            ids[name] = int(rows[-1][0])
            first_row_written.set()
            assert second_created.wait(WAIT_SECONDS)
            rig_site.sql(
                "INSERT INTO wp_term_taxonomy (term_id, taxonomy, description, parent, count) "
                f"VALUES ({ids[name]}, 'post_tag', '', 0, 0);"
            )
            return CommandResult(stdout=f"{ids[name]}\n", stderr="", exit_code=0, duration_ms=1)

        return before

    with ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(publish, Choreographed(real, choreography("first")), "一本目")
        second = pool.submit(publish, Choreographed(real, choreography("second")), "二本目")
        outputs = [first.result(), second.result()]

    assert ids["first"] < ids["second"]  # the race happened: two copies of the tag were made
    assert all(output.success for output in outputs), outputs
    for output in outputs:
        assert output.data is not None
        assert tags_of(rig_site, output.data.post_id) == {TAG, "共通"}
    assert [row["term_id"] for row in tag_rows(rig_site)] == [ids["first"]]  # the newer copy was removed


def test_a_failed_publish_keeps_the_tag_another_article_uses(real: SshWpCli, rig_site: TestWordPress) -> None:
    both_listed = threading.Barrier(2, timeout=WAIT_SECONDS)
    first_created = threading.Event()
    second_done = threading.Event()

    def choreography(name: str) -> Callable[[list[str]], CommandResult | None]:
        def before(argv: list[str]) -> CommandResult | None:
            if starts(argv, "term", "create", "post_tag") and TAG in argv:
                both_listed.wait()
                if name == "second":  # the first call creates the tag; the second is refused it
                    assert first_created.wait(WAIT_SECONDS)
                else:
                    answer = real.run(argv)
                    first_created.set()
                    return answer
            if name == "first" and starts(argv, "post", "term", "set"):
                # The first call fails after creating the tag, once the second has set it on its post.
                assert second_done.wait(WAIT_SECONDS)
                return CommandResult(stdout="", stderr="Error: Simulated failure", exit_code=1, duration_ms=1)
            return None

        return before

    with ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(publish, Choreographed(real, choreography("first")), "失敗する記事")

        def second_publish() -> PublishArticleOutput:
            try:
                return publish(Choreographed(real, choreography("second")), "残る記事")
            finally:
                second_done.set()

        second = pool.submit(second_publish)
        failed, kept = first.result(), second.result()

    assert kept.success, kept
    assert kept.data is not None
    assert tags_of(rig_site, kept.data.post_id) == {TAG, "共通"}  # still there after the other's clean-up
    assert not failed.success
    assert failed.error is not None
    assert failed.error.code == "PUBLISH_FAILED"  # nothing of its own left behind
    tag_id = tag_rows(rig_site)[0]["term_id"]
    assert f"タグ ID {tag_id}（{TAG}）" in failed.error.message
    assert "他の投稿でも使われているため残しました" in failed.error.message
    assert len(tag_rows(rig_site)) == 1


def test_a_tag_removed_while_it_is_set_is_set_again_before_success_is_reported(
    real: SshWpCli, rig_site: TestWordPress
) -> None:
    removed: list[str] = []

    def before(argv: list[str]) -> CommandResult | None:
        if starts(argv, "post", "term", "list") and not removed:
            # Another call's clean-up removes the tag between setting it and reading it back.
            tag_id = str(tag_rows(rig_site)[0]["term_id"])
            assert real.run(["term", "delete", "post_tag", tag_id]).ok
            removed.append(tag_id)
        return None

    output = publish(Choreographed(real, before), "三本目")

    assert removed
    assert output.success, output
    assert output.data is not None
    assert tags_of(rig_site, output.data.post_id) == {TAG, "共通"}
    assert str(tag_rows(rig_site)[0]["term_id"]) not in removed  # created anew
