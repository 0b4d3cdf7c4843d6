"""`Idempotency-Key` for POST routes, on Powertools Idempotency with the DynamoDB persistence layer.

The same key with the same body returns the first response; with a different body it is refused.
Errors are not stored, so a failed request can be retried with the same key.
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
