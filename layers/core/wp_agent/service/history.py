"""The operation history over the API (spec phase 2, 「操作履歴の記録」): a user's sessions, one run,
and a target's audit trail. Everything is read with index queries (adapters/aws/table_layout.py),
never scans, one bounded page at a time; the run and activity views read the same audit records as
`wp-agent history`, masked again on the way out."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.session_state import SessionStatus
from wp_agent.masking import mask_command, mask_text
from wp_agent.models.api import (
    ActivityPage,
    ActivityRecord,
    RunView,
    SessionPage,
    SessionSummary,
)
from wp_agent.service import cursors
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.run_records import build_run_view
from wp_agent.service.runtime import AwsRuntime, InvalidStartKeyError, audit_event_from_item
from wp_agent.service.sessions import SessionService
from wp_agent.service.targets import Caller, readable_record

# The audit trail is kept at most a year (destructive and approval records): no record is older.
_EARLIEST = "0000-01-01T00:00:00.000Z"
_LATEST = "9999-12-31T23:59:59.999Z"
_FREE_TEXT = ("reason", "error", "comment", "instruction", "answer", "policy_reason")


class HistoryService:
    def __init__(self, runtime: AwsRuntime) -> None:
        self._rt = runtime

    def sessions(
        self,
        user_id: str,
        *,
        target_id: str | None,
        status: SessionStatus | None,
        limit: int,
        cursor: str | None,
    ) -> SessionPage:
        """GET /v1/sessions: the caller's sessions, newest first."""
        query: dict[str, Any] = {
            "route": "sessions",
            "user": user_id,
            "target": target_id,
            "status": status,
            "limit": limit,
        }
        try:
            page = self._rt.sessions.list_for_user(
                user_id,
                target_id=target_id,
                status=status.value if status else None,
                limit=limit,
                start_key=cursors.decode(cursor, query),
            )
        except InvalidStartKeyError:
            raise cursors.invalid() from None
        return SessionPage(
            sessions=[_session_summary(item) for item in page.items],
            next_cursor=cursors.encode(page.next_key, query),
        )

    def run(self, session_id: str, run_id: str, user_id: str) -> RunView:
        """GET /v1/sessions/{sessionId}/runs/{runId}: the requester's run (404 for anyone else)."""
        state = SessionService(self._rt).owned(session_id, user_id)
        view = build_run_view(state, run_id, self._rt.audit.for_run(session_id, run_id))
        if view is None:
            raise ApiError(ApiErrorCode.RUN_NOT_FOUND)
        return view

    def activity(
        self,
        target_id: str,
        caller: Caller,
        *,
        since: datetime | None,
        until: datetime | None,
        types: list[AuditEventType] | None,
        limit: int,
        cursor: str | None,
    ) -> ActivityPage:
        """GET /v1/targets/{targetId}/activity: the target's audit trail, for its owners and admins
        (a deleted target's too), newest first, since <= timestamp < until."""
        readable_record(self._rt, target_id, caller)
        lower, upper = _bound(since, _EARLIEST), _bound(until, _LATEST)
        if lower >= upper:
            raise ApiError(ApiErrorCode.INVALID_TIME_RANGE, fields=["from", "to"])
        names = sorted({t.value for t in types}) if types else None
        query: dict[str, Any] = {
            "route": "activity",
            "target": target_id,
            "from": lower,
            "to": upper,
            "types": names,
        }
        query |= {"limit": limit}
        try:
            page = self._rt.audit.page_for_target(
                target_id,
                since=lower,
                until=upper,
                types=names,
                limit=limit,
                start_key=cursors.decode(cursor, query),
            )
        except InvalidStartKeyError:
            raise cursors.invalid() from None
        return ActivityPage(
            records=[_activity(audit_event_from_item(item)) for item in page.items],
            next_cursor=cursors.encode(page.next_key, query),
        )


def _bound(moment: datetime | None, default: str) -> str:
    """The moment as the audit's sort keys spell time (UTC, milliseconds, Z)."""
    if moment is None:
        return default
    if moment.tzinfo is None:
        raise ApiError(
            ApiErrorCode.INVALID_TIME_RANGE, "日時にはタイムゾーン（Z や +09:00）を付けてください。"
        )
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _session_summary(item: dict[str, Any]) -> SessionSummary:
    updated = item.get("updated_at")
    return SessionSummary(
        session_id=str(item["pk"]).removeprefix("SESSION#"),
        target_id=str(item["target_id"]),
        status=str(item["status"]),
        run_id=str(item.get("run_id", "")),
        title=mask_text(str(item.get("title", ""))),
        started_at=str(item.get("started_at", "")),
        updated_at=(
            datetime.fromtimestamp(int(updated), UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
            if updated is not None
            else None
        ),
    )


def _activity(event: AuditEvent) -> ActivityRecord:
    """The record as stored (masked when written), masked once more: a rule added since applies too."""
    fields = event.model_dump(exclude_none=True, exclude={"type"})
    for name in _FREE_TEXT:
        if name in fields:
            fields[name] = mask_text(str(fields[name]))
    if "command" in fields:
        fields["command"] = mask_command(str(fields["command"]))
    return ActivityRecord(type=event.type.value, **fields)
