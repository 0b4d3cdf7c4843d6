"""Scheduled runs: EventBridge Scheduler schedules that start the run workflow, plus registry items.

Each schedule is one Scheduler schedule in the `wp-agent` group (named by its id, target = the run
state machine, executed as the scheduler role) and its registry items (see `store.py`), which
answer list/get and authorisation without a Scheduler call. Owners see and delete only their own
schedules (404 otherwise) and may schedule only targets they own.

Creation writes the registry first and the schedule second; if Scheduler refuses or fails, the
registry items are removed again. This order is deliberate: a rate() schedule fires the moment it
is created, so creating it first and rolling it back after a failed registry write could leave a
run started for a schedule that no longer exists, and a schedule without registry items would be
invisible to its owner and undeletable through the API. A crash between the two writes leaves at
most a registry item without a schedule, which its owner sees and can delete.

With an Idempotency-Key the schedule's id (its Scheduler name) comes from the owner and the key, so
a resend after a lost answer finds what the first attempt made: the registry items (the same request
is answered with them; another body is refused) and the Scheduler schedule (ConflictException, or
found by name when the create's answer was lost). Such a resend completes a half-made schedule and
never creates a second one. Registry items are removed after a failure only by the attempt that wrote
them, and only once Scheduler says the schedule does not exist.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from wp_agent.agent.model_client import AnthropicModelClient, ModelClient
from wp_agent.clock import now as utc_now
from wp_agent.config import LambdaSettings
from wp_agent.errors import AgentErrorCode, ConfigurationError, WpAgentError
from wp_agent.models import field_rules
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.schedule import (
    SCHEDULE_ID,
    ScheduleCreateRequest,
    ScheduledRunInput,
    ScheduleList,
    ScheduleProposalRequest,
    ScheduleProposalView,
    ScheduleView,
)
from wp_agent.models.target import Target
from wp_agent.scheduling.expressions import (
    AtExpression,
    ScheduleExpressionError,
    ValidatedSchedule,
    next_runs,
    parse_expression,
    parse_timezone,
    validate_schedule,
)
from wp_agent.scheduling.proposal import ScheduleClarification, ScheduleProposalError, propose_schedule
from wp_agent.scheduling.summary import summarize
from wp_agent.service.api_errors import ApiError, ApiErrorCode
from wp_agent.service.idempotency import keyed_id
from wp_agent.service.runtime import (
    ScheduleRecord,
    ScheduleStore,
    TargetRegistry,
    read_secret,
    required_setting,
    scheduler_client,
    scheduler_failure_code,
)
from wp_agent.service.targets import check_multisite_access

logger = logging.getLogger(__name__)

SCHEDULED_TIME_PLACEHOLDER = "<aws.scheduler.scheduled-time>"
# With the 15-minute minimum interval this bounds one owner at 20 x 96 = 1,920 runs a day.
MAX_SCHEDULES_PER_OWNER = 20
# The Scheduler target input becomes the state machine's input; keep it small (ids + AgentInput).
MAX_TARGET_INPUT_BYTES = 32 * 1024
# Scheduler retries StartExecution for 24 h by default; a weekly 9:00 run that starts hours late
# would surprise people, and every firing maps to one session anyway.
RETRY_POLICY = {"MaximumEventAgeInSeconds": 3_600, "MaximumRetryAttempts": 3}
_DEFAULT_NAME_CHARS = 40


def new_schedule_id() -> str:
    return f"sch_{secrets.token_hex(10)}"


class ScheduleService:
    """The /v1/schedules routes; adapters are built on first use unless passed in (tests)."""

    def __init__(
        self,
        settings: LambdaSettings,
        *,
        registry_table: str | None = None,
        scheduler: Any | None = None,
        model: ModelClient | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._settings = settings
        self._registry_table = registry_table or settings.wp_agent_registry_table
        self._scheduler_client = scheduler
        self._model_client = model
        self._clock = clock

    # -- adapters -----------------------------------------------------------------------------------

    @cached_property
    def _table_name(self) -> str:
        return required_setting(self._registry_table, "WP_AGENT_REGISTRY_TABLE")

    @cached_property
    def _store(self) -> ScheduleStore:
        return ScheduleStore(self._table_name)

    @cached_property
    def _targets(self) -> TargetRegistry:
        return TargetRegistry(self._table_name)

    @property
    def _scheduler(self) -> Any:
        if self._scheduler_client is None:
            self._scheduler_client = scheduler_client()
        return self._scheduler_client

    @property
    def _model(self) -> ModelClient:
        if self._model_client is None:
            self._model_client = AnthropicModelClient(self._settings, read_secret=read_secret)
        return self._model_client

    # -- routes -------------------------------------------------------------------------------------

    def create(
        self, owner_id: str, request: ScheduleCreateRequest, *, idempotency_key: str | None = None
    ) -> ScheduleView:
        """POST /v1/schedules → 201. 400 invalid, 404 target not owned, 409 owner's limit reached,
        422 the Idempotency-Key was used for another schedule."""
        state_machine_arn = required_setting(
            self._settings.wp_agent_state_machine_arn, "WP_AGENT_STATE_MACHINE_ARN"
        )
        role_arn = required_setting(self._settings.wp_agent_scheduler_role_arn, "WP_AGENT_SCHEDULER_ROLE_ARN")
        target = self._owned_target(owner_id, request.target_id)
        check_multisite_access(target, owner_id, request.agent_input.multisite, field="agentInput.multisite")
        now = self._clock()
        earlier: ScheduleRecord | None = None
        if idempotency_key is None:
            schedule_id = new_schedule_id()
        else:
            schedule_id = keyed_id("sch", owner_id, idempotency_key)
            earlier = self._store.get(schedule_id)
        # A resend is validated as of the first attempt, so an at() that has come close meanwhile
        # still names the same schedule.
        created = datetime.fromisoformat(earlier.created_at.replace("Z", "+00:00")) if earlier else now
        schedule = _validated(request.expression, request.timezone, created)
        record = ScheduleRecord(
            schedule_id=schedule_id,
            owner_id=owner_id,
            target_id=target.target_id,
            name=request.name or _default_name(request.agent_input.message),
            expression=schedule.expression,
            timezone=schedule.timezone,
            agent_input=request.agent_input,
            created_at=created.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        )
        arguments = self.create_schedule_arguments(
            record, schedule, state_machine_arn=state_machine_arn, role_arn=role_arn
        )
        if earlier is None:
            earlier = self._store_new(record)
        if earlier is not None and not _same_schedule(earlier, record):
            raise ApiError(ApiErrorCode.IDEMPOTENCY_KEY_REUSED)
        wrote = earlier is None
        record = earlier or record
        view = _view(record, now)
        if wrote or view.next_runs:  # an at() already past has run (and deleted itself) or never will
            self._create_in_scheduler(record, arguments, wrote=wrote)
        logger.info(
            "schedule created",
            extra={
                "schedule_id": record.schedule_id,
                "user_id": owner_id,
                "target_id": record.target_id,
                "expression": record.expression,
                "timezone": record.timezone,
                "repeated": not wrote,
            },
        )
        return view

    def _store_new(self, record: ScheduleRecord) -> ScheduleRecord | None:
        """Write a new schedule's registry items; None when written, else the record a concurrent
        attempt with the same key wrote first."""
        if self._store.count_for_owner(record.owner_id) >= MAX_SCHEDULES_PER_OWNER:
            raise ApiError(
                ApiErrorCode.SCHEDULE_LIMIT_REACHED,
                f"登録できるスケジュールは1人あたり{MAX_SCHEDULES_PER_OWNER}件までです。不要なスケジュールを削除してから登録してください。",
            )
        try:
            if self._store.put(record):
                return None
            stored = self._store.get(record.schedule_id)
        except Exception as exc:
            logger.exception("could not store a schedule", extra={"schedule_id": record.schedule_id})
            raise ApiError(
                ApiErrorCode.SCHEDULE_STORE_UNAVAILABLE,
            ) from exc
        if stored is None:  # written and removed again meanwhile (its attempt failed): not stored
            raise ApiError(ApiErrorCode.SCHEDULE_STORE_UNAVAILABLE)
        return stored

    def _create_in_scheduler(self, record: ScheduleRecord, arguments: dict[str, Any], *, wrote: bool) -> None:
        """CreateSchedule; a schedule of this name that exists already (an earlier attempt made it,
        or this create happened and its answer was lost) is this one."""
        try:
            self._scheduler.create_schedule(**arguments)
        except Exception as exc:
            if scheduler_failure_code(exc) == "ConflictException":
                return
            present = self._in_scheduler(record)
            if present:
                return
            if wrote and present is False:
                self._remove_record_after_failure(record)
            raise _scheduler_error(exc, self._settings.wp_agent_schedule_group) from exc

    def _in_scheduler(self, record: ScheduleRecord) -> bool | None:
        """Whether Scheduler has the schedule (None: it cannot tell now)."""
        try:
            self._scheduler.get_schedule(
                Name=record.schedule_id, GroupName=self._settings.wp_agent_schedule_group
            )
        except Exception as exc:  # noqa: BLE001 - whatever prevents the look-up means "cannot tell"
            if scheduler_failure_code(exc) == "ResourceNotFoundException":
                return False
            logger.warning("could not look the schedule up", extra={"schedule_id": record.schedule_id})
            return None
        return True

    def list(self, owner_id: str) -> ScheduleList:
        """GET /v1/schedules → 200: the caller's schedules, oldest first."""
        now = self._clock()
        records = sorted(self._store.list_for_owner(owner_id), key=lambda r: (r.created_at, r.schedule_id))
        return ScheduleList(schedules=[_view(r, now) for r in records])

    def get(self, owner_id: str, schedule_id: str) -> ScheduleView:
        """GET /v1/schedules/{scheduleId} → 200, or 404 when missing or someone else's."""
        return _view(self._owned(owner_id, schedule_id), self._clock())

    def delete(self, owner_id: str, schedule_id: str) -> None:
        """DELETE /v1/schedules/{scheduleId} → 204, or 404 when missing or someone else's."""
        record = self._owned(owner_id, schedule_id)
        try:
            self._scheduler.delete_schedule(
                Name=schedule_id, GroupName=self._settings.wp_agent_schedule_group
            )
        except Exception as exc:
            # Already gone: an at() schedule deletes itself after running; or an earlier delete
            # removed the schedule but not the registry items.
            if scheduler_failure_code(exc) != "ResourceNotFoundException":
                raise _scheduler_error(exc, self._settings.wp_agent_schedule_group) from exc
        try:
            self._store.delete(record)
        except Exception as exc:
            logger.exception(
                "could not remove a schedule's registry items", extra={"schedule_id": schedule_id}
            )
            raise ApiError(
                ApiErrorCode.SCHEDULE_STORE_UNAVAILABLE,
                "スケジュールは停止しましたが、一覧から削除できませんでした。もう一度削除してください。",
            ) from exc
        logger.info("schedule deleted", extra={"schedule_id": schedule_id, "user_id": owner_id})

    def propose(self, owner_id: str, request: ScheduleProposalRequest) -> ScheduleProposalView:
        """POST /v1/schedules/proposals → 200 (a proposal or a question); creates nothing.

        400 bad time zone, 404 target not owned, 422 no valid schedule after the corrections,
        429 model rate-limited, 502 model failure.
        """
        self._owned_target(owner_id, request.target_id)
        try:
            parse_timezone(request.timezone)
            outcome = propose_schedule(
                self._model, request.text, timezone=request.timezone, now=self._clock()
            )
        except ScheduleExpressionError as exc:
            raise ApiError(ApiErrorCode.INVALID_TIMEZONE, exc.message_ja, fields=[exc.parameter]) from exc
        except ScheduleProposalError as exc:
            raise ApiError(ApiErrorCode.PROPOSAL_FAILED, exc.message_ja) from exc
        except WpAgentError as exc:
            if exc.code is AgentErrorCode.API_RATE_LIMITED:
                raise ApiError(ApiErrorCode.MODEL_RATE_LIMITED, exc.message_ja) from exc
            raise ApiError(ApiErrorCode.MODEL_ERROR, exc.message_ja) from exc
        if isinstance(outcome, ScheduleClarification):
            return ScheduleProposalView(status="NEEDS_CLARIFICATION", question=outcome.question)
        create_request = ScheduleCreateRequest(
            name=outcome.name,
            expression=outcome.expression,
            timezone=outcome.timezone,
            target_id=request.target_id,
            agent_input=AgentInput(message=outcome.instruction),
        )
        return ScheduleProposalView(status="PROPOSED", proposal=outcome, create_request=create_request)

    # -- helpers ------------------------------------------------------------------------------------

    def create_schedule_arguments(
        self, record: ScheduleRecord, schedule: ValidatedSchedule, *, state_machine_arn: str, role_arn: str
    ) -> dict[str, Any]:
        """The exact CreateSchedule request for a record (400 when the run input would be too large)."""
        run_input = ScheduledRunInput(
            schedule_id=record.schedule_id,
            owner_id=record.owner_id,
            target_id=record.target_id,
            agent_input=record.agent_input,
        ).to_json_dict()
        run_input["scheduledTime"] = SCHEDULED_TIME_PLACEHOLDER  # one session per firing
        input_json = json.dumps(run_input, ensure_ascii=False, separators=(",", ":"))
        if len(input_json.encode()) > MAX_TARGET_INPUT_BYTES:
            raise ApiError(
                ApiErrorCode.AGENT_INPUT_TOO_LARGE,
                f"agentInput が大きすぎます（{MAX_TARGET_INPUT_BYTES // 1024}KB まで）。会話履歴を減らしてください。",
                fields=["agentInput"],
            )
        return {
            "Name": record.schedule_id,
            "GroupName": self._settings.wp_agent_schedule_group,
            "Description": f"wp-agent scheduled run: {record.name}"[:512],
            "ScheduleExpression": record.expression,
            "ScheduleExpressionTimezone": record.timezone,
            "FlexibleTimeWindow": {"Mode": "OFF"},
            "State": "ENABLED",
            "ActionAfterCompletion": "DELETE" if isinstance(schedule.parsed, AtExpression) else "NONE",
            "Target": {
                "Arn": state_machine_arn,
                "RoleArn": role_arn,
                "Input": input_json,
                "RetryPolicy": dict(RETRY_POLICY),
            },
            "ClientToken": record.schedule_id,
        }

    def _owned_target(self, owner_id: str, target_id: str) -> Target:
        """The target, when the schedule's creator may use it (an owner or a member: each firing runs
        with their role as the registry says then)."""
        target = self._targets.get(target_id)
        if target is None or target.role_of(owner_id) is None:
            raise ApiError(ApiErrorCode.TARGET_NOT_FOUND)
        return target

    def _owned(self, owner_id: str, schedule_id: str) -> ScheduleRecord:
        record = self._store.get(schedule_id) if field_rules.matches(SCHEDULE_ID, schedule_id) else None
        if record is None or record.owner_id != owner_id:
            raise ApiError(ApiErrorCode.SCHEDULE_NOT_FOUND)
        return record

    def _remove_record_after_failure(self, record: ScheduleRecord) -> None:
        try:
            self._store.delete(record)
        except Exception:
            # The owner will see a schedule that never fires and can delete it; say so loudly.
            logger.exception(
                "could not remove the registry items of a schedule Scheduler did not create",
                extra={"schedule_id": record.schedule_id, "user_id": record.owner_id},
            )


def _validated(expression: str, timezone: str, now: datetime) -> ValidatedSchedule:
    try:
        return validate_schedule(expression, timezone, now=now)
    except ScheduleExpressionError as exc:
        code = (
            ApiErrorCode.INVALID_TIMEZONE
            if exc.parameter == "timezone"
            else ApiErrorCode.INVALID_SCHEDULE_EXPRESSION
        )
        raise ApiError(code, exc.message_ja, fields=[exc.parameter]) from exc


def _same_schedule(stored: ScheduleRecord, requested: ScheduleRecord) -> bool:
    """The same request (its creation time aside): a resend of the one that stored `stored`."""
    return stored.model_dump(exclude={"created_at"}) == requested.model_dump(exclude={"created_at"})


def _default_name(message: str) -> str:
    text = " ".join(message.split())
    return text if len(text) <= _DEFAULT_NAME_CHARS else text[: _DEFAULT_NAME_CHARS - 1] + "…"


def _scheduler_error(exc: Exception, group: str) -> Exception:
    """What the caller is told when Scheduler fails; never the service's own message."""
    code = scheduler_failure_code(exc)
    logger.error("scheduler call failed", extra={"error_code": code})
    if code == "ValidationException":
        return ApiError(
            ApiErrorCode.SCHEDULE_REJECTED,
            fields=["expression", "timezone"],
        )
    if code == "ResourceNotFoundException":
        return ConfigurationError(
            f"スケジュールグループ「{group}」が見つかりません（WP_AGENT_SCHEDULE_GROUP とデプロイを確認してください）。",
            setting="WP_AGENT_SCHEDULE_GROUP",
        )
    return ApiError(
        ApiErrorCode.SCHEDULER_UNAVAILABLE,
    )


def _view(record: ScheduleRecord, now: datetime) -> ScheduleView:
    try:
        parsed = parse_expression(record.expression)
        zone = parse_timezone(record.timezone)
    except ScheduleExpressionError:
        # Stored before a rule was tightened: still listed (and deletable), without run times.
        logger.warning("stored schedule no longer parses", extra={"schedule_id": record.schedule_id})
        runs: list[str] = []
        summary = record.expression
    else:
        created = datetime.fromisoformat(record.created_at.replace("Z", "+00:00"))
        runs = [r.isoformat(timespec="seconds") for r in next_runs(parsed, zone, after=now, anchor=created)]
        summary = summarize(parsed, record.timezone, record.agent_input.message)
    return ScheduleView(
        schedule_id=record.schedule_id,
        name=record.name,
        expression=record.expression,
        timezone=record.timezone,
        target_id=record.target_id,
        agent_input=record.agent_input,
        summary_ja=summary,
        next_runs=runs,
        created_at=record.created_at,
    )
