"""A meta write whose key the database takes for a differently spelled key of the object is refused,
naming the kept spelling (policy/meta_spelling.py); on the real site: tests/integration/test_undo_cli.py."""

from __future__ import annotations

import json

from wp_agent.policy import CommandPolicy
from wp_agent.policy.meta_spelling import SPELLING_RULE, guard_meta_spelling
from wp_agent.policy.site_reads import SiteReads

POLICY = CommandPolicy()
LIST_10: tuple[str, ...] = ("post", "meta", "list", "10", "--fields=meta_key", "--format=json")


def _guarded(command: str, keys: list[str] | None) -> tuple[str, SiteReads]:
    answers: dict[tuple[str, ...], str | None] = (
        {} if keys is None else {LIST_10: json.dumps([{"meta_key": k} for k in keys])}
    )
    reads = SiteReads(answers)
    return guard_meta_spelling(POLICY.classify(command), reads).rule, reads


def test_another_spelling_of_a_kept_key_is_refused_and_the_kept_one_named() -> None:
    for command in ("post meta update 10 Views 99", "post meta delete 10 VIEWS", "post meta add 10 Views 1"):
        rule, _ = _guarded(command, ["views", "_edit_lock"])
        assert rule == SPELLING_RULE, command
    decided = guard_meta_spelling(
        POLICY.classify("post meta update 10 Views 99"), SiteReads({LIST_10: '[{"meta_key":"views"}]'})
    )
    assert "「views」" in decided.reason_ja


def test_the_kept_spelling_a_new_key_and_reads_pass() -> None:
    assert _guarded("post meta update 10 views 99", ["views"])[0] != SPELLING_RULE
    assert _guarded("post meta update 10 rating 5", ["views"])[0] != SPELLING_RULE
    assert _guarded("post meta get 10 Views", ["views"])[0] != SPELLING_RULE  # a read changes nothing
    rule, reads = _guarded("post meta update 10 Views 99", None)  # not read yet: asked for, decided later
    assert rule != SPELLING_RULE
    assert reads.requested == [LIST_10]


def test_keys_given_as_meta_input_are_checked_on_every_post_the_update_names() -> None:
    list_11: tuple[str, ...] = ("post", "meta", "list", "11", "--fields=meta_key", "--format=json")
    command = """post update 10 11 --meta_input='{"rating":"5","Views":"1"}'"""
    reads = SiteReads({LIST_10: "[]", list_11: '[{"meta_key":"views"}]'})
    assert guard_meta_spelling(POLICY.classify(command), reads).rule == SPELLING_RULE
    reads = SiteReads({LIST_10: "[]", list_11: '[{"meta_key":"Views"}]'})
    assert guard_meta_spelling(POLICY.classify(command), reads).rule != SPELLING_RULE
