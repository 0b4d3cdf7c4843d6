"""An undo run in the agent's own loop (POST /v1/sessions/{id}/runs/{runId}/undo): its first step is
not a model call but the revert plan, written as the wp_cli tool calls of an assistant message. From
there the run is like any other — each step goes through the policy, destructive ones wait for the
requester's approval, every command is audited and gets a before-image of its own — and the model
reports the outcome at the end."""

from __future__ import annotations

import shlex
from typing import Any, Protocol

from wp_agent.agent.ports import Opening, RateLimiter
from wp_agent.agent.prompt import TOOL_NAME
from wp_agent.agent.session_state import SessionState
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
        plan = service.plan(records).plan
    except WpAgentError as exc:
        text = f"{reverts} を元に戻せませんでした: {exc.message_ja}"
        return Opening([{"type": "text", "text": text}], service.events)
    service.audit_start(approved_by=None)
    lines = [f"{reverts} で変更した内容を、実行前の状態に戻します。"]
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
    for index, step in enumerate(steps):
        content.append(
            {
                "type": "tool_use",
                "id": f"toolu_undo_{state.run_id[4:]}_{index}",
                "name": TOOL_NAME,
                "input": {"command": shlex.join(step.argv), "reason": f"元に戻す: {step.restores_ja}"},
            }
        )
    return Opening(content, service.events)
