"""A held write whose approval spells the command out changes what it names, and nothing else.

The pinned phar's writes with no declared effect wait with an approval that names every argument and
option as WP-CLI reads them (command_table.SPELLED_OUT). Each here is decided, its text computed,
approved (its argv runs exactly) on the real site, and every table of every site compared: only the
table that holds the named object changed, and the text names the key and the value written.
"""

from __future__ import annotations

import pytest

from tests.fakes.wordpress import TestWordPress
from wp_agent.policy import CommandPolicy
from wp_agent.policy.approval_summary import describe

POLICY = CommandPolicy()
# (command, the one table its run may change, words its approval must show)
CASES = [
    ("comment meta add {comment} rating 5", "wp_commentmeta", ("rating", "5")),
    ("site meta update 2 argo_note_plan premium", "wp_blogmeta", ("argo_note_plan", "premium")),
    (
        "site option add argo_note_banner 'メンテナンスのお知らせ'",
        "wp_sitemeta",
        ("argo_note_banner", "メンテナンスのお知らせ"),
    ),
    (
        "network meta update 1 argo_note_network_note 'note'",
        "wp_sitemeta",
        ("argo_note_network_note", "note"),
    ),
    (
        "transient set argo_note_probe cached-body 3600",
        "wp_options",
        ("argo_note_probe", "cached-body", "3600"),
    ),
    ("option set-autoload blogdescription no", "wp_options", ("blogdescription", "no")),
]


@pytest.mark.parametrize(("command", "table", "shown"), CASES, ids=[c[0].split(" {")[0][:40] for c in CASES])
def test_a_spelled_out_write_changes_only_what_it_names(
    fresh_wordpress: TestWordPress, command: str, table: str, shown: tuple[str, ...]
) -> None:
    site = fresh_wordpress
    command = command.format(comment=site.facts["comment_ids"]["approved"][0])
    decision = POLICY.classify(command)
    assert decision.needs_approval, (decision.rule, decision.reason_ja)
    summary, impact = describe(decision)
    assert all(word in summary for word in shown), summary
    assert "そのまま示しています" in impact
    before = site.site.table_state()
    done = site.wp(*decision.argv)
    assert done.returncode == 0, done.stderr
    after = site.site.table_state()
    assert sorted(t for t in {*before, *after} if before.get(t) != after.get(t)) == [table]
