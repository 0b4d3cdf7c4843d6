"""tool_result blocks: what the model is told about each of its tool calls, from the call's record.

Every tool_use in an assistant message needs exactly one tool_result in the next user message
(Messages API); `closing_results` gives them when a run ended before its calls were answered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from wp_agent.agent.messages import ToolResultBlock, tool_uses
from wp_agent.agent.session_state import CommandRecord, CommandStatus, SessionState
from wp_agent.agent.tool_output import render_tool_result
from wp_agent.errors import AgentErrorCode
from wp_agent.executors.port import CommandResult
from wp_agent.masking import mask_command_output

# What WP-CLI says of a command it does not have (2.10: "'block' is not a registered subcommand of
# 'post'. …", "'ability' is not a registered wp command. …"): the policy allows commands of newer WP-CLI
# releases than a site may run.
_NOT_REGISTERED = re.compile(r"'[^'\n]{1,80}' is not a registered (?:wp command|subcommand of)")
NOT_ON_THIS_WP_CLI_JA = (
    "（このサイトの WP-CLI にはこのコマンドがありません。WP-CLI が古い可能性があります。"
    "サイトの管理者に WP-CLI の更新を依頼するか、別のコマンドで確かめてください）"
)
OUTCOME_UNKNOWN_JA = (
    "前回の処理が途中で中断されたため、このコマンドの結果は不明です。二重実行を避けるため再実行していません。"
    "読み取りコマンドで現在の状態を確認してください。"
)


def tool_result(tool_use_id: str, content: str, *, is_error: bool = False) -> dict[str, Any]:
    return ToolResultBlock(tool_use_id, content, is_error).to_param()


def result_for(record: CommandRecord, *, timeout_ms: int, simulated: bool) -> dict[str, Any]:
    """The tool_result of a handled call (never for one still waiting for approval)."""
    if record.status in {CommandStatus.UNKNOWN, CommandStatus.STARTED}:
        return tool_result(record.tool_use_id, OUTCOME_UNKNOWN_JA, is_error=True)
    if record.status is CommandStatus.BLOCKED:
        return tool_result(
            record.tool_use_id,
            f"このコマンドはブロックされました（実行していません）: {record.policy_reason}",
            is_error=True,
        )
    if record.status in {CommandStatus.REJECTED, CommandStatus.HELD, CommandStatus.QUEUED}:
        return tool_result(
            record.tool_use_id, "利用者の承認が得られなかったため、実行していません。", is_error=True
        )
    if record.error_code is AgentErrorCode.COMMAND_TIMEOUT:
        return tool_result(
            record.tool_use_id,
            f"コマンドがタイムアウトしたため中断しました（{timeout_ms}ms）。",
            is_error=True,
        )
    if record.error_code is not None:
        return tool_result(
            record.tool_use_id,
            f"コマンドを実行できませんでした: {record.stderr or record.error_code.value}",
            is_error=True,
        )
    content = render_tool_result(
        command=record.command,
        exit_code=record.exit_code,
        stdout=record.stdout,
        stderr=record.stderr,
        truncated=record.truncated,
        simulated=simulated,
    )
    if record.exit_code != 0 and _NOT_REGISTERED.search(record.stderr or ""):
        content = f"{content}\n{NOT_ON_THIS_WP_CLI_JA}"  # ours, outside the site's output
    return tool_result(record.tool_use_id, content, is_error=record.exit_code != 0)


def outcome_fields(result: CommandResult) -> dict[str, Any]:
    """What a command record keeps of a result: records (session store, API views, AgentOutput) never
    hold a secret the site printed."""
    return {
        "exit_code": result.exit_code,
        "stdout": mask_command_output(result.stdout),
        "stderr": mask_command_output(result.stderr),
        "truncated": result.truncated,
        "rolled_back": result.rolled_back,
    }


def last_tool_use_ids(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The tool calls of the last assistant message, in their order."""
    for message in reversed(messages):
        if message["role"] == "assistant" and isinstance(message["content"], list):
            return [call.id for call in tool_uses(message["content"])]
    return []


def open_tool_use_ids(state: SessionState) -> list[str]:
    """Tool calls of the last message when it is an assistant message (i.e. not yet answered)."""
    if not state.messages or state.messages[-1]["role"] != "assistant":
        return []
    return [call.id for call in tool_uses(state.messages[-1]["content"])]


def closing_results(state: SessionState, *, timeout_ms: int, simulated: bool = False) -> list[dict[str, Any]]:
    """The answers to every unanswered tool call of the last assistant message (the run ended before it
    could give them), so the conversation stays valid for a follow-up run; [] when none is open."""
    held = {r["tool_use_id"]: r for r in state.held_results}
    blocks: list[dict[str, Any]] = []
    for tool_use_id in open_tool_use_ids(state):
        record = state.record(tool_use_id)
        if tool_use_id in held:
            blocks.append(held[tool_use_id])
        elif record is None:
            blocks.append(
                tool_result(
                    tool_use_id, "処理が終了したため、このコマンドは実行していません。", is_error=True
                )
            )
        else:
            blocks.append(result_for(record, timeout_ms=timeout_ms, simulated=simulated))
    return blocks
