"""Spec §3.2 limits shared by every Lambda instance, on DynamoDB conditional writes.

- model calls: at most N per minute for the deployment (fixed one-minute windows; a caller over the
  limit waits for the next window, bounded, then gets API_RATE_LIMITED);
- commands: at most N per minute per user (over the limit: a clear Japanese error, nothing runs), each
  command counted once, by the id of its recorded intent: an item `INTENT#<id>` written in the same
  transaction as the count, so taking it again (a retried turn, the SDK resending a write whose answer
  was lost, the approved command after its hold) finds it held and is allowed;
- SSH: at most N concurrent commands per target, as leases `SLOT#<target>/<n>` that expire on their own
  (a crashed instance's lease frees itself once no command it started can still run: the longest
  a Lambda invocation lives, plus the command timeout and kill delay of a command started in its
  last moment, plus a margin. Connect retries and waits inside the invocation cannot stretch that
  bound, so a shorter lease could free a slot still in use and a longer one only blocks longer.)
Every decision is one conditional write, so the limits hold exactly under contention.
"""

from __future__ import annotations

import contextlib
import logging
import random
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from wp_agent.adapters.aws.clients import resource
from wp_agent.clock import now as utc_now
from wp_agent.config import LambdaSettings
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.ssh_timing import last_command_ends_seconds

logger = logging.getLogger(__name__)

WINDOW_SECONDS = 60
MAX_MODEL_WAIT_SECONDS = 75.0
MAX_SLOT_WAIT_SECONDS = 60.0
LEASE_MARGIN_SECONDS = 30.0
# Lambda's maximum timeout: no invocation can hold a slot for longer.
MAX_HOLDER_SECONDS = 900.0
SLOT_POLL_SECONDS = 0.2
# An intent counted when its command was held stays known for the longest approval wait and a day more.
INTENT_KEEP_SECONDS = 8 * 86_400
_TRANSACTION_ATTEMPTS = 3


def _conditional_failed(exc: Exception) -> bool:
    response = getattr(exc, "response", None)
    return (
        isinstance(response, dict)
        and response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"
    )


def _cancellation_reasons(exc: Exception) -> list[str] | None:
    """Why each item of a cancelled transaction failed, in order; None for any other error."""
    response = getattr(exc, "response", None)
    if (
        not isinstance(response, dict)
        or response.get("Error", {}).get("Code") != "TransactionCanceledException"
    ):
        return None
    reasons = [str(r.get("Code", "None")) for r in response.get("CancellationReasons", [])]
    return reasons + ["None"] * (2 - len(reasons))


class DynamoRateLimiter:
    def __init__(
        self,
        table_name: str,
        settings: LambdaSettings,
        *,
        clock: Callable[[], float] = lambda: utc_now().timestamp(),
        sleep: Callable[[float], None] = time.sleep,
        on_utilisation: Callable[[str, float], None] | None = None,
    ) -> None:
        self._table_name = table_name
        self._model_limit = settings.wp_agent_model_calls_per_minute
        self._command_limit = settings.wp_agent_commands_per_user_per_minute
        self._slots = settings.wp_agent_ssh_slots_per_target
        self._lease_seconds = last_command_ends_seconds(settings, MAX_HOLDER_SECONDS) + LEASE_MARGIN_SECONDS
        self._clock = clock
        self._sleep = sleep
        self._on_utilisation = on_utilisation
        self._owner = f"{uuid.uuid4().hex}"

    @property
    def _table(self) -> Any:
        return resource("dynamodb").Table(self._table_name)

    # -- counters -------------------------------------------------------------------------------

    def _take(self, key: str, limit: int, now: float) -> int | None:
        """Count one use in the current window; the new count, or None when the window is full."""
        window = int(now // WINDOW_SECONDS)
        try:
            response = self._table.update_item(
                Key={"pk": key, "sk": f"W#{window}"},
                UpdateExpression="ADD #c :one SET expires_at = :ttl",
                ConditionExpression="attribute_not_exists(#c) OR #c < :limit",
                ExpressionAttributeNames={"#c": "count"},
                ExpressionAttributeValues={":one": 1, ":limit": limit, ":ttl": (window + 2) * WINDOW_SECONDS},
                ReturnValues="UPDATED_NEW",
            )
        except Exception as exc:
            if _conditional_failed(exc):
                return None
            raise
        return int(response["Attributes"]["count"])

    def _report(self, name: str, used: int, limit: int) -> None:
        if self._on_utilisation is not None:
            self._on_utilisation(name, used / limit)

    def before_model_call(self) -> None:
        deadline = self._clock() + MAX_MODEL_WAIT_SECONDS
        while True:
            now = self._clock()
            used = self._take("LIMIT#model", self._model_limit, now)
            if used is not None:
                self._report("model_calls", used, self._model_limit)
                return
            self._report("model_calls", self._model_limit, self._model_limit)
            wait = WINDOW_SECONDS - (now % WINDOW_SECONDS) + random.uniform(0, 1)  # noqa: S311 - jitter only
            if now + wait > deadline:
                raise WpAgentError(
                    AgentErrorCode.API_RATE_LIMITED,
                    f"AIモデルの呼び出し回数の上限（{self._model_limit}回/分）に達しています。しばらくしてから再度お試しください。",
                    details={"limit": "model_calls_per_minute"},
                )
            logger.info(
                "model call limit reached; waiting for the next window",
                extra={"wait_seconds": round(wait, 1)},
            )
            self._sleep(wait)

    def before_command(self, user_id: str, intent_id: str) -> None:
        used = self._take_for_intent(user_id, intent_id, self._clock())
        if used == 0:
            self._report("commands_per_user", self._command_limit, self._command_limit)
            raise WpAgentError(
                AgentErrorCode.COMMAND_BLOCKED,
                f"コマンド実行の上限（1分あたり{self._command_limit}回）に達したため実行していません。1分ほど待ってから再度指示してください。",
                details={"limit": "commands_per_user_per_minute"},
            )
        if used is not None:
            self._report("commands_per_user", used, self._command_limit)

    def _take_for_intent(self, user_id: str, intent_id: str, now: float) -> int | None:
        """Count `intent_id` in the user's window and remember it, in one transaction: the new count,
        None when this intent was already counted, 0 when the window is full."""
        window = int(now // WINDOW_SECONDS)
        table = self._table_name
        for attempt in range(_TRANSACTION_ATTEMPTS):
            try:
                # The resource's client takes Python values, as the Table does.
                self._table.meta.client.transact_write_items(
                    TransactItems=[
                        {
                            "Put": {
                                "TableName": table,
                                "Item": {
                                    "pk": f"INTENT#{intent_id}",
                                    "sk": "I",
                                    "user_id": user_id,
                                    "window": window,
                                    "expires_at": int(now) + INTENT_KEEP_SECONDS,
                                },
                                "ConditionExpression": "attribute_not_exists(pk)",
                            }
                        },
                        {
                            "Update": {
                                "TableName": table,
                                "Key": {"pk": f"LIMIT#user#{user_id}", "sk": f"W#{window}"},
                                "UpdateExpression": "ADD #c :one SET expires_at = :ttl",
                                "ConditionExpression": "attribute_not_exists(#c) OR #c < :limit",
                                "ExpressionAttributeNames": {"#c": "count"},
                                "ExpressionAttributeValues": {
                                    ":one": 1,
                                    ":limit": self._command_limit,
                                    ":ttl": (window + 2) * WINDOW_SECONDS,
                                },
                            }
                        },
                    ]
                )
            except Exception as exc:
                reasons = _cancellation_reasons(exc)
                if reasons is None:
                    raise
                if reasons[0] == "ConditionalCheckFailed":
                    return None  # counted before: this is the same command
                if reasons[1] == "ConditionalCheckFailed":
                    return 0
                if attempt + 1 == _TRANSACTION_ATTEMPTS:  # conflicts with other writers kept winning
                    raise
                self._sleep(random.uniform(0.02, 0.1) * (attempt + 1))  # noqa: S311 - jitter only
                continue
            return self._count_now(user_id, window)
        raise AssertionError("unreachable")  # pragma: no cover

    def _count_now(self, user_id: str, window: int) -> int:
        item = self._table.get_item(Key={"pk": f"LIMIT#user#{user_id}", "sk": f"W#{window}"}).get("Item")
        return int(item["count"]) if item else 1  # read before the write shows (eventual consistency)

    # -- SSH slots ------------------------------------------------------------------------------

    def _try_slot(self, target_id: str, slot: int, lease_id: str, now: float) -> bool:
        """Take the slot when it is free or its lease ran out. The condition also accepts our own
        lease: the SDK retries a put whose answer was lost, and that retry meets our own write."""
        try:
            self._table.put_item(
                Item={
                    "pk": f"SLOTS#{target_id}",
                    "sk": f"S#{slot}",
                    "lease": lease_id,
                    "lease_until": int(now + self._lease_seconds) + 1,
                    "expires_at": int(now + self._lease_seconds) + 3_600,
                },
                ConditionExpression="attribute_not_exists(pk) OR lease_until < :now OR lease = :mine",
                ExpressionAttributeValues={":now": int(now), ":mine": lease_id},
            )
        except Exception as exc:
            if _conditional_failed(exc):
                return False
            # The put may have landed before the error (its retries ran out after a lost answer):
            # give back whatever we may hold, so the slot is not held by nobody until it expires.
            self._release(target_id, slot, lease_id)
            raise
        return True

    def _release(self, target_id: str, slot: int, lease_id: str) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self._table.delete_item(
                Key={"pk": f"SLOTS#{target_id}", "sk": f"S#{slot}"},
                ConditionExpression="lease = :mine",
                ExpressionAttributeValues={":mine": lease_id},
            )
        except (BotoCoreError, ClientError) as exc:
            if _conditional_failed(exc):  # someone took it over after expiry: not ours to delete
                return
            # The command has run by now: its result matters more than the slot, whose lease
            # expires on its own.
            logger.warning(
                "could not release an ssh slot; its lease will expire",
                extra={"target_id": target_id, "slot": slot, "error_type": type(exc).__name__},
            )

    @contextlib.contextmanager
    def command_slot(self, target_id: str) -> Iterator[None]:
        lease_id = f"{self._owner}:{uuid.uuid4().hex}"
        deadline = self._clock() + MAX_SLOT_WAIT_SECONDS
        start = random.randrange(self._slots)  # noqa: S311 - spreads contention, not security
        while True:
            now = self._clock()
            taken = next(
                (
                    s
                    for s in ((start + i) % self._slots for i in range(self._slots))
                    if self._try_slot(target_id, s, lease_id, now)
                ),
                None,
            )
            if taken is not None:
                break
            if now >= deadline:
                raise WpAgentError(
                    AgentErrorCode.COMMAND_TIMEOUT,
                    f"サーバーへの同時接続数の上限（{self._slots}）に達していたため、コマンドを実行できませんでした。",
                    details={"limit": "ssh_slots_per_target"},
                )
            self._sleep(SLOT_POLL_SECONDS)
        try:
            yield
        finally:
            self._release(target_id, taken, lease_id)
