"""The agent's two hooks into command execution: capture before-images just before non-read
commands run, record their after-images right after. Everything else about undo lives here.

Capture reads are policy-checked (each must be a `read`) and scoped to the session's site; their
outputs are masked and stored with the command's record (which is audited), so they are not audited
one by one. An undo run audits every command it runs (audit=True).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from wp_agent.agent import audit_outbox
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.ports import RateLimiter
from wp_agent.agent.session_state import CommandRecord, CommandStatus, SessionState
from wp_agent.agent.site_scope import apply_site_scope
from wp_agent.errors import WpAgentError
from wp_agent.executors.port import CommandResult, WpCli
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.masking import mask_command
from wp_agent.undo.capture import capture_before_all, record_after_all
from wp_agent.undo.entities import CaptureError, Read

logger = logging.getLogger(__name__)
_CAPTURE_REASON = "元に戻すための実行前・実行後の状態の記録（読み取りのみ）"


def site_reader(
    state: SessionState,
    policy: CommandPolicy,
    wp_cli: WpCli,
    limiter: RateLimiter,
    *,
    audit: bool = False,
) -> Read:
    """Reads for before/after images: refused unless the policy calls them `read` on this session's scope."""

    def read(argv: list[str]) -> CommandResult:
        decision = apply_site_scope(policy.classify_argv(argv), state)
        if decision.category is not PolicyCategory.READ:
            raise CaptureError(f"状態を読み取るコマンドが許可されませんでした（{decision.rule}）")
        try:
            with limiter.command_slot(state.target_id):
                result = wp_cli.run(list(decision.argv))
        except WpAgentError as exc:
            raise CaptureError(f"状態を読み取れませんでした（{exc.code.value}）") from None
        if audit:
            audit_outbox.audit(
                state, AuditEventType.COMMAND_EXECUTED, command=mask_command(" ".join(decision.argv)),
                reason=_CAPTURE_REASON, category=decision.category.value, rule=decision.rule,
                success=result.ok, exit_code=result.exit_code, duration_ms=result.duration_ms,
            )  # fmt: skip
        return result

    return read


def capture_records(records: Sequence[CommandRecord], read: Read, *, workers: int = 1) -> None:
    """Before the batch runs: the before-image of every write/destructive command of it (all of them
    first, so commands running side by side never see each other's changes), read together."""
    writes = [r for r in records if r.category is not PolicyCategory.READ and r.undo is None]
    if not writes:
        return
    try:
        captures = capture_before_all([(r.command_path, r.argv) for r in writes], read, workers=workers)
    except Exception:  # an undo problem never stops the command the person asked for
        logger.exception("before-image capture failed", extra={"commands": [r.command for r in writes]})
        return
    for record, capture in zip(writes, captures, strict=True):
        record.undo = capture


def record_records(records: Sequence[CommandRecord], read: Read, *, workers: int = 1) -> None:
    """After the batch ran: what each command created and the after-image of what it changed."""
    done = [r for r in records if r.undo is not None and r.status is CommandStatus.FINISHED]
    ran = [(r.command_path, r.argv, r.undo, r.stdout) for r in done if r.undo is not None]
    if not ran:
        return
    try:
        record_after_all(ran, read, workers=workers)
    except Exception:
        logger.exception("after-image capture failed", extra={"commands": [r.command for r in done]})
        for record in done:
            if record.undo is not None:
                record.undo.revertible = False
                record.undo.reason_ja = "実行後の状態を記録できなかったため、元に戻せません。"
