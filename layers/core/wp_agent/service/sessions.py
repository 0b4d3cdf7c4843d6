"""Runs and approvals of a session, as the API offers them. Every check happens before any write."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from wp_agent.adapters.aws.session_store import StaleSessionError
from wp_agent.adapters.aws.workflow import ResumeOutcome
from wp_agent.agent import lifecycle
from wp_agent.agent.ports import ApprovalDecision, AuditLog
from wp_agent.agent.session_state import ApprovalStatus, SessionState, SessionStatus
from wp_agent.agent.turn import continue_session, new_session
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.api import (
    ApprovalDecided,
    ApprovalDecisionRequest,
    RunAccepted,
    SessionMessageRequest,
    SessionView,
)
from wp_agent.models.target import Target
from wp_agent.policy.masking import mask_text
from wp_agent.service import notifications
from wp_agent.service.api_errors import ApiError, not_found
from wp_agent.service.runtime import AwsRuntime
from wp_agent.service.session_updates import update_session
from wp_agent.service.targets import check_multisite_access
from wp_agent.service.views import session_view
from wp_agent.telemetry import APPROVALS_RESOLVED_TOTAL, REQUESTS_TOTAL

logger = logging.getLogger(__name__)

SESSION_ID = re.compile(r"^[A-Za-z0-9_\-]{8,64}$")
APPROVAL_ID = re.compile(r"^apr_[0-9a-f]{20}$")
T = TypeVar("T")


def check_session_id(session_id: str) -> None:
    if not SESSION_ID.match(session_id):
        raise ApiError(
            400,
            "INVALID_SESSION_ID",
            "セッションIDは英数字・-・_ の8〜64文字で指定してください。",
            fields=["sessionId"],
        )


class SessionService:
    def __init__(self, runtime: AwsRuntime) -> None:
        self._rt = runtime

    # -- reading --------------------------------------------------------------------------------

    def _owned(self, session_id: str, user_id: str) -> SessionState:
        check_session_id(session_id)
        state = self._rt.sessions.load(session_id)
        if state is None or state.user_id != user_id:
            raise not_found("セッション", "SESSION_NOT_FOUND")
        return state

    def view(self, session_id: str, user_id: str) -> SessionView:
        return session_view(self._owned(session_id, user_id))

    # -- starting a run -------------------------------------------------------------------------

    def _target_for(self, body: SessionMessageRequest, state: SessionState | None, user_id: str) -> Target:
        target_id = body.target_id or (state.target_id if state else None)
        if target_id is None:
            raise ApiError(
                400,
                "TARGET_REQUIRED",
                "最初のメッセージでは targetId（操作するサイト）を指定してください。",
                fields=["targetId"],
            )
        if state is not None and body.target_id and body.target_id != state.target_id:
            raise ApiError(
                400, "TARGET_MISMATCH", "このセッションは別のサイトを対象にしています。", fields=["targetId"]
            )
        target = self._rt.registry.get(target_id)
        if target is None or not target.owned_by(user_id):
            raise not_found("対象サイト", "TARGET_NOT_FOUND")
        check_multisite_access(target, user_id, body.multisite, field="multisite")
        return target

    def post_message(self, session_id: str, user_id: str, body: SessionMessageRequest) -> RunAccepted:
        check_session_id(session_id)
        state = self._rt.sessions.load(session_id)
        if state is not None and state.user_id != user_id:
            raise not_found("セッション", "SESSION_NOT_FOUND")
        if state is not None and not state.status.terminal:
            state = self._end_abandoned_run(state)
        target = self._target_for(body, state, user_id)
        agent_input = AgentInput.model_validate(body.model_dump(exclude={"target_id"}))
        site_url = agent_input.multisite.site_url if agent_input.multisite else None
        if state is None:
            state = new_session(
                agent_input,
                session_id=session_id,
                user_id=user_id,
                target_id=target.target_id,
                site_url=site_url,
            )
            state.network_admin = target.multisite and target.network_admin(user_id)
        else:
            if not state.status.terminal:
                raise ApiError(
                    409,
                    "SESSION_BUSY",
                    "このセッションでは処理が実行中です。完了するか中止してから送信してください。",
                )
            continue_session(state, agent_input, timeout_ms=self._rt.settings.wp_cli_timeout)
            state.site_url = site_url
        state.status = SessionStatus.PLANNING
        # Known before the start, so the session is saved once: the run's first turn may load it
        # at any moment after the start, and must find it as it will stay.
        state.execution_arn = self._rt.workflow.execution_arn(state.run_id)
        try:
            self._rt.sessions.save(state)  # conditional: only one run can become active
        except StaleSessionError as exc:
            raise ApiError(
                409, "SESSION_BUSY", "このセッションには同時に別のメッセージが送信されました。"
            ) from exc
        try:
            self._rt.workflow.start(state.session_id, state.run_id)
        except Exception as exc:
            logger.exception(
                "could not start the run", extra={"session_id": session_id, "run_id": state.run_id}
            )
            lifecycle.fail_run(state, "workflow_start_failed")
            self._rt.sessions.save(state)
            raise ApiError(
                503,
                "WORKFLOW_UNAVAILABLE",
                "処理を開始できませんでした。しばらくしてから再度お試しください。",
            ) from exc
        self._rt.telemetry.count(REQUESTS_TOTAL)
        logger.info(
            "run requested",
            extra={
                "type": "access",
                "user_id": user_id,
                "session_id": session_id,
                "run_id": state.run_id,
                "target_id": state.target_id,
                "input_message": mask_text(agent_input.message[:500]),
            },
        )
        return RunAccepted(
            session_id=session_id,
            run_id=state.run_id,
            status=state.status.value,
            status_url=f"/v1/sessions/{session_id}",
        )

    def _end_abandoned_run(self, state: SessionState) -> SessionState:
        """A run whose execution ended without the session knowing (even its failure path failed)
        must not keep the session busy for ever: its failure is recorded now."""
        if not state.execution_arn:
            return state
        try:
            ended = self._rt.workflow.has_ended(state.execution_arn)
        except Exception:  # unknown: the session stays busy for now
            logger.warning("could not check the run's execution", exc_info=True)
            return state
        if not ended:
            return state
        run_id = state.run_id

        def fail(current: SessionState, log: AuditLog) -> bool:
            return current.run_id == run_id and lifecycle.fail_run(current, "workflow_ended")

        state, failed = self._update(state.session_id, fail)
        if failed:
            logger.warning("ended a run whose execution had ended", extra={"run_id": run_id})
            notifications.run_finished(self._rt.events, state, self._rt.telemetry)
        return state

    # -- approvals ------------------------------------------------------------------------------

    def decide(
        self, session_id: str, approval_id: str, user_id: str, body: ApprovalDecisionRequest
    ) -> ApprovalDecided:
        """Record the requester's decision, then hand it to the run's approval wait. After a 503
        (recorded, not handed over) the same decision may be sent again and is only handed over;
        any other repeat is 409. The API never ends a run here: only the workflow's own timeout
        expires an approval."""
        check_session_id(session_id)
        if not APPROVAL_ID.match(approval_id):
            raise not_found("承認リクエスト", "APPROVAL_NOT_FOUND")
        wanted = ApprovalStatus.APPROVED if body.decision == "approve" else ApprovalStatus.REJECTED

        def record(state: SessionState, log: AuditLog) -> _Decided:
            approval = state.find_approval(approval_id)
            if approval is None:
                raise not_found("承認リクエスト", "APPROVAL_NOT_FOUND")
            if approval.requested_by != user_id:
                raise ApiError(403, "NOT_REQUESTER", "この操作を承認・却下できるのは依頼者本人だけです。")
            if approval.status is ApprovalStatus.EXPIRED or (
                approval.status is ApprovalStatus.PENDING and _expired(approval.expires_at)
            ):
                raise _approval_expired()
            if approval.status is ApprovalStatus.CANCELLED or (
                approval.status is ApprovalStatus.PENDING and state.status.terminal
            ):
                raise _run_ended()
            if approval.status is not ApprovalStatus.PENDING:
                if (
                    approval.handover_failed
                    and approval.status is wanted
                    and approval is state.pending_approval
                    and state.status is SessionStatus.AWAITING_APPROVAL
                ):
                    return _Decided(approval.task_token, new=False)  # recorded before: hand it over again
                raise _already_decided(approval.status)
            decision = ApprovalDecision(
                approved=wanted is ApprovalStatus.APPROVED, decided_by=user_id, comment=body.comment
            )
            token = approval.task_token
            lifecycle.record_decision(state, decision, log)
            return _Decided(token, new=True)

        state, decided = self._update(session_id, record, unchanged=lambda d: not d.new)
        if decided.new:
            self._rt.telemetry.count(APPROVALS_RESOLVED_TOTAL)
        # Without a token yet, the approval task answers itself when it stores one.
        if decided.token:
            outcome = self._hand_over(session_id, approval_id, body.decision, decided.token)
            if outcome is not ResumeOutcome.RESUMED:
                self._explain_closed_wait(session_id, approval_id, decided)
            state = self._load_existing(session_id)
        return ApprovalDecided(
            session_id=session_id, approval_id=approval_id, decision=body.decision, status=state.status.value
        )

    def _hand_over(self, session_id: str, approval_id: str, decision: str, token: str) -> ResumeOutcome:
        try:
            return self._rt.workflow.resume(token, {"approvalId": approval_id, "decision": decision})
        except Exception:
            logger.exception("could not hand the decision to the run", extra={"session_id": session_id})
            self._note_failed_handover(session_id, approval_id)
            raise ApiError(
                503,
                "WORKFLOW_UNAVAILABLE",
                "判断は記録しましたが、処理を再開できませんでした。同じ操作をもう一度送ってください。",
            ) from None

    def _note_failed_handover(self, session_id: str, approval_id: str) -> None:
        def note(state: SessionState, log: AuditLog) -> bool:
            pending = state.pending_approval
            if pending is None or pending.approval_id != approval_id or pending.handover_failed:
                return False
            pending.handover_failed = True
            return True

        try:
            self._update(session_id, note)
        except Exception:  # the 503 stands; a resend is then "already decided" and the wait times out
            logger.exception("could not note the failed hand-over", extra={"session_id": session_id})

    def _explain_closed_wait(self, session_id: str, approval_id: str, decided: _Decided) -> None:
        """The wait did not take the decision because it is closed. Step Functions says "timed out"
        alike for a wait that timed out and one already answered: by our earlier hand-over (its
        answer lost), by a twin request (a double click), or by a retried wait task that found the
        stored decision. So the run may be going ahead and nothing is changed here. The wait times
        out only after the approval's deadline, which a first decision was checked against: such
        a decision was delivered. Only the workflow's own timeout path marks an approval expired."""
        state = self._load_existing(session_id)
        approval = state.find_approval(approval_id)
        if state.status is SessionStatus.CANCELLED or (
            approval is not None and approval.status is ApprovalStatus.CANCELLED
        ):
            raise _run_ended()
        if approval is None or approval.status is ApprovalStatus.EXPIRED:
            raise _approval_expired()
        if not decided.new:
            raise _already_decided(approval.status)

    # -- cancel ---------------------------------------------------------------------------------

    def cancel(self, session_id: str, user_id: str) -> SessionView:
        check_session_id(session_id)

        def stop(state: SessionState, log: AuditLog) -> None:
            if state.user_id != user_id:
                raise not_found("セッション", "SESSION_NOT_FOUND")
            if not lifecycle.cancel_run(state):
                raise ApiError(409, "RUN_NOT_ACTIVE", "実行中の処理はありません。")

        state, _ = self._update(session_id, stop)
        if state.execution_arn:
            try:
                self._rt.workflow.stop(state.execution_arn, cause="cancelled by the requester")
            except Exception:
                # The cancel is stored: the run's next turn sees it and ends without running more.
                logger.warning(
                    "could not stop the run's execution; its next turn ends it",
                    exc_info=True,
                    extra={"session_id": session_id, "run_id": state.run_id},
                )
        notifications.run_finished(self._rt.events, state, self._rt.telemetry)
        return session_view(state)

    def _load_existing(self, session_id: str) -> SessionState:
        state = self._rt.sessions.load(session_id)
        if state is None:
            raise not_found("セッション", "SESSION_NOT_FOUND")
        return state

    def _update(
        self,
        session_id: str,
        change: Callable[[SessionState, AuditLog], T],
        *,
        unchanged: Callable[[T], bool] = lambda result: result is False,
    ) -> tuple[SessionState, T]:
        """Apply `change` (which refuses with ApiError) and save, again on a fresh load when another
        writer got there first; its audit events are written once, after the save."""

        try:
            return update_session(
                self._rt.sessions,
                self._rt.audit,
                lambda: self._load_existing(session_id),
                change,
                unchanged=unchanged,
            )
        except StaleSessionError:
            raise ApiError(
                409, "SESSION_CHANGED", "セッションが更新中です。もう一度お試しください。"
            ) from None


@dataclass(frozen=True)
class _Decided:
    token: str | None  # the approval wait's, when it has begun
    new: bool  # False: the same decision was recorded before


def _already_decided(status: ApprovalStatus) -> ApiError:
    done = "承認" if status is ApprovalStatus.APPROVED else "却下"
    return ApiError(409, "APPROVAL_ALREADY_DECIDED", f"この承認リクエストは既に{done}されています。")


def _run_ended() -> ApiError:
    return ApiError(
        409, "RUN_ENDED", "この承認リクエストの処理は既に終了しています。もう一度指示を送ってください。"
    )


def _approval_expired() -> ApiError:
    return ApiError(409, "APPROVAL_EXPIRED", "承認の期限が切れています。もう一度指示を送ってください。")


def _expired(expires_at: str) -> bool:
    return datetime.fromisoformat(expires_at.replace("Z", "+00:00")) <= datetime.now(UTC)
