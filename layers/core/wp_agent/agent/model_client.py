"""The ModelClient port and its Anthropic SDK adapter (Anthropic API or Amazon Bedrock).

Retries use the SDK's own machinery (NFR-2.2: 3 retries on 5xx/529/429/timeouts/network errors),
with two adjustments made in a small subclass: the backoff is base·2^n (1 s, 2 s, 4 s by default)
instead of the SDK's 0.5 s start, and 409 is not retried (spec: no retry on other 4xx).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

from wp_agent.agent.messages import ToolUseBlock, text_of, tool_uses
from wp_agent.config import ModelProvider, Settings
from wp_agent.errors import AgentErrorCode, ConfigurationError, WpAgentError

if TYPE_CHECKING:
    import anthropic

logger = logging.getLogger(__name__)

API_MAX_RETRIES = 3
# A server asking us to wait longer than this is treated as "not now": the turn fails cleanly
# instead of sleeping through the Lambda's time budget.
MAX_HONOURED_RETRY_AFTER_SECONDS = 60.0


@dataclass(frozen=True)
class ModelReply:
    content: list[dict[str, Any]]
    stop_reason: str | None
    model: str
    usage: dict[str, int] = field(default_factory=dict)
    duration_ms: int = 0

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return tool_uses(self.content)

    @property
    def text(self) -> str:
        return text_of(self.content)


class ModelClient(Protocol):
    """Sends one Messages API request; raises WpAgentError(API_ERROR | API_RATE_LIMITED) on failure."""

    def create(
        self, *, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]]
    ) -> ModelReply: ...


def _backoff_client_class(base: type[Any], base_delay: float) -> type[Any]:
    """Subclass the SDK client so its retry loop waits base·2^n and never retries 409."""

    class BackoffClient(base):  # type: ignore[misc]
        def _calculate_retry_timeout(
            self, remaining_retries: int, options: Any, response_headers: Any = None
        ) -> float:
            retry_after = self._parse_retry_after_header(response_headers)
            if retry_after is not None and retry_after > 0:
                return float(min(retry_after, MAX_HONOURED_RETRY_AFTER_SECONDS))
            attempt = options.get_max_retries(self.max_retries) - remaining_retries
            return float(base_delay * (2**attempt))

        def _should_retry(self, response: Any) -> bool:
            if response.status_code == 409:
                return False
            return bool(super()._should_retry(response))

    return BackoffClient


def build_sdk_client(settings: Settings) -> anthropic.Anthropic | anthropic.AnthropicBedrock:
    import anthropic

    timeout = settings.anthropic_timeout_seconds
    if settings.wp_agent_model_provider is ModelProvider.BEDROCK:
        bedrock_cls = _backoff_client_class(
            anthropic.AnthropicBedrock, settings.wp_agent_api_retry_base_seconds
        )
        return cast("anthropic.AnthropicBedrock", bedrock_cls(max_retries=API_MAX_RETRIES, timeout=timeout))
    api_key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else None
    if not api_key and settings.anthropic_api_key_secret_arn:
        api_key = _api_key_from_secret(settings.anthropic_api_key_secret_arn)
    if not api_key:
        raise ConfigurationError(
            "ANTHROPIC_API_KEY が設定されていません。`export ANTHROPIC_API_KEY=sk-ant-...` を設定してください"
            "（Amazon Bedrock を使う場合は WP_AGENT_MODEL_PROVIDER=bedrock と AWS の認証情報・リージョンを設定）。",
            setting="ANTHROPIC_API_KEY",
        )
    client_cls = _backoff_client_class(anthropic.Anthropic, settings.wp_agent_api_retry_base_seconds)
    client = client_cls(
        api_key=api_key, base_url=settings.anthropic_base_url, max_retries=API_MAX_RETRIES, timeout=timeout
    )
    return cast("anthropic.Anthropic", client)


def _api_key_from_secret(secret_arn: str) -> str:
    from aws_lambda_powertools.utilities import parameters

    value = parameters.get_secret(secret_arn, max_age=300)
    return str(value).strip()


_AUTH_HINT = (
    "APIキーが無効か、権限がありません。ANTHROPIC_API_KEY（または Bedrock の認証情報）を確認してください。"
)


def translate_sdk_error(exc: Exception, model: str) -> WpAgentError:
    """Map SDK exceptions to the spec's codes with an actionable Japanese message (no secrets, no bodies)."""
    import anthropic

    status = getattr(exc, "status_code", None)
    details: dict[str, Any] = {"status": status, "type": type(exc).__name__}
    request_id = getattr(exc, "request_id", None)
    if request_id:
        details["requestId"] = request_id
    if isinstance(exc, anthropic.RateLimitError):
        return WpAgentError(
            AgentErrorCode.API_RATE_LIMITED,
            "AIモデルの利用上限（レート制限）に達しました。3回再試行しましたが解消しませんでした。1分ほど待ってから再度お試しください。",
            details=details,
        )
    if isinstance(exc, anthropic.AuthenticationError | anthropic.PermissionDeniedError):
        return WpAgentError(AgentErrorCode.API_ERROR, _AUTH_HINT, details=details)
    if isinstance(exc, anthropic.NotFoundError):
        return WpAgentError(
            AgentErrorCode.API_ERROR,
            f"モデル「{model}」が見つかりません。ANTHROPIC_MODEL の値を確認してください。",
            details=details,
        )
    if isinstance(exc, anthropic.ContentTooLargeError):
        return WpAgentError(
            AgentErrorCode.API_ERROR,
            "会話が長すぎてAIモデルに送れません。新しいセッションで指示してください。",
            details=details,
        )
    if isinstance(exc, anthropic.APITimeoutError | anthropic.APIConnectionError):
        return WpAgentError(
            AgentErrorCode.API_ERROR,
            "AIモデルに接続できませんでした（タイムアウトまたはネットワークエラー、3回再試行済み）。ネットワークと ANTHROPIC_BASE_URL を確認してください。",
            details=details,
        )
    if isinstance(exc, anthropic.APIStatusError) and status is not None and status >= 500:
        return WpAgentError(
            AgentErrorCode.API_ERROR,
            "AIモデルのサービスが一時的に利用できません（3回再試行済み）。しばらくしてから再度お試しください。",
            details=details,
        )
    if isinstance(exc, anthropic.APIStatusError):
        return WpAgentError(
            AgentErrorCode.API_ERROR,
            f"AIモデルへのリクエストが受け付けられませんでした（HTTP {status}）。設定を確認してください。",
            details=details,
        )
    return WpAgentError(AgentErrorCode.API_ERROR, details=details)


class AnthropicModelClient:
    """ModelClient on the anthropic SDK; the SDK client is built lazily and reused (warm Lambdas)."""

    def __init__(
        self, settings: Settings, client: anthropic.Anthropic | anthropic.AnthropicBedrock | None = None
    ) -> None:
        self._settings = settings
        self._client = client

    @property
    def model(self) -> str:
        return self._settings.anthropic_model

    def _sdk(self) -> anthropic.Anthropic | anthropic.AnthropicBedrock:
        if self._client is None:
            self._client = build_sdk_client(self._settings)
        return self._client

    def create(
        self, *, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]]
    ) -> ModelReply:
        import anthropic

        started = time.perf_counter()
        try:
            message = self._sdk().messages.create(
                model=self.model,
                max_tokens=self._settings.anthropic_max_tokens,
                system=system,  # type: ignore[arg-type]
                tools=tools,  # type: ignore[arg-type]
                messages=messages,  # type: ignore[arg-type]
            )
        except anthropic.APIError as exc:
            error = translate_sdk_error(exc, self.model)
            logger.warning("model call failed", extra={"error_code": error.code.value, **error.details})
            raise error from exc
        usage = message.usage
        return ModelReply(
            content=[block.model_dump(mode="json", exclude_none=True) for block in message.content],
            stop_reason=message.stop_reason,
            model=message.model,
            usage={
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_creation_input_tokens": usage.cache_creation_input_tokens or 0,
                "cache_read_input_tokens": usage.cache_read_input_tokens or 0,
            },
            duration_ms=int((time.perf_counter() - started) * 1000),
        )
