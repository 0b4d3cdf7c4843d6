"""An undo run in the agent's own loop (POST /v1/sessions/{id}/runs/{runId}/undo): its first step is
not a model call but the revert plan, written as the wp_cli tool calls of an assistant message. From
there the run is like any other — each step goes through the policy, destructive ones wait for the
requester's approval, every command is audited and gets a before-image of its own. Its answer is
written here too, from the records (no model call, as with `wp-agent undo`)."""

from __future__ import annotations

import shlex
from typing import Any, Protocol

from wp_agent.agent.ports import Opening, RateLimiter
from wp_agent.agent.prompt import TOOL_NAME
from wp_agent.agent.session_state import CommandStatus, SessionState
from wp_agent.errors import WpAgentError
from wp_agent.executors.port import WpCli
from wp_agent.policy import CommandPolicy
from wp_agent.undo.execute import NEW_ID
from wp_agent.undo.revert_run import RevertRun


class TurnDeps(Protocol):
    """What of the turn's dependencies planning needs (AgentDeps has them)."""

    @property
    def policy(self) -> CommandPolicy: ...

    @property
    def wp_cli(self) -> WpCli: ...

    @property
    def limiter(self) -> RateLimiter: ...


def plan_message(state: SessionState, deps: TurnDeps) -> Opening:
    """The assistant content that starts an undo run: what cannot be undone, then one tool call per
    revert command (none when there is nothing to do: the run then ends with this text); with the
    audit records planning made (its reads, the run's start)."""
    reverts = state.reverts_run_id or ""
    records = [c for c in state.commands if c.run_id == reverts]
    service = RevertRun(deps.policy, deps.wp_cli, deps.limiter, state, reverts)
    try:
        plan = service.plan(records).plan  # (service.plan_approved: the steps it approves itself)
    except WpAgentError as exc:
        text = f"{reverts} を元に戻せませんでした: {exc.message_ja}"
        return Opening([{"type": "text", "text": text}], service.events)
    service.audit_start(approved_by=None)
    lines = [_opening_line(reverts)]
    lines += [f"・戻せないもの: {s.entity_ja} — {s.reason_ja}" for s in plan.skipped]
    lines += [f"・{note}" for note in plan.notes_ja]
    steps = [s for s in plan.steps if NEW_ID not in " ".join(s.argv)]
    if len(steps) < len(plan.steps):
        lines.append(
            "・作り直した投稿のタグ・投稿フォーマットと、複数の値を持つカスタムフィールドは、"
            "この方法では付け直しません（wp-agent undo をお使いください）。"
        )
    if not steps:
        lines.append("元に戻す操作はありません。")
    content: list[dict[str, Any]] = [{"type": "text", "text": "\n".join(lines)}]
    approved: dict[str, list[str]] = {}
    for index, step in enumerate(steps):
        tool_use_id = f"toolu_undo_{state.run_id[4:]}_{index}"
        content.append(
            {
                "type": "tool_use",
                "id": tool_use_id,
                "name": TOOL_NAME,
                "input": {"command": shlex.join(step.argv), "reason": f"元に戻す: {step.restores_ja}"},
            }
        )
        if step.argv in service.plan_approved:  # the turn's policy reads it again; approved only as this argv
            approved[tool_use_id] = step.argv
    return Opening(content, service.events, approved)


def _opening_line(reverts: str) -> str:
    return f"{reverts} で変更した内容を、実行前の状態に戻します。"


def closing_text(state: SessionState) -> str:
    """The undo run's answer once its steps were decided and ran: what was put back, what failed or was
    declined, and what the plan said could not be put back."""
    reverts = state.reverts_run_id or ""
    mine = [c for c in state.commands if c.run_id == state.run_id]
    done = [c for c in mine if c.succeeded]
    declined = [c for c in mine if c.status is CommandStatus.REJECTED]
    failed = [c for c in mine if c not in done and c not in declined]
    if not failed and not declined:
        lines = [f"{reverts} で変更した内容を元に戻しました（{len(done)}件の操作）。"]
    else:
        lines = [f"{reverts} で変更した内容のうち、{len(done)}件の操作で元に戻しました。"]
    for record in failed:
        why = (record.stderr or record.policy_reason).strip().splitlines()
        lines.append(f"・元に戻せなかった操作: wp {record.command}（{why[0][:200] if why else '失敗'}）")
    lines += [f"・見送った操作: wp {record.command}" for record in declined]
    lines += _plan_notes(state, reverts)
    return "\n".join(lines)


def _plan_notes(state: SessionState, reverts: str) -> list[str]:
    """The plan's own lines (what cannot be put back, notes), from this run's opening message."""
    opening = _opening_line(reverts)
    for message in state.messages:
        if message["role"] != "assistant" or not isinstance(message["content"], list):
            continue
        for block in message["content"]:
            text = block.get("text", "") if isinstance(block, dict) else ""
            if text.startswith(opening):
                return [line for line in text.splitlines()[1:] if line.startswith("・")]
    return []
