"""Process exit codes of `wp-agent` (documented in the README)."""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1  # the run failed (AgentOutput.error set), or an unexpected error
    USAGE = 2  # bad command-line arguments (argparse)
    AWAITING_APPROVAL = 3  # CONFIRMATION_REQUIRED: a destructive command waits for approval
    BLOCKED = 4  # `check --exit-code`: the command would be blocked
    CONFIGURATION = 5  # missing or invalid configuration (e.g. no ANTHROPIC_API_KEY)
    PARTIAL_FAILURE = 6  # some operations succeeded and some failed
    DECLINED = 7  # the run ended, but the requester declined some destructive commands (not run)
    INTERRUPTED = 130  # Ctrl-C: running commands ended, the run recorded as cancelled (128 + SIGINT)
