"""The turn's two approval steps, decided; the turn applies them (and the approval's own state changes
go through approval_protocol).

- hold: each command the pipeline held gets an ApprovalItem with a Japanese summary of what will
  really happen (approval_summary, which asks the site through `SiteReads`) and, when undo cannot
  revert it, says so.
- resolve: after the decision, each held command's verdict: run (re-checked against the current
  policy and rights), refused by that re-check, rejected, or already handled by an earlier attempt.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from wp_agent import clock
from wp_agent.agent.session_state import (
    ApprovalItem,
    ApprovalStatus,
    CommandRecord,
    CommandStatus,
    PendingApproval,
)
from wp_agent.masking import mask_text
from wp_agent.policy import CommandPolicy, PolicyDecision
from wp_agent.policy.approval_summary import IRREVERSIBLE, worded
from wp_agent.policy.decide import decide
from wp_agent.policy.site_reads import Argv, NeedsReads, SiteReads, StateReader
from wp_agent.policy.site_scope import SiteScope

READ_REASON = "承認の要約のために現在の状態を確認（読み取りのみ）"  # the audit reason of the summary's reads
# the audit reason of the reads the policy's recheck of an approved command asks (policy/decide.py)
RECHECK_REASON = "承認された操作を実行してよいか、現在のサイトで再確認（読み取りのみ）"
# The summary's reads again when the person approves (a record of its own: the site may have changed since).
REREAD_REASON = "承認の要約のために、承認された時点の状態を再確認（読み取りのみ）"
PLAN_READ_REASON = "フリート計画の確認内容のために現在の状態を確認（読み取りのみ）"
# A held command whose approval text could not be computed (refused under the policy's fault rule,
# command_policy.RULE_FAILED), and the rest of one change (an undo, a fleet site's plan) it belongs to.
UNWORDED_JA = "この操作の承認内容（何が起きるか）を作れなかったため実行しません（不具合として記録しました）"
PART_UNWORDED_JA = "同じ変更の一部について承認内容を作れなかったため、この変更は実行しません"


def new_approval_id() -> str:
    return f"apr_{uuid.uuid4().hex[:20]}"


def expires_at(timeout_seconds: int) -> str:
    expiry = clock.now() + timedelta(seconds=timeout_seconds)
    return expiry.isoformat(timespec="seconds").replace("+00:00", "Z")


def with_undo_note(impact_ja: str, cannot_undo_ja: str | None) -> str:
    """The approval impact, saying why undo cannot revert the command (unless it says「元に戻せません」)."""
    if cannot_undo_ja is None or IRREVERSIBLE in impact_ja:
        return impact_ja
    return f"{impact_ja} {cannot_undo_ja}".strip()


def approval_item(
    record: CommandRecord, decision: PolicyDecision, site: SiteReads, cannot_undo_ja: str | None
) -> ApprovalItem | None:
    """What the requester is shown for one held command (`decision`: the policy's, for its argv).
    What held it comes from the record: a site check may have held a write the argv alone allows.
    None when the summary fails on the command (a fault, logged): the command is then refused
    (UNWORDED_JA) — never shown with a text not computed from it, and never the end of the request."""
    held_by = dataclasses.replace(
        decision, category=record.category, rule=record.rule, reason_ja=record.policy_reason
    )
    described = worded(held_by, site)
    if described is None:
        return None
    summary, impact = described
    return ApprovalItem(
        tool_use_id=record.tool_use_id,
        command=record.command,
        summary_ja=summary,
        impact_ja=with_undo_note(impact, cannot_undo_ja),
        rule=record.rule,
        model_reason=mask_text(record.reason),
    )


@dataclass(frozen=True)
class Verdict:
    """What becomes of one held command once the approval is decided."""

    record: CommandRecord
    action: Literal["run", "blocked", "rejected", "settled"]
    reason_ja: str = ""  # blocked: why the re-check refused it
    rule: str = ""  # blocked: the rule that refused it


def rejection_text(pending: PendingApproval) -> str:
    comment = f"（コメント: {pending.comment}）" if pending.comment else ""
    return (
        f"利用者がこの操作を拒否しました。実行していません{comment}。"
        "別の方法を提案するか、拒否されたことを報告してください。"
    )


def verdicts(
    pending: PendingApproval,
    held: Sequence[CommandRecord],
    policy: CommandPolicy,
    scope: SiteScope,
    site: StateReader,
) -> list[Verdict] | NeedsReads:
    """Each held command of a decided approval: approved ones run unless an earlier attempt handled
    them or the approved argv no longer passes the policy as it decides now — the requester's current
    rights (a network administrator may have been removed) and the site as it is now (the post an
    editor's delete names may have become another type meanwhile): the whole of policy/decide.py, its
    reads asked on `site` — defence in depth. Or the reads every recheck needs first, all at once."""
    if pending.status is not ApprovalStatus.APPROVED:
        return [Verdict(r, "rejected") for r in held]
    found: list[Verdict] = []
    needed: list[Argv] = []
    for record in held:
        if record.status is not CommandStatus.HELD:
            found.append(Verdict(record, "settled"))
            continue
        recheck = decide(policy, record.argv, scope, site)
        if isinstance(recheck, NeedsReads):
            needed += recheck.reads
        elif recheck.decision.blocked:
            found.append(Verdict(record, "blocked", recheck.decision.reason_ja, recheck.decision.rule))
        else:
            found.append(Verdict(record, "run"))
    return NeedsReads(tuple(dict.fromkeys(needed))) if needed else found
