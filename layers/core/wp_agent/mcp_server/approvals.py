"""Who decides a command `wp_cli` held: a person, never the model that asked for it.

- The client supports elicitation: the client asks its human right away (summary, impact, command).
- Otherwise (or no answer came): the held run is handed to the person's terminal — kept under
  ~/.wp-agent/pending like a held `ask` — and the model is told how a person approves it there
  (`wp-agent approve <id>`, which shows the policy's own summary and asks y/N). A run holding a
  secret is not written to disk: it expires at once (audited, never run).
- Only with `wp-agent mcp --allow-model-approval` do `approve` / `reject` tools exist, and the
  model may decide what stays held in its session (the option's warning says what that means).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from wp_agent.agent.session_state import PendingApproval, SessionState
from wp_agent.mcp_server.session import CallOutcome, McpSession
from wp_agent.program import command_name

# Keeps a held run (and the channel that asked) for the person's terminal; its approval id, or None
# when it may not be written (it holds a secret). Wired by cli/mcp.py to the CLI's approve-later store.
HandOver = Callable[[SessionState, str], str | None]

DEFAULT_USER = "local-user"

MODEL_APPROVAL_WARNING_JA = (
    "警告: このサーバーは --allow-model-approval で起動されています。approve ツールはAIが呼び出せるため、"
    "AIが自分の依頼を承認できます。破壊的な操作の安全は、AIが利用者本人に確認することだけに頼ることになります。"
)

NOT_KEPT_JA = (
    "この操作はパスワードなどの秘密情報を含むため、後から承認できるようには保存しませんでした。"
    "保留は取り消し、何も実行していません。承認の確認ができるクライアント（elicitation 対応）から依頼するか、"
    "利用者本人が端末で wp-agent ask を使ってください。"
)


class ApprovalAnswer(BaseModel):
    """What the person is asked through elicitation."""

    approve: bool = Field(description="この操作を実行してよい場合は true、やめる場合は false")


def approval_text_ja(pending: PendingApproval) -> str:
    lines = ["次の操作は取り消せない可能性があるため、利用者の承認まで保留しました（まだ実行していません）:"]
    for item in pending.items:
        lines += [f"・{item.summary_ja}", f"  影響: {item.impact_ja}", f"  コマンド: wp {item.command}"]
    return "\n".join(lines)


async def ask_person(
    ctx: Context, session: McpSession, pending: PendingApproval, *, timeout_seconds: float
) -> CallOutcome | None:
    """Ask through the client (elicitation). None: no answer (cancelled, timed out, or the client
    failed), so the command is still held under its approval id."""
    message = approval_text_ja(pending) + "\n\n実行してよろしいですか？"
    answer = None
    with anyio.move_on_after(timeout_seconds):  # a person who never answers leaves it held
        try:
            answer = await ctx.elicit(message=message, schema=ApprovalAnswer)
        except Exception:  # noqa: BLE001 — a client that cannot answer leaves the command held
            return None
    if answer is None or answer.action == "cancel":
        return None
    approved = answer.action == "accept" and bool(getattr(answer, "data", None) and answer.data.approve)
    outcome = await anyio.to_thread.run_sync(
        lambda: session.decide(
            pending.approval_id,
            approved=approved,
            decided_by=f"{session.channel}:elicitation",
            comment=None if approved else "MCP elicitation: declined",
        )
    )
    if not approved and outcome.record is not None:
        return CallOutcome(
            text="利用者が操作を取りやめました（実行していません）。", is_error=False, record=outcome.record
        )
    return outcome


def _items(pending: PendingApproval) -> list[dict[str, str]]:
    return [{"command": i.command, "summary": i.summary_ja, "impact": i.impact_ja} for i in pending.items]


def terminal_commands(approval_id: str, user: str) -> tuple[str, str]:
    """`wp-agent approve …` and `wp-agent reject …` as the person types them."""
    who = "" if user == DEFAULT_USER else f" --user {shlex.quote(user)}"
    program = command_name()  # the name on PATH, or the path that works
    return f"{program} approve {approval_id}{who}", f"{program} reject {approval_id}{who}"


def handed_to_person(pending: PendingApproval, user: str) -> tuple[str, dict[str, Any]]:
    """What the model is told of a hold kept for the person's terminal (text, structured content)."""
    approve, reject = terminal_commands(pending.approval_id, user)
    text = (
        approval_text_ja(pending)
        + f"\n\n承認ID: {pending.approval_id}\n"
        + "この操作はAIからは承認できません。利用者本人に上の内容をそのまま伝え、端末で次のコマンドを"
        + "実行してもらってください（内容が表示され、確認してから実行されます。MCPサーバーと同じ設定で実行します）:\n"
        + f"  {approve}\n  {reject}   # 実行しない場合\n"
        + f"承認の期限: {pending.expires_at}"
    )
    data = {
        "status": "awaiting_approval",
        "approvalId": pending.approval_id,
        "approveWith": "terminal",
        "approveCommand": approve,
        "rejectCommand": reject,
        "expiresAt": pending.expires_at,
        "items": _items(pending),
    }
    return text, data


def left_to_model(pending: PendingApproval) -> tuple[str, dict[str, Any]]:
    """What the model is told of a hold it may decide (only with --allow-model-approval)."""
    text = (
        approval_text_ja(pending)
        + f"\n\n承認ID: {pending.approval_id}\n"
        + "利用者本人にこの内容を見せて確認し、実行してよければ approve、やめるなら reject をこの承認IDで呼んでください。"
    )
    data = {
        "status": "awaiting_approval",
        "approvalId": pending.approval_id,
        "approveWith": "tool",
        "expiresAt": pending.expires_at,
        "items": _items(pending),
    }
    return text, data
