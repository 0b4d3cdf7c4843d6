"""Stable error codes (spec §4.2) and the one exception type that carries them to the boundary."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class AgentErrorCode(StrEnum):
    SSH_CONNECTION_FAILED = "SSH_CONNECTION_FAILED"
    COMMAND_TIMEOUT = "COMMAND_TIMEOUT"
    COMMAND_BLOCKED = "COMMAND_BLOCKED"
    API_ERROR = "API_ERROR"
    API_RATE_LIMITED = "API_RATE_LIMITED"
    MAX_ITERATIONS_EXCEEDED = "MAX_ITERATIONS_EXCEEDED"
    PARTIAL_FAILURE = "PARTIAL_FAILURE"
    CONFIRMATION_REQUIRED = "CONFIRMATION_REQUIRED"
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


class ConfigurationError(Exception):
    """The deployment is misconfigured (missing or invalid setting); fail closed with a clear message."""

    code = "CONFIGURATION_ERROR"

    def __init__(self, message_ja: str, *, setting: str | None = None) -> None:
        self.message_ja = message_ja
        self.setting = setting
        super().__init__(f"{self.code}: {message_ja}")
