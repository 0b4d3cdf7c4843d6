"""Turn a session's records into the spec's AgentOutput (success, partial failure, error codes)."""

from __future__ import annotations

from typing import Any

from wp_agent.agent.batch_results import Operation, split_operations
from wp_agent.agent.session_state import (
    CommandRecord,
    CommandStatus,
    PendingApproval,
    SessionState,
    SessionStatus,
)
from wp_agent.errors import DEFAULT_MESSAGES_JA, AgentErrorCode, WpAgentError
from wp_agent.masking import mask_argv, mask_command_output, mask_text
from wp_agent.models.agent_io import (
    AgentErrorInfo,
    AgentMetadata,
    AgentOutput,
    ExecutedCommand,
    PartialSuccess,
    PartialSuccessDetail,
)
from wp_agent.models.run_status import RunStatus, ended_status
from wp_agent.policy.categories import PolicyCategory

SANDBOX_LABEL = "【サンドボックス】この結果はサンドボックス（サンプルデータ入りのローカルWordPress）での実行結果です（実際のサイトは変更されていません）。"


def executed_commands(state: SessionState) -> list[ExecutedCommand]:
    executed: list[ExecutedCommand] = []
    for record in state.run_commands():
        # A started command without a recorded result may have run: report it as of unknown outcome.
        if not record.status.may_have_run:
            continue
        error = None
        if record.status in {CommandStatus.UNKNOWN, CommandStatus.STARTED}:
            error = "結果不明（処理が中断されました）"
        elif record.error_code is not None or record.exit_code != 0:
            error = mask_command_output(record.stderr.strip()) or (
                record.error_code.value if record.error_code else None
            )
        executed.append(
            ExecutedCommand(
                command=record.command,
                success=record.succeeded,
                output=mask_command_output(record.stdout) if record.stdout else None,
                error=error,
                executed_at=record.started_at or record.finished_at or state.started_at,
                duration_ms=record.duration_ms,
                undo_available=None
                if record.category is PolicyCategory.READ
                else bool(record.undo and record.undo.revertible),
            )
        )
    return executed


def operations(state: SessionState) -> list[Operation]:
    """Write/destructive operations, one per object for multi-ID commands; a later retry of the
    same operation replaces the earlier outcome."""
    latest: dict[str, Operation] = {}
    for record in state.run_commands():
        if record.category is PolicyCategory.READ:
            continue
        if record.status in {CommandStatus.UNKNOWN, CommandStatus.STARTED}:
            op = Operation(record.command, False, "結果不明（処理が中断されました）")
            latest[op.operation] = op
            continue
        if record.status is not CommandStatus.FINISHED:
            continue
        if record.error_code is not None:
            error_text = mask_command_output(record.stderr) or record.error_code.value
            op = Operation(" ".join(mask_argv(record.argv)), False, error_text)
            latest[op.operation] = op
            continue
        for op in split_operations(
            mask_argv(record.argv), tuple(record.command_path), record.exit_code, record.stdout, record.stderr
        ):
            masked = Operation(op.operation, op.success, mask_command_output(op.error) if op.error else None)
            latest[masked.operation] = masked
    return list(latest.values())


def approval_details(pending: PendingApproval) -> dict[str, Any]:
    return {
        "approvalId": pending.approval_id,
        "expiresAt": pending.expires_at,
        "commands": [
            {"command": i.command, "summary": i.summary_ja, "impact": i.impact_ja} for i in pending.items
        ],
    }


def confirmation_message(pending: PendingApproval) -> str:
    lines = [f"・{i.summary_ja}（{i.impact_ja}）" for i in pending.items]
    return "次の操作には確認が必要です。よろしいですか？\n" + "\n".join(lines)


def _last_blocked_without_recovery(state: SessionState) -> CommandRecord | None:
    commands = state.run_commands()
    last_block_index = max(
        (
            i
            for i, r in enumerate(commands)
            if r.status is CommandStatus.BLOCKED and r.rule.startswith(("blocked.", "custom.deny", "scope."))
        ),
        default=None,
    )
    if last_block_index is None:
        return None
    recovered = any(r.succeeded for r in commands[last_block_index + 1 :])
    return None if recovered else commands[last_block_index]


def refused_run(state: SessionState) -> CommandRecord | None:
    """The last refusal when every command of the run was refused (policy, site scope, post-type guard,
    the user's rate limit, the loop guard, the re-check after approval): nothing asked was done."""
    commands = state.run_commands()
    if commands and all(r.status is CommandStatus.BLOCKED for r in commands):
        return commands[-1]
    return None


def _site_never_reached(state: SessionState) -> CommandRecord | None:
    """The last command when every command of the run failed before WordPress answered (SSH down,
    WP-CLI missing, timeouts): whatever the model said, the run did not do its job. A command that
    WP-CLI itself answered with an error (e.g. "Could not find the post") is an observation, not this."""
    finished = [r for r in state.run_commands() if r.status is CommandStatus.FINISHED]
    if finished and all(r.error_code is not None for r in finished):
        return finished[-1]
    return None


def build_output(
    state: SessionState, *, response: str, error: WpAgentError | None, simulated: bool
) -> AgentOutput:
    ops = operations(state)
    failed = [o for o in ops if not o.success]
    succeeded = [o for o in ops if o.success]
    partial = None
    if failed:
        partial = PartialSuccess(
            succeeded=len(succeeded),
            failed=len(failed),
            details=[
                PartialSuccessDetail(operation=o.operation, success=o.success, error=o.error) for o in ops
            ],
        )
    info: AgentErrorInfo | None = None
    if error is not None:
        info = AgentErrorInfo(code=error.code, message=error.message_ja, details=error.details or None)
    elif failed and succeeded:
        total = len(ops)
        info = AgentErrorInfo(
            code=AgentErrorCode.PARTIAL_FAILURE,
            message=f"一部の操作が失敗しました（{total}件中{len(succeeded)}件成功、{len(failed)}件失敗）",
        )
    elif failed:
        timeouts = any(r.error_code is AgentErrorCode.COMMAND_TIMEOUT for r in state.run_commands())
        code = AgentErrorCode.COMMAND_TIMEOUT if timeouts else AgentErrorCode.UNKNOWN_ERROR
        info = AgentErrorInfo(
            code=code,
            message=f"操作を実行できませんでした（{len(failed)}件が失敗）。各操作の失敗の理由を確認してください。",
        )
    elif (blocked := _last_blocked_without_recovery(state) or refused_run(state)) is not None:
        by_policy = blocked.rule.startswith(("blocked.", "custom.deny", "scope."))
        info = AgentErrorInfo(
            code=AgentErrorCode.COMMAND_BLOCKED,
            message=DEFAULT_MESSAGES_JA[AgentErrorCode.COMMAND_BLOCKED]
            if by_policy
            else f"コマンドは実行されませんでした: {mask_text(blocked.policy_reason)}",
            details={
                "command": blocked.command,
                "reason": mask_text(blocked.policy_reason),
                "blockedPattern": mask_text(blocked.pattern or blocked.command),
            },
        )
    elif (unreached := _site_never_reached(state)) is not None and unreached.error_code is not None:
        info = AgentErrorInfo(
            code=unreached.error_code,
            message=mask_text(unreached.stderr.strip()) or DEFAULT_MESSAGES_JA[unreached.error_code],
        )
    text = mask_text(response)
    if not text and error is not None:
        text = error.message_ja
    if simulated and any(r.status is CommandStatus.FINISHED for r in state.run_commands()):
        text = f"{text}\n\n{SANDBOX_LABEL}" if text else SANDBOX_LABEL
    declined = any(r.status is CommandStatus.REJECTED for r in state.run_commands())
    if state.status.terminal:
        status = ended_status(info.code.value if info is not None else None, declined=declined)
    elif info is not None and info.code is AgentErrorCode.CONFIRMATION_REQUIRED:
        status = RunStatus.AWAITING_APPROVAL
    else:
        status = RunStatus.RUNNING
    return AgentOutput(
        success=info is None,
        run_status=status,
        response=text,
        executed_commands=executed_commands(state),
        partial_success=partial,
        error=info,
        metadata=AgentMetadata(
            total_iterations=state.iterations,
            total_commands_executed=sum(
                1 for r in state.run_commands() if r.status is CommandStatus.FINISHED
            ),
            execution_time_ms=state.elapsed_ms,
        ),
    )


def awaiting_approval_output(state: SessionState, *, simulated: bool) -> AgentOutput:
    """CONFIRMATION_REQUIRED: the run stopped before destructive commands; nothing held has run."""
    pending = state.pending_approval
    if pending is None:
        raise ValueError("no pending approval")
    last_text = ""
    for message in reversed(state.messages):
        if message["role"] == "assistant" and isinstance(message["content"], list):
            last_text = "\n".join(
                b.get("text", "") for b in message["content"] if b.get("type") == "text"
            ).strip()
            break
    error = WpAgentError(
        AgentErrorCode.CONFIRMATION_REQUIRED, confirmation_message(pending), details=approval_details(pending)
    )
    return build_output(state, response=last_text, error=error, simulated=simulated)


def current_run_status(state: SessionState) -> RunStatus:
    """The session's current run as the run-status vocabulary says it (models/run_status.py)."""
    if state.status is SessionStatus.AWAITING_APPROVAL:
        return RunStatus.AWAITING_APPROVAL
    if not state.status.terminal:
        return RunStatus.RUNNING
    if state.result is not None and state.result.run_status is not None:
        return state.result.run_status
    code = state.result.error.code.value if state.result is not None and state.result.error else None
    return ended_status(code, declined=False)
