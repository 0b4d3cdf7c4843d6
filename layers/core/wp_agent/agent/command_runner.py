"""Running the commands a tool step decided to run: intent checkpointed before each command, the
result (masked) and its audit record after; commands of one step run in parallel up to the
executor's concurrency. An SSH connection failure ends the run."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from wp_agent.agent import audit_outbox
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.session_state import CommandRecord, CommandStatus, SessionState, SessionStatus
from wp_agent.agent.turn_io import TurnIO
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.masking import mask_command_output
from wp_agent.models.agent_io import utc_now_iso
from wp_agent.telemetry import COMMANDS_EXECUTED_TOTAL, SSH_CONNECTION_FAILURES_TOTAL

logger = logging.getLogger(__name__)


class CommandRunner:
    def __init__(self, io: TurnIO) -> None:
        self._io = io

    def run_all(
        self, state: SessionState, records: list[CommandRecord], results: dict[str, dict[str, Any]]
    ) -> None:
        """Run `records`, putting each one's tool_result into `results`."""
        if not records:
            return
        workers = max(1, min(len(records), self._io.deps.wp_cli.max_concurrency))
        self._io.deps.changes.before(state, records)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="wp-cli") as pool:
            for record in pool.map(lambda r: self.execute(state, r), records):
                results[record.tool_use_id] = self._io.result_for(record)
        self._io.deps.changes.after(state, records)
        fatal = next((r for r in records if r.error_code is AgentErrorCode.SSH_CONNECTION_FAILED), None)
        if fatal is not None:
            error = WpAgentError(
                AgentErrorCode.SSH_CONNECTION_FAILED,
                details={"command": fatal.command, "reason": fatal.stderr},
            )
            self._io.finish(state, SessionStatus.FAILED, error=error)

    def execute(self, state: SessionState, record: CommandRecord) -> CommandRecord:
        io, deps = self._io, self._io.deps
        try:
            deps.limiter.before_command(state.user_id)
        except WpAgentError as exc:
            with io.lock:
                record.status = CommandStatus.BLOCKED
                record.policy_reason = exc.message_ja
                record.rule = "rate_limit.commands_per_user"
                io.checkpoint(state)
            return record
        with io.lock:
            record.status = CommandStatus.STARTED
            record.started_at = utc_now_iso()
            io.checkpoint(state)  # intent before the command runs
        io.emit("command_started", f"実行中: wp {record.command}", record.command)
        started = time.perf_counter()
        outcome_fields = self._run(state, record)
        with io.lock:
            for key, value in outcome_fields.items():
                setattr(record, key, value)
            record.status = CommandStatus.FINISHED
            record.finished_at = utc_now_iso()
            record.duration_ms = int((time.perf_counter() - started) * 1000)
            io.audit_record(state, AuditEventType.COMMAND_EXECUTED, record)  # saved with the result
            try:
                io.checkpoint(state)  # result after
            except Exception:
                # The command ran: its audit record is written even when the session could not be
                # saved (e.g. a cancel changed it meanwhile).
                audit_outbox.deliver(state, deps.audit)
                raise
        self._report(state, record)
        return record

    def _run(self, state: SessionState, record: CommandRecord) -> dict[str, Any]:
        deps = self._io.deps
        try:
            with deps.limiter.command_slot(state.target_id):
                result = deps.wp_cli.run(record.argv)
        except WpAgentError as exc:
            return {"exit_code": None, "stdout": "", "stderr": exc.message_ja, "error_code": exc.code}
        # Records (session store, API views, AgentOutput) never hold a secret the site printed.
        return {
            "exit_code": result.exit_code,
            "stdout": mask_command_output(result.stdout),
            "stderr": mask_command_output(result.stderr),
            "truncated": result.truncated,
        }

    def _report(self, state: SessionState, record: CommandRecord) -> None:
        telemetry = self._io.deps.telemetry
        telemetry.count(COMMANDS_EXECUTED_TOTAL)
        if record.error_code is AgentErrorCode.SSH_CONNECTION_FAILED:
            telemetry.count(SSH_CONNECTION_FAILURES_TOTAL)
        logger.info(
            "command executed",
            extra={
                "type": "execution",
                "command": record.command,
                "success": record.succeeded,
                "exit_code": record.exit_code,
                "duration_ms": record.duration_ms,
                "error_code": record.error_code.value if record.error_code else None,
                "session_id": state.session_id,
                "user_id": state.user_id,
                "target_id": state.target_id,
            },
        )
        mark = "完了" if record.succeeded else "失敗"
        self._io.emit(
            "command_finished", f"{mark}: wp {record.command}（{record.duration_ms}ms）", record.command
        )
