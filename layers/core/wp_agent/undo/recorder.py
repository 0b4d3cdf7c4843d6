"""The agent's two hooks into command execution: capture before-images just before non-read
commands run, record their after-images right after. Everything else about undo lives here.

Capture reads are policy-checked (each must be a `read`) and scoped to the session's site; their
outputs are masked and stored with the command's record (which is audited), so they are not audited
one by one. An undo run audits every command it runs (`on_read`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from wp_agent.agent.command_outcomes import SYSTEM
from wp_agent.agent.ports import RateLimiter
from wp_agent.agent.session_state import CommandRecord, CommandStatus
from wp_agent.errors import WpAgentError
from wp_agent.executors.port import CommandResult, WpCli, run_read
from wp_agent.masking import mask_command
from wp_agent.models.undo import UndoCapture
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.site_scope import SiteScope, apply_site_scope
from wp_agent.undo.capture import capture_before_all, record_after_all
from wp_agent.undo.entities import CaptureError, Read

logger = logging.getLogger(__name__)
_CAPTURE_REASON = "元に戻すための実行前・実行後の状態の記録（読み取りのみ）"


def site_reader(
    scope: SiteScope,
    target_id: str,
    policy: CommandPolicy,
    wp_cli: WpCli,
    limiter: RateLimiter,
    *,
    on_read: Callable[[dict[str, Any]], None] | None = None,
) -> Read:
    """Reads for before/after images: refused unless the policy calls them `read` on the session's
    scope. `on_read` is given what each read's audit record says (an undo run audits its reads)."""

    def read(argv: list[str]) -> CommandResult:
        decision = apply_site_scope(policy.classify_argv(argv), scope)
        if decision.category is not PolicyCategory.READ:
            raise CaptureError(f"状態を読み取るコマンドが許可されませんでした（{decision.rule}）")
        try:
            with limiter.command_slot(target_id):
                result = run_read(wp_cli, decision.argv)
        except WpAgentError as exc:
            raise CaptureError(f"状態を読み取れませんでした（{exc.code.value}）") from None
        if on_read is not None:
            on_read({
                "command": mask_command(" ".join(decision.argv)), "reason": _CAPTURE_REASON, "origin": SYSTEM,
                "category": decision.category.value, "rule": decision.rule, "success": result.ok,
                "exit_code": result.exit_code, "duration_ms": result.duration_ms,
            })  # fmt: skip
        return result

    return read


def capture_records(
    records: Sequence[CommandRecord], read: Read, *, workers: int = 1
) -> dict[str, UndoCapture]:
    """Before the batch runs: the before-image of every write/destructive command of it (all of them
    first, so commands running side by side never see each other's changes), read together; by
    tool_use id."""
    writes = [r for r in records if r.category is not PolicyCategory.READ and r.undo is None]
    if not writes:
        return {}
    try:
        captures = capture_before_all([(r.command_path, r.argv) for r in writes], read, workers=workers)
    except Exception:  # an undo problem never stops the command the person asked for
        logger.exception("before-image capture failed", extra={"commands": [r.command for r in writes]})
        return {}
    return {record.tool_use_id: capture for record, capture in zip(writes, captures, strict=True)}


def record_records(
    records: Sequence[CommandRecord], read: Read, *, workers: int = 1
) -> dict[str, UndoCapture]:
    """After the batch ran: each command's capture completed with what it created and the after-image
    of what it changed (a copy; the record keeps its own until the turn replaces it), by tool_use id."""
    done = [r for r in records if r.undo is not None and r.status is CommandStatus.FINISHED]
    if not done:
        return {}
    recorded = {r.tool_use_id: r.undo.model_copy(deep=True) for r in done if r.undo is not None}
    ran = [(r.command_path, r.argv, recorded[r.tool_use_id], r.stdout) for r in done]
    try:
        record_after_all(ran, read, workers=workers)
    except Exception:
        logger.exception("after-image capture failed", extra={"commands": [r.command for r in done]})
        for capture in recorded.values():
            capture.revertible = False
            capture.reason_ja = "実行後の状態を記録できなかったため、元に戻せません。"
    return recorded
