"""The one error type of the sandbox: a stable cause and a Japanese message for people."""

from __future__ import annotations

from wp_agent.errors import AgentErrorCode, WpAgentError


class SandboxError(WpAgentError):
    """The sandbox WordPress could not be prepared (missing packages, MariaDB would not start, …).

    A WpAgentError, so a run that hits it ends with a clear message instead of a traceback.
    """

    def __init__(self, cause: str, message_ja: str, *, log: str = "") -> None:
        super().__init__(AgentErrorCode.UNKNOWN_ERROR, message_ja, details={"cause": f"sandbox_{cause}"})
        self.cause = cause
        self.log = log  # the tail of a server or command log, for operators (never shown to the model)
