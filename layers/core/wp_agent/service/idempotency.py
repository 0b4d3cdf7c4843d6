"""`Idempotency-Key` for POST routes, on Powertools Idempotency with the DynamoDB persistence layer.

The same key with the same body returns the first response; with a different body it is refused.
Errors are not stored, so a failed request can be retried with the same key.

The stored response alone cannot make a request exactly-once: an attempt that dies after creating
something and before its response is stored leaves an in-progress record, which expires when the
function's time is up (Powertools takes the Lambda's remaining time), and then the resend runs
again. So a route that creates something names it after the caller and the key (`keyed_id`) and
makes every write conditional on that name: the resend finds what the first attempt created and
answers with it. The same holds when the in-progress record expires while the first attempt is still
alive (a function running past its configured timeout, clocks that disagree): both attempts write
the same conditional items under the same name and give the same answer; exactly one exists.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from wp_agent.models import field_rules
from wp_agent.service.api_errors import ApiError, ApiErrorCode


class IdempotentRequests:
    def __init__(self, table_name: str | None, *, expires_after_seconds: int = 3_600) -> None:
        self._table_name = table_name
        self._expires = expires_after_seconds
        self._decorated: Callable[..., dict[str, Any]] | None = None
        self.lambda_context: Any = None

    def _handler(self) -> Callable[..., dict[str, Any]]:
        if self._decorated is None:
            from aws_lambda_powertools.utilities.idempotency import (
                DynamoDBPersistenceLayer,
                IdempotencyConfig,
                idempotent_function,
            )

            if not self._table_name:
                raise ApiError(
                    ApiErrorCode.CONFIGURATION_ERROR, "サーバーの設定に問題があります（冪等性テーブル）。"
                )
            config = IdempotencyConfig(
                event_key_jmespath="scope",
                payload_validation_jmespath="body",
                expires_after_seconds=self._expires,
            )
            store = DynamoDBPersistenceLayer(table_name=self._table_name)

            @idempotent_function(data_keyword_argument="request", persistence_store=store, config=config)  # type: ignore[untyped-decorator]
            def run(request: dict[str, Any], call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
                return call()

            self._decorated = run
            self._config = config
        if self.lambda_context is not None:
            self._config.register_lambda_context(self.lambda_context)
        return self._decorated

    def call(
        self, key: str | None, scope: dict[str, str], body: str, compute: Callable[[], dict[str, Any]]
    ) -> dict[str, Any]:
        """`compute` returns a JSON-able response ({"status", "body"}); run once per key."""
        if key is None:
            return compute()
        if not field_rules.matches(field_rules.IDEMPOTENCY_KEY, key):
            raise ApiError(
                ApiErrorCode.INVALID_IDEMPOTENCY_KEY,
                fields=["Idempotency-Key"],
            )
        from aws_lambda_powertools.utilities.idempotency.exceptions import (
            IdempotencyAlreadyInProgressError,
            IdempotencyValidationError,
        )

        request = {"scope": scope | {"key": key}, "body": hashlib.sha256(body.encode()).hexdigest()}
        try:
            return self._handler()(request=request, call=compute)
        except IdempotencyValidationError as exc:
            raise ApiError(ApiErrorCode.IDEMPOTENCY_KEY_REUSED) from exc
        except IdempotencyAlreadyInProgressError as exc:
            raise ApiError(
                ApiErrorCode.REQUEST_IN_PROGRESS,
            ) from exc


def keyed_id(prefix: str, user_id: str, key: str) -> str:
    """The id of what a caller's request with this Idempotency-Key creates (`<prefix>_` + 20 hex)."""
    digest = hashlib.sha256("\0".join((prefix, user_id, key)).encode("utf-8")).hexdigest()
    return f"{prefix}_{digest[:20]}"
