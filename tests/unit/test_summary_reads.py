"""What an approval summary reads of the site is what its row lists (approval_summary/reads.py): every
held command of every row, and the summary tests' commands, worded with a site that answers every read
as a real one would in shape — no summary asks a read it did not declare, and every declared read is
asked by some command (a declaration no command uses would be a row that says more than happens)."""

from __future__ import annotations

import json

import pytest

from wp_agent.policy import CommandPolicy
from wp_agent.policy.approval_summary import describe, reads, summaries_of, summary_reads
from wp_agent.policy.approval_summary.reads import SummaryRead, UndeclaredSummaryReadError
from wp_agent.policy.command_spec import spec_of
from wp_agent.policy.command_table import ALLOWED_COMMANDS

POLICY = CommandPolicy()

# The approvals the summaries word differently by the site's answer, beyond the rows' own examples.
MORE = [
    "post delete 41 45", "post delete 45 --force", "comment delete 3 4", "user set-role 1 subscriber", "user set-role 3",
    "user set-role 1 editor --url=https://example.test/en/", "user add-role 2 editor", "user remove-role 2 editor",
    "user update 2 --role=administrator", "user update 1 --user_email=new@example.test", "user create taro t@example.test",
    "user delete 5 --reassign=1", "user delete 5 6", "user delete 5 --network", "user session destroy 3 --all", "user reset-password 2",
    "site create --slug=news", "site delete 2", "site archive 2", "site deactivate 3", "menu delete main",
    "menu item delete 12", "post meta delete 5 color", "post meta delete 5 --all", "user meta delete 2 nickname", "term meta delete 3 k",
    "option update blogname 新しい名前", "option delete some_option", "option add my_option 1",
    "theme activate twentytwentyfour", "theme install twentytwentyfour --activate", "core update",
    "core update --version=7.1.4", "language core activate ja", "site switch-language ja", "plugin activate akismet",
    "comment trash 3", "role delete author", "cap remove editor edit_posts",
]  # fmt: skip


def plausible(argv: list[str]) -> str:
    """An answer of the shape WP-CLI gives each read (a list for `list`, an object for `get`)."""
    row = {"ID": 5, "user_login": "taro", "user_email": "t@example.test", "roles": "editor",
           "comment_ID": "3", "comment_approved": "1", "post_status": "publish", "post_type": "post",
           "meta_key": "color", "term_id": 3, "name": "main", "slug": "main", "count": 2, "blog_id": 2,
           "url": "https://example.test/en/", "option_name": "blogname", "post_author": 5}  # fmt: skip
    if "--format=json" in argv:
        return json.dumps([row] if argv[1] == "list" or argv[2:3] == ["list"] else row)
    return {"core": "7.1.3", "option": "editor"}.get(argv[0], "5")


def held_commands() -> list[str]:
    commands = list(MORE)
    for path in ALLOWED_COMMANDS:
        spec = spec_of(path)
        if spec is not None:
            commands += spec.held_examples
    return list(dict.fromkeys(commands))


def test_every_summary_asks_only_what_its_row_lists_and_every_listed_read_is_asked() -> None:
    asked: dict[tuple[str, ...], set[SummaryRead]] = {}
    worded = 0
    for command in held_commands():
        decision = POLICY.classify(command)
        if not decision.needs_approval:
            continue
        path = decision.command_path
        declared = summary_reads(path)

        def read(
            argv: list[str],
            declared: tuple[SummaryRead, ...] = declared,
            command: str = command,
            path: tuple[str, ...] = path,
        ) -> str:
            assert POLICY.classify_argv(argv).category.value == "read", argv
            facts = [fact for fact in declared if fact.asks(argv)]
            assert facts, (command, argv)  # the row lists it (describe stops it otherwise)
            asked.setdefault(path, set()).update(facts)
            return plausible(argv)

        describe(decision, read)  # raises UndeclaredSummaryReadError on a read its summary did not declare
        worded += 1
    assert worded > 120
    # Each summary's declared reads, each asked for some command it tells.
    unused = []
    for handler, facts in {h: f for path in ALLOWED_COMMANDS for h, f in summaries_of(path)}.items():
        told = [path for path in ALLOWED_COMMANDS if any(h is handler for h, _ in summaries_of(path))]
        seen = set().union(*(asked.get(path, set()) for path in told))
        unused += [(handler.__name__, fact.about_ja) for fact in facts if fact not in seen]
    assert unused == []


def test_a_read_the_row_does_not_list_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Take the post-state read out of `post delete`'s declaration: its summary can no longer ask it."""
    from wp_agent.policy import approval_summary

    [(handler, _)] = summaries_of(("post", "delete"))
    monkeypatch.setitem(approval_summary._SUMMARIES_OF, ("post", "delete"), ((handler, ()),))
    decision = POLICY.classify("post delete 45")
    with pytest.raises(UndeclaredSummaryReadError):
        describe(decision, plausible)
    assert describe(decision, None)[0]  # with no site at all it is still worded (conservatively)


def test_the_row_shows_them() -> None:
    spec = spec_of(("user", "delete"))
    assert spec is not None
    assert spec.summary_reads == tuple(
        fact.about_ja for fact in (reads.USER, reads.NETWORK, reads.NETWORK_SITES, reads.USERS_POSTS)
    )
    read_row = spec_of(("post", "list"))
    assert read_row is not None
    assert read_row.summary_reads == ()
