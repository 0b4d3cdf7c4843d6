"""Runs and approvals of a session, as the API offers them. Every check happens before any write."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from wp_agent.agent import approval_protocol, lifecycle
from wp_agent.agent.approval_protocol import ApprovalRefusedError, Refusal, ResumeOutcome
from wp_agent.agent.ledger import Moment, commit
from wp_agent.agent.lifecycle import continue_session, new_session
from wp_agent.agent.session_state import ApprovalStatus, SessionState
from wp_agent.errors import StaleSessionError
from wp_agent.masking import mask_text
from wp_agent.models import field_rules
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.api import (
    ApprovalDecided,
    ApprovalDecisionRequest,
    RunAccepted,
    SessionMessageRequest,
    SessionView,
)
from wp_agent.models.target import Target
from wp_agent.service import notifications
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.runtime import AwsRuntime
from wp_agent.service.session_updates import update_session
from wp_agent.service.targets import check_multisite_access
from wp_agent.service.views import session_view
from wp_agent.telemetry import APPROVALS_RESOLVED_TOTAL, REQUESTS_TOTAL

logger = logging.getLogger(__name__)

T = TypeVar("T")


def check_session_id(session_id: str) -> None:
    if not field_rules.matches(field_rules.SESSION_ID, session_id):
        raise ApiError(
            ApiErrorCode.INVALID_SESSION_ID,
            fields=["sessionId"],
        )


class SessionService:
    def __init__(self, runtime: AwsRuntime) -> None:
        self._rt = runtime

    # -- reading --------------------------------------------------------------------------------

    def owned(self, session_id: str, user_id: str) -> SessionState:
        """The session when `user_id` is its requester; otherwise 404 (as if it did not exist)."""
        return self._owned(session_id, user_id)

    def _owned(self, session_id: str, user_id: str) -> SessionState:
        check_session_id(session_id)
        state = self._rt.sessions.load(session_id)
        if state is None or state.user_id != user_id:
            raise ApiError(ApiErrorCode.SESSION_NOT_FOUND)
        return state

    def view(self, session_id: str, user_id: str) -> SessionView:
        return session_view(self._owned(session_id, user_id))

    # -- starting a run -------------------------------------------------------------------------

    def _target_for(self, body: SessionMessageRequest, state: SessionState | None, user_id: str) -> Target:
        target_id = body.target_id or (state.target_id if state else None)
        if target_id is None:
            raise ApiError(
                ApiErrorCode.TARGET_REQUIRED,
                fields=["targetId"],
            )
        if state is not None and body.target_id and body.target_id != state.target_id:
            raise ApiError(ApiErrorCode.TARGET_MISMATCH, fields=["targetId"])
        target = self._rt.registry.get(target_id)
        if target is None or target.role_of(user_id) is None:  # owners and members may ask
            raise ApiError(ApiErrorCode.TARGET_NOT_FOUND)
        check_multisite_access(target, user_id, body.multisite, field="multisite")
        return target

    def post_message(self, session_id: str, user_id: str, body: SessionMessageRequest) -> RunAccepted:
        return self.start_run(session_id, user_id, body)

    def start_run(
        self, session_id: str, user_id: str, body: SessionMessageRequest, *, reverts_run_id: str | None = None
    ) -> RunAccepted:
        """A new run in the session (an undo run when `reverts_run_id` names the run it reverts)."""
        check_session_id(session_id)
        state = self._rt.sessions.load(session_id)
        if state is not None and state.user_id != user_id:
            raise ApiError(ApiErrorCode.SESSION_NOT_FOUND)
        if state is not None and not state.status.terminal:
            state = self._end_abandoned_run(state)
        target = self._target_for(body, state, user_id)
        agent_input = AgentInput.model_validate(body.model_dump(exclude={"target_id"}))
        site_url = agent_input.multisite.site_url if agent_input.multisite else None
        network_admin = target.multisite and target.network_admin(user_id)  # rights as the registry says now
        if state is None:
            state = new_session(
                agent_input,
                session_id=session_id,
                user_id=user_id,
                target_id=target.target_id,
                site_url=site_url,
            )
        else:
            if not state.status.terminal:
                raise ApiError(
                    ApiErrorCode.SESSION_BUSY,
                )
            continue_session(state, agent_input, timeout_ms=self._rt.settings.wp_cli_timeout)
        # Known before the start, so the session is saved once: the run's first turn may load it
        # at any moment after the start, and must find it as it will stay.
        lifecycle.start_run(
            state,
            site_url=site_url,
            network_admin=network_admin,
            role=target.role_of(user_id),
            update_allowance=target.update_allowance,
            reverts_run_id=reverts_run_id,
            execution_arn=self._rt.workflow.execution_arn(state.run_id),
        )
        try:
            # conditional: only one run can become active
            commit(self._rt.sessions, self._rt.audit, state, Moment.RUN_STARTED)
        except StaleSessionError as exc:
            raise ApiError(
                ApiErrorCode.SESSION_BUSY, "このセッションには同時に別のメッセージが送信されました。"
            ) from exc
        try:
            self._rt.workflow.start(state.session_id, state.run_id)
        except Exception as exc:
            logger.exception(
                "could not start the run", extra={"session_id": session_id, "run_id": state.run_id}
            )
            lifecycle.fail_run(state, "workflow_start_failed")
            commit(self._rt.sessions, self._rt.audit, state, Moment.RUN_ENDED)
            raise ApiError(
                ApiErrorCode.WORKFLOW_UNAVAILABLE,
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
            run_url=f"/v1/sessions/{session_id}/runs/{state.run_id}",
            reverts_run_id=state.reverts_run_id,
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

        def fail(current: SessionState) -> bool:
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
        """Store the requester's decision, then hand it to the run's approval wait (the approval
        protocol's steps). A decision not known to have reached the wait (the hand-over failed: 503,
        or its request died) may be sent again and is only handed over; any other repeat is 409.
        The API never ends a run here: only the workflow's own timeout expires an approval."""
        check_session_id(session_id)
        if not field_rules.matches(field_rules.APPROVAL_ID, approval_id):
            raise ApiError(ApiErrorCode.APPROVAL_NOT_FOUND)

        def store(state: SessionState) -> approval_protocol.Decision:
            if state.user_id != user_id:
                raise ApiError(ApiErrorCode.SESSION_NOT_FOUND)
            try:
                return approval_protocol.decide(
                    state,
                    approval_id,
                    decided_by=user_id,
                    approved=body.decision == "approve",
                    comment=body.comment,
                )
            except ApprovalRefusedError as refused:
                raise _refused(refused.refusal, refused.status) from None

        state, decision = self._update(session_id, store, unchanged=lambda d: not d.new)
        if decision.new:
            self._rt.telemetry.count(APPROVALS_RESOLVED_TOTAL)
            try:  # told once, best effort: the decision stands and goes to the run whatever the bus says
                notifications.approval_decided(self._rt.events, state, approval_id)
            except Exception:
                logger.warning(
                    "could not announce the decision", exc_info=True, extra={"approval_id": approval_id}
                )
        # Without a token yet, the approval task answers itself when it stores one.
        if decision.token:
            outcome = approval_protocol.hand_over(self._rt.workflow, decision.token, decision.payload)
            self._record_hand_over(session_id, approval_id, outcome)
            if outcome is ResumeOutcome.FAILED:
                raise ApiError(
                    ApiErrorCode.WORKFLOW_UNAVAILABLE,
                    "判断は記録しましたが、処理を再開できませんでした。同じ操作をもう一度送ってください。",
                )
            state = self._load_existing(session_id)
            if outcome is not ResumeOutcome.RESUMED:
                verdict = approval_protocol.closed_wait_verdict(state, approval_id, new=decision.new)
                if verdict is not None:
                    found = state.find_approval(approval_id)
                    raise _refused(verdict, found.status if found else None)
        return ApprovalDecided(
            session_id=session_id, approval_id=approval_id, decision=body.decision, status=state.status.value
        )

    def _record_hand_over(self, session_id: str, approval_id: str, outcome: ResumeOutcome) -> None:
        """Best effort: when this cannot be saved, the decision stays resendable (stored)."""
        try:
            self._update(
                session_id, lambda state: approval_protocol.record_hand_over(state, approval_id, outcome)
            )
        except Exception:
            logger.warning(
                "could not record how the hand-over went", exc_info=True, extra={"session_id": session_id}
            )

    # -- cancel ---------------------------------------------------------------------------------

    def cancel(self, session_id: str, user_id: str) -> SessionView:
        check_session_id(session_id)

        def stop(state: SessionState) -> str | None:
            """Cancel; the token of the approval wait the run was in, if any."""
            if state.user_id != user_id:
                raise ApiError(ApiErrorCode.SESSION_NOT_FOUND)
            token = state.pending_approval.task_token if state.pending_approval else None
            if not lifecycle.cancel_run(state):
                raise ApiError(ApiErrorCode.RUN_NOT_ACTIVE)
            return token

        state, waiting_token = self._update(session_id, stop)
        if state.audit_outbox:
            # The cancel's audit record could not be written yet: the run itself writes it on its way
            # out (its next step sees the cancel), so it is not stopped; a waiting run is woken.
            self._wake_for_its_end(state, waiting_token)
        elif state.execution_arn:
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

    def _wake_for_its_end(self, state: SessionState, token: str | None) -> None:
        if token is None:
            return  # in a turn: its next save meets the cancel
        outcome = approval_protocol.hand_over(self._rt.workflow, token, {"cancelled": state.run_id})
        if outcome is not ResumeOutcome.RESUMED:
            logger.warning(
                "a cancelled run's audit record waits for its approval wait to end",
                extra={"session_id": state.session_id, "run_id": state.run_id, "outcome": outcome.value},
            )

    def _load_existing(self, session_id: str) -> SessionState:
        state = self._rt.sessions.load(session_id)
        if state is None:
            raise ApiError(ApiErrorCode.SESSION_NOT_FOUND)
        return state

    def _update(
        self,
        session_id: str,
        change: Callable[[SessionState], T],
        *,
        unchanged: Callable[[T], bool] = lambda result: result is False,
    ) -> tuple[SessionState, T]:
        """Apply `change` (which refuses with ApiError) and save, again on a fresh load when another
        writer got there first; its audit records are delivered after the save."""

        try:
            return update_session(
                self._rt.sessions,
                self._rt.audit,
                lambda: self._load_existing(session_id),
                change,
                unchanged=unchanged,
            )
        except StaleSessionError:
            raise ApiError(ApiErrorCode.SESSION_CHANGED) from None


def _already_decided(status: ApprovalStatus) -> ApiError:
    done = "承認" if status is ApprovalStatus.APPROVED else "却下"
    return ApiError(ApiErrorCode.APPROVAL_ALREADY_DECIDED, f"この承認リクエストは既に{done}されています。")


def _run_ended() -> ApiError:
    return ApiError(ApiErrorCode.RUN_ENDED)


def _approval_expired() -> ApiError:
    return ApiError(ApiErrorCode.APPROVAL_EXPIRED)


def _refused(refusal: Refusal, status: ApprovalStatus | None) -> ApiError:
    if refusal is Refusal.EXPIRED:
        return _approval_expired()
    if refusal is Refusal.RUN_ENDED:
        return _run_ended()
    if refusal is Refusal.ALREADY_DECIDED and status is not None:
        return _already_decided(status)
    return ApiError(ApiErrorCode.APPROVAL_NOT_FOUND)
