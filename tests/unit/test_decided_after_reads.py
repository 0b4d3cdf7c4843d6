"""Deciding with the site's answers: `decide` is `Decided` only when every read its checks asked for was
answered, `NeedsReads` otherwise; the one loop around it (decided_after_reads) reads and decides again,
and never hands back what was decided while a read was still unread — after its last round, what is
still unread counts as a failed read (for the role check: refused, not let through)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from wp_agent.agent.site_commands import READ_ROUNDS, decided_after_reads
from wp_agent.models.target import Role
from wp_agent.policy import CommandPolicy
from wp_agent.policy.decide import Decided, decide
from wp_agent.policy.roles import ROLE_RULE
from wp_agent.policy.site_reads import Argv, NeedsReads, SiteReads
from wp_agent.policy.site_scope import SiteScope

POLICY = CommandPolicy()
EDITOR = SiteScope(None, False, Role.EDITOR)
TYPE_OF_77 = ("post", "get", "77", "--field=post_type")


def _answering(answer: str | None, log: list[Sequence[Argv]]) -> Callable[[Sequence[Argv]], list[str | None]]:
    def read(reads: Sequence[Argv]) -> list[str | None]:
        log.append(list(reads))
        return [answer for _ in reads]

    return read


def test_decide_needs_the_reads_its_checks_asked_for_and_decides_with_their_answers() -> None:
    asked = decide(POLICY, "post delete 77 --force", EDITOR, SiteReads())
    assert asked == NeedsReads((TYPE_OF_77,))
    log: list[Sequence[Argv]] = []
    on_a_post = decided_after_reads(lambda site: decide(POLICY, "post delete 77 --force", EDITOR, site),
                                    _answering("post\n", log))  # fmt: skip
    assert isinstance(on_a_post, Decided)
    assert (on_a_post.decision.category.value, on_a_post.rules) == ("destructive", ("confirm.flag.force",))
    assert log == [[TYPE_OF_77]]
    on_an_order = decided_after_reads(
        lambda site: decide(POLICY, "post delete 77 --force", EDITOR, site), _answering("shop_order\n", [])
    )
    assert on_an_order.decision.rule == ROLE_RULE


def test_a_read_asked_earlier_in_the_same_round_still_leaves_the_command_undecided() -> None:
    site = SiteReads()
    site(list(TYPE_OF_77))  # another check of the same reply asked it first
    assert decide(POLICY, "post delete 77 --force", EDITOR, site) == NeedsReads((TYPE_OF_77,))


def test_reads_that_name_further_reads_stop_at_the_cap_as_failed_reads() -> None:
    def chain(site: SiteReads) -> int:  # each answer names one more read
        depth = 0
        while site(["post", "get", str(depth)]) is not None:
            depth += 1
        return depth

    log: list[Sequence[Argv]] = []
    assert decided_after_reads(chain, _answering("1", log)) == READ_ROUNDS - 1
    assert len(log) == READ_ROUNDS - 1  # the last round reads nothing: it decides


def test_the_role_check_refuses_what_was_never_read() -> None:
    never = decide(POLICY, "post delete 77 --force", EDITOR, SiteReads(final=True))
    assert isinstance(never, Decided)
    assert never.decision.blocked
    assert never.decision.rule == ROLE_RULE


def test_not_decided_with_nothing_left_to_read_is_the_deciders_mistake() -> None:
    with pytest.raises(RuntimeError):
        decided_after_reads(lambda site: NeedsReads((TYPE_OF_77,)), _answering("post", []))
