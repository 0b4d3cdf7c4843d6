"""An approved command is decided again before it runs, by the whole policy (policy/decide.py) on the site
as it is now: an editor's delete of a post that has since become a shop's order is refused by the role,
though the person approved it (before, only the table and the site scope were applied again)."""

from __future__ import annotations

from wp_agent.agent.approval_steps import Verdict, verdicts
from wp_agent.agent.session_state import ApprovalStatus, CommandRecord, CommandStatus, PendingApproval
from wp_agent.models.target import Role
from wp_agent.policy import CommandPolicy
from wp_agent.policy.roles import ROLE_RULE
from wp_agent.policy.site_reads import NeedsReads, SiteReads
from wp_agent.policy.site_scope import SiteScope

POLICY = CommandPolicy()
EDITOR = SiteScope(site_url=None, network_allowed=False, role=Role.EDITOR)
TYPE_OF_77 = ("post", "get", "77", "--field=post_type")


def approved_delete() -> tuple[PendingApproval, list[CommandRecord]]:
    decision = POLICY.classify("post delete 77")
    record = CommandRecord(
        tool_use_id="toolu_1", command="post delete 77", argv=list(decision.argv), category=decision.category,
        rule=decision.rule, policy_reason=decision.reason_ja, command_path=list(decision.command_path),
        status=CommandStatus.HELD, iteration=1, approval_id="apr_1",
    )  # fmt: skip
    pending = PendingApproval(
        approval_id="apr_1", requested_by="editor-1", requested_at="2026-12-06T00:00:00Z",
        expires_at="2026-12-06T01:00:00Z", items=[], status=ApprovalStatus.APPROVED,
    )  # fmt: skip
    return pending, [record]


def test_the_recheck_asks_the_site_and_refuses_what_the_role_may_no_longer_change() -> None:
    pending, held = approved_delete()
    first = SiteReads()
    # Not decided before the site answers: the ledger reads it, then this is decided again.
    assert verdicts(pending, held, POLICY, EDITOR, first) == NeedsReads((TYPE_OF_77,))
    assert first.requested == [TYPE_OF_77]

    [refused] = _decided(verdicts(pending, held, POLICY, EDITOR, SiteReads({TYPE_OF_77: "shop_order\n"})))
    assert (refused.action, refused.rule) == ("blocked", ROLE_RULE)
    [runs] = _decided(verdicts(pending, held, POLICY, EDITOR, SiteReads({TYPE_OF_77: "post\n"})))
    assert runs.action == "run"
    # What is never read (the ledger's last round: a failed read) is not a type the editor may change.
    [unread] = _decided(verdicts(pending, held, POLICY, EDITOR, SiteReads(final=True)))
    assert (unread.action, unread.rule) == ("blocked", ROLE_RULE)


def _decided(found: list[Verdict] | NeedsReads) -> list[Verdict]:
    assert not isinstance(found, NeedsReads), found
    return found


def test_an_administrator_is_not_read_for_and_a_rejection_reads_nothing() -> None:
    pending, held = approved_delete()
    reads = SiteReads()
    [runs] = _decided(verdicts(pending, held, POLICY, SiteScope(None, False, Role.ADMIN), reads))
    assert runs.action == "run"
    assert reads.requested == []
    rejected = pending.model_copy(update={"status": ApprovalStatus.REJECTED})
    [answer] = _decided(verdicts(rejected, held, POLICY, EDITOR, reads))
    assert answer.action == "rejected"
    assert reads.requested == []
