"""moto-backed AWS for tests: the stack's tables (same keys as the CDK storage construct)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.dynamodb.responses import DynamoHandler

from wp_agent.adapters.aws.clients import reset_clients
from wp_agent.local_api import stack as local_stack

REGION = "ap-northeast-1"
TABLES = {table.value: name for table, name in local_stack.TABLE_NAMES.items()}


def create_tables() -> None:
    """The stack's tables with their keys and indexes, as the local stack creates them."""
    local_stack.create_tables(REGION)


def table_env() -> dict[str, str]:
    return {
        "WP_AGENT_SESSIONS_TABLE": TABLES["sessions"],
        "WP_AGENT_AUDIT_TABLE": TABLES["audit"],
        "WP_AGENT_REGISTRY_TABLE": TABLES["registry"],
        "WP_AGENT_RATE_LIMIT_TABLE": TABLES["rate_limits"],
        "WP_AGENT_IDEMPOTENCY_TABLE": TABLES["idempotency"],
    }


def deployment_env() -> dict[str, str]:
    """What the stack gives the functions (config.py's per-function classes require it at start): the
    tables, and stand-ins a test replaces when it uses them (a state machine it creates, a model key)."""
    return {
        **table_env(),
        "WP_AGENT_EVENT_BUS": "wp-agent",
        "WP_AGENT_STATE_MACHINE_ARN": f"arn:aws:states:{REGION}:123456789012:stateMachine:wp-agent-stand-in",
        "WP_AGENT_SCHEDULER_ROLE_ARN": "arn:aws:iam::123456789012:role/wp-agent-scheduler",
        "ANTHROPIC_API_KEY_SECRET_ARN": f"arn:aws:secretsmanager:{REGION}:123456789012:secret:wp-agent/anthropic-stand-in",
    }


_dynamo_lock = threading.RLock()
_original_call_action = DynamoHandler.call_action


def _atomic_call_action(self: DynamoHandler) -> Any:
    # Real DynamoDB applies each request (incl. its condition) atomically; moto does not lock.
    with _dynamo_lock:
        return _original_call_action(self)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto for every AWS call in the test, with the stack's tables and region set."""
    for key, value in {
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        **deployment_env(),
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(DynamoHandler, "call_action", _atomic_call_action)
    reset_clients()
    with mock_aws():
        create_tables()
        yield
    reset_clients()


class LostAnswer:
    """A table whose `method` writes land but whose answer is lost: after the real write, `then`
    plays what the SDK does next (its retry of the same request meets the write; or its retries
    run out and it raises). Other methods pass through."""

    def __init__(
        self,
        table: Any,
        method: str,
        then: Callable[[Any, dict[str, Any]], Any],
        *,
        times: int = 1_000_000,
    ) -> None:
        self._table = table
        self._method = method
        self._then = then
        self.remaining = times

    def __getattr__(self, name: str) -> Any:
        real = getattr(self._table, name)
        if name != self._method or self.remaining <= 0:
            return real

        def lands_then_loses_its_answer(**kwargs: Any) -> Any:
            self.remaining -= 1
            real(**kwargs)
            return self._then(real, kwargs)

        return lands_then_loses_its_answer


def sdk_retry_meets_the_write(write: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """The SDK retried the request after the lost answer; the retry meets the write it repeats."""
    return write(**kwargs)


def sdk_retries_run_out(write: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    raise ConnectionError("read timeout on every retry")


def throttling(operation: str = "PutItem") -> Exception:
    """What botocore raises when DynamoDB throttles a request and the SDK's retries run out."""
    from botocore.exceptions import ClientError

    return ClientError(
        {
            "Error": {
                "Code": "ThrottlingException",
                "Message": "Rate of requests exceeds the allowed throughput.",
            }
        },
        operation,
    )


class AuditFaults:
    """Makes DynamoAuditLog.append fail for records of the chosen types (and, with `when`, only those
    it accepts), `times` times each (raising `error`), after which they are written; records every
    attempted type."""

    def __init__(
        self,
        monkeypatch: pytest.MonkeyPatch,
        types: set[str],
        *,
        times: int,
        error: BaseException,
        when: Callable[[Any], bool] = lambda event: True,
    ) -> None:
        from wp_agent.adapters.aws.audit_log import DynamoAuditLog

        self.attempts: list[str] = []
        real = DynamoAuditLog.append
        left = dict.fromkeys(types, times)

        def append(log: DynamoAuditLog, event: Any) -> None:
            self.attempts.append(event.type.value)
            if left.get(event.type.value, 0) > 0 and when(event):
                left[event.type.value] -= 1
                raise error
            real(log, event)

        monkeypatch.setattr(DynamoAuditLog, "append", append)


class TaskTokensAsOnAws:
    """Step Functions' SendTaskSuccess as AWS answers it, where moto differs (moto takes a token
    again while its execution runs): a task token is answered once; a token already answered is
    refused with `closed_error` (AWS says TaskTimedOut, "Provided task does not exist anymore";
    InvalidToken is seen too), a token never issued with InvalidToken. Stands in for the client."""

    def __init__(self, *tokens: str, closed_error: str = "TaskTimedOut") -> None:
        self.exceptions = boto3.client("stepfunctions", region_name=REGION).exceptions  # the modelled ones
        self._open = set(tokens)
        self._used: set[str] = set()
        self._closed_error = closed_error
        self.accepted: list[tuple[str, dict[str, Any]]] = []
        self.refused: list[tuple[str, str]] = []
        # Runs once, inside the next call: before Step Functions takes the token, or just after it
        # took it (the caller still waits for the answer).
        self.before_it_lands: Callable[[], None] | None = None
        self.after_it_landed: Callable[[], None] | None = None

    def send_task_success(self, *, taskToken: str, output: str) -> dict[str, Any]:  # noqa: N803 - boto3's names
        before, self.before_it_lands = self.before_it_lands, None
        if before is not None:
            before()
        if taskToken not in self._open:
            code = self._closed_error if taskToken in self._used else "InvalidToken"
            self.refused.append((taskToken, code))
            error_class = getattr(self.exceptions, code)
            message = "Invalid token" if code == "InvalidToken" else "Provided task does not exist anymore"
            raise error_class({"Error": {"Code": code, "Message": message}}, "SendTaskSuccess")
        self._open.discard(taskToken)
        self._used.add(taskToken)
        self.accepted.append((taskToken, json.loads(output)))
        after, self.after_it_landed = self.after_it_landed, None
        if after is not None:
            after()
        return {}
