"""The ModelClient port and its Anthropic SDK adapter (Anthropic API or Amazon Bedrock).

Retries (NFR-2.2: 3 retries on 408/429/5xx/529, timeouts and network errors; no retry on other
4xx, 409 included) are our own small loop around `messages.create`, on the SDK's public API only:
the SDK client is built with its documented `max_retries=0` and `timeout`, and `RetryPolicy` reads
the public `APIStatusError.status_code`/`.response.headers`. The wait is base·2^n (1 s, 2 s, 4 s by
default), or what the server's retry-after asks, up to 60 s.
"""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from wp_agent import clock
from wp_agent.agent.messages import ToolUseBlock, text_of, tool_uses
from wp_agent.config import ModelProvider, ModelSettings
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


_RETRIED_STATUSES = frozenset({408, 429})


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before calling the model again."""

    base_delay: float = 1.0
    max_retries: int = API_MAX_RETRIES

    def should_retry(self, exc: Exception) -> bool:
        import anthropic

        if isinstance(exc, anthropic.APIConnectionError):  # includes APITimeoutError
            return True
        if not isinstance(exc, anthropic.APIStatusError):
            return False
        advice = exc.response.headers.get("x-should-retry")  # the API's own hint, when it gives one
        if advice in ("true", "false"):
            return advice == "true"
        return exc.status_code in _RETRIED_STATUSES or exc.status_code >= 500

    def delay(self, attempt: int, exc: Exception | None = None) -> float:
        """Seconds before retry number `attempt` (0-based)."""
        retry_after = _retry_after_seconds(exc)
        if retry_after is not None and retry_after > 0:
            return min(retry_after, MAX_HONOURED_RETRY_AFTER_SECONDS)
        return float(self.base_delay * (2**attempt))


def _retry_after_seconds(exc: Exception | None) -> float | None:
    import anthropic

    if not isinstance(exc, anthropic.APIStatusError):
        return None
    headers = exc.response.headers
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
        if "retry-after" in headers:
            return float(headers["retry-after"])
    except ValueError:
        pass
    when = headers.get("retry-after")
    if when:
        try:
            return (email.utils.parsedate_to_datetime(when) - clock.now()).total_seconds()
        except (TypeError, ValueError):
            return None
    return None


def retry_policy(settings: ModelSettings) -> RetryPolicy:
    return RetryPolicy(base_delay=settings.wp_agent_api_retry_base_seconds)


SecretReader = Callable[[str], str]


def build_sdk_client(
    settings: ModelSettings, *, read_secret: SecretReader | None = None
) -> anthropic.Anthropic | anthropic.AnthropicBedrock:
    """The SDK client; the key is ANTHROPIC_API_KEY, or read with `read_secret` from the secret
    named by ANTHROPIC_API_KEY_SECRET_ARN (the Lambda wiring passes a Secrets Manager reader)."""
    import anthropic

    timeout = settings.anthropic_timeout_seconds
    if settings.wp_agent_model_provider is ModelProvider.BEDROCK:
        return anthropic.AnthropicBedrock(max_retries=0, timeout=timeout)
    api_key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else None
    if not api_key and settings.anthropic_api_key_secret_arn and read_secret is not None:
        api_key = read_secret(settings.anthropic_api_key_secret_arn).strip()
    if not api_key:
        raise ConfigurationError(
            "ANTHROPIC_API_KEY が設定されていません。`export ANTHROPIC_API_KEY=sk-ant-...` を設定してください"
            "（Amazon Bedrock を使う場合は WP_AGENT_MODEL_PROVIDER=bedrock と AWS の認証情報・リージョンを設定）。",
            setting="ANTHROPIC_API_KEY",
        )
    # Retries are RetryPolicy's (AnthropicModelClient.create), not the SDK's.
    return anthropic.Anthropic(
        api_key=api_key, base_url=settings.anthropic_base_url, max_retries=0, timeout=timeout
    )


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


def _is_botocore(exc: Exception) -> bool:
    """botocore's own errors (credentials, profiles, signing), told by module: the agent never imports AWS."""
    return any(kind.__module__.startswith("botocore") for kind in type(exc).__mro__)


def bedrock_signing_error(exc: Exception) -> WpAgentError:
    return WpAgentError(
        AgentErrorCode.API_ERROR,
        f"Amazon Bedrock への要求に AWS の認証情報で署名できませんでした（{type(exc).__name__}）。AWS_PROFILE と "
        "~/.aws の設定、SSO なら aws sso login、または AWS_ACCESS_KEY_ID と AWS_SECRET_ACCESS_KEY の組を確認してください。",
        details={"reason": "BEDROCK_SIGNING_FAILED", "type": type(exc).__name__},
    )


@dataclass(frozen=True)
class RetryNotice:
    """A model call that failed and is tried again: retry `attempt` of `of`, after `wait_seconds`
    (`status`: the API's HTTP status; None when no answer came)."""

    attempt: int
    of: int
    wait_seconds: float
    status: int | None


class AnthropicModelClient:
    """ModelClient on the anthropic SDK; the SDK client is built lazily and reused (warm Lambdas).
    `on_retry` hears of each retry before its wait (a person at the CLI is told, not left waiting)."""

    def __init__(
        self,
        settings: ModelSettings,
        client: anthropic.Anthropic | anthropic.AnthropicBedrock | None = None,
        *,
        read_secret: SecretReader | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
    ) -> None:
        self._settings = settings
        self._client = client
        self._read_secret = read_secret
        self._on_retry = on_retry
        self.retry = retry_policy(settings)

    @property
    def model(self) -> str:
        return self._settings.anthropic_model

    def _sdk(self) -> anthropic.Anthropic | anthropic.AnthropicBedrock:
        if self._client is None:
            self._client = build_sdk_client(self._settings, read_secret=self._read_secret)
        return self._client

    def create(
        self, *, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]]
    ) -> ModelReply:
        import anthropic

        started = time.perf_counter()
        attempt = 0
        while True:
            try:
                message = self._sdk().messages.create(
                    model=self.model,
                    max_tokens=self._settings.anthropic_max_tokens,
                    system=system,  # type: ignore[arg-type]
                    tools=tools,  # type: ignore[arg-type]
                    messages=messages,  # type: ignore[arg-type]
                )
                break
            except anthropic.APIError as exc:
                if attempt < self.retry.max_retries and self.retry.should_retry(exc):
                    wait = self.retry.delay(attempt, exc)
                    status = getattr(exc, "status_code", None)
                    logger.debug(
                        "model call retried",
                        extra={"attempt": attempt + 1, "status": status, "wait_ms": int(wait * 1000)},
                    )
                    if self._on_retry is not None:
                        self._on_retry(RetryNotice(attempt + 1, self.retry.max_retries, wait, status))
                    time.sleep(wait)
                    attempt += 1
                    continue
                error = translate_sdk_error(exc, self.model)
                logger.warning("model call failed", extra={"error_code": error.code.value, **error.details})
                raise error from exc
            except Exception as exc:
                if self._settings.wp_agent_model_provider is not ModelProvider.BEDROCK or not _is_botocore(
                    exc
                ):
                    raise
                # Bedrock requests are signed with the AWS credentials before they are sent: a profile
                # that is gone, an expired SSO token or half a key pair fails here, not at the API.
                error = bedrock_signing_error(exc)
                logger.warning("model call not signed", extra={"error_type": type(exc).__name__})
                raise error from None
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
