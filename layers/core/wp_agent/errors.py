"""Stable error codes (spec §4.2) and the one exception type that carries them to the boundary."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar


class AgentErrorCode(StrEnum):
    SSH_CONNECTION_FAILED = "SSH_CONNECTION_FAILED"
    COMMAND_TIMEOUT = "COMMAND_TIMEOUT"
    COMMAND_BLOCKED = "COMMAND_BLOCKED"
    API_ERROR = "API_ERROR"
    API_RATE_LIMITED = "API_RATE_LIMITED"
    MAX_ITERATIONS_EXCEEDED = "MAX_ITERATIONS_EXCEEDED"
    PARTIAL_FAILURE = "PARTIAL_FAILURE"
    CONFIRMATION_REQUIRED = "CONFIRMATION_REQUIRED"
    CANCELLED = "CANCELLED"
    APPROVAL_EXPIRED = "APPROVAL_EXPIRED"
    UNKNOWN_ERROR = "UNKNOWN_ERROR"


# Default user-facing (Japanese) message per code; callers may pass a more specific one.
DEFAULT_MESSAGES_JA: dict[AgentErrorCode, str] = {
    AgentErrorCode.SSH_CONNECTION_FAILED: "WordPressサーバーにSSH接続できませんでした。ホスト・ポート・鍵・ホスト鍵の設定を確認してください。",
    AgentErrorCode.COMMAND_TIMEOUT: "コマンドが制限時間内に終わらなかったため中断しました。",
    AgentErrorCode.COMMAND_BLOCKED: "セキュリティ上の理由でこのコマンドは実行できません",
    AgentErrorCode.API_ERROR: "AIモデルの呼び出しに失敗しました。しばらくしてから再度お試しください。",
    AgentErrorCode.API_RATE_LIMITED: "AIモデルの呼び出し回数の上限に達しました。少し時間をおいてから再度お試しください。",
    AgentErrorCode.MAX_ITERATIONS_EXCEEDED: "処理回数の上限に達したため、途中までの結果を返します。",
    AgentErrorCode.PARTIAL_FAILURE: "一部の操作が失敗しました",
    AgentErrorCode.CONFIRMATION_REQUIRED: "取り消せない操作が含まれるため、実行前に確認が必要です。",
    AgentErrorCode.CANCELLED: "中断の指示により終了しました。",
    AgentErrorCode.APPROVAL_EXPIRED: "承認の期限が切れたため、確認が必要な操作は実行されませんでした。",
    AgentErrorCode.UNKNOWN_ERROR: "予期しないエラーが発生しました。",
}


class WpAgentError(Exception):
    """An error with a stable code and a Japanese message that is safe to show to people."""

    def __init__(
        self,
        code: AgentErrorCode,
        message_ja: str | None = None,
        *,
        details: dict[str, Any] | None = None,
    ) -> None:
        self.code = code
        self.message_ja = message_ja or DEFAULT_MESSAGES_JA[code]
        self.details = details or {}
        super().__init__(f"{code.value}: {self.message_ja}")


class RunStoppedError(WpAgentError):
    """A run ended for a reason the spec's codes do not tell apart (it reports UNKNOWN_ERROR): each
    situation is its own type, and its `reason` (also in `details`, for clients) names it."""

    code_for_reason: ClassVar[AgentErrorCode] = AgentErrorCode.UNKNOWN_ERROR
    reason: ClassVar[str]
    default_message_ja: ClassVar[str]

    def __init__(self, message_ja: str | None = None, **details: Any) -> None:
        super().__init__(
            self.code_for_reason,
            message_ja or self.default_message_ja,
            details={"reason": self.reason, **details},
        )


class SessionBusyError(RunStoppedError):
    reason = "session_busy"
    default_message_ja = "このセッションでは別の処理が実行中です。"


class RunCancelledError(RunStoppedError):
    code_for_reason = AgentErrorCode.CANCELLED
    reason = "cancelled"
    default_message_ja = "利用者の指示により処理を中止しました。"


class NamedSituationError(RunStoppedError):
    """A family of situations with one message; `reason` is the situation, chosen by the caller from a
    fixed set of names."""

    def __init__(self, reason: str) -> None:
        self.reason = reason  # type: ignore[misc]  # the instance's own situation
        super().__init__()


class RunInfrastructureError(NamedSituationError):
    """Infrastructure ended the run (the workflow failed to start or ended, the target is gone)."""

    reason = "infrastructure"
    default_message_ja = "処理中にシステムエラーが発生したため中断しました。時間をおいて再度お試しください。"


class SiteLookupIncompleteError(RunStoppedError):
    reason = "site_lookup_incomplete"
    default_message_ja = "サイトの確認を完了できませんでした。もう一度お試しください。"


class SiteNotFoundError(RunStoppedError):
    reason = "site_not_found"
    default_message_ja = (
        "マルチサイトのサイトが見つかりません。site list で存在するサイトを確認してください。"
    )


class OwnerRemovedError(RunStoppedError):
    code_for_reason = AgentErrorCode.COMMAND_BLOCKED
    reason = "not_owner"
    default_message_ja = "このサイトを操作する権限がなくなったため、処理を中止しました。"


class StaleSessionError(RunStoppedError):
    """Another writer changed the session since it was loaded (e.g. it was cancelled); raised by any
    SessionStore whose save lost the race."""

    reason = "stale_session"
    default_message_ja = "セッションが他の処理によって更新されました。"

    def __init__(self, session_id: str) -> None:
        super().__init__(sessionId=session_id)


class SessionDataMissingError(RunStoppedError):
    reason = "session_data_missing"
    default_message_ja = "セッションのデータの一部が見つかりません（保存期間を過ぎた可能性があります）。新しいセッションで指示してください。"

    def __init__(self, session_id: str, name: str) -> None:
        super().__init__(sessionId=session_id, part=name)


class SessionReadThrottledError(RunStoppedError):
    reason = "session_read_throttled"
    default_message_ja = "セッションの読み込みが混み合っています。時間をおいて再度お試しください。"


class ModelRefusalError(RunStoppedError):
    """The model's reply was marked `refusal`: nothing of it runs."""

    code_for_reason = AgentErrorCode.API_ERROR
    reason = "model_refusal"
    default_message_ja = (
        "AIモデルが安全上の理由でこの依頼への回答を拒否しました。コマンドは実行していません。"
        "指示の内容を見直して、もう一度お試しください。"
    )


class ModelOutputTruncatedError(RunStoppedError):
    """The reply hit max_tokens while writing a tool call (its input may be half-written): nothing runs."""

    code_for_reason = AgentErrorCode.API_ERROR
    reason = "model_output_truncated"
    default_message_ja = (
        "AIの応答が長さの上限に達し、コマンドの指定が途中で切れました。途中までのコマンドは実行していません。"
        "指示を小さく分けるか、ANTHROPIC_MAX_TOKENS を大きくしてお試しください。"
    )


class InternalStateError(NamedSituationError):
    """A front end met a state its own code should never reach (e.g. an MCP call without a request)."""

    reason = "internal_state"
    default_message_ja = "予期しないエラーが発生しました。"


class ArticleTooLargeError(ValueError):
    """The article does not compress enough to be stored as one publish job (nothing was stored)."""


class ConfigurationError(Exception):
    """The deployment is misconfigured (missing or invalid setting); fail closed with a clear message."""

    code = "CONFIGURATION_ERROR"

    def __init__(self, message_ja: str, *, setting: str | None = None) -> None:
        self.message_ja = message_ja
        self.setting = setting
        super().__init__(f"{self.code}: {message_ja}")
