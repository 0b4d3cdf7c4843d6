"""How a run stands or ended: one vocabulary for the CLI's `--json` (`runStatus`), the API's session and
run views (`runStatus`) and the events (`runStatus` in Run Completed / Run Failed / Run Cancelled /
Run Undone). camelCase values;
new values are only ever added (a client treats an unknown one as "ended, see errorCode").

    running           planning or running commands
    awaitingApproval  held: a destructive command waits for the requester (CONFIRMATION_REQUIRED)
    completed         ended; everything asked was done
    declined          ended; the requester declined a held command (it did not run), the rest ran
    partialFailure    ended; some operations succeeded and some failed (PARTIAL_FAILURE)
    failed            ended with an error (errorCode says which)
    cancelled         ended on the requester's word (Ctrl-C, the cancel route; errorCode CANCELLED)
    expired           nobody approved in time; nothing held ran (errorCode APPROVAL_EXPIRED)
    undone            ended, and a later undo run put back what it changed

The older fields stay beside it (`status` of the session — `Completed`, `AwaitingApproval`… — and of a
run view — `completed`, `awaiting_approval`…; `success`): deprecated, kept at least until 2027-06-30.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

# Each command of a run (the API's run view, `history --json`; agent/command_outcomes.py says how a
# command's audit records lead to its outcome): the policy's decision, what became of it, who asked.
CommandDecision = Literal["read", "write", "destructive", "blocked"]
CommandOutcome = Literal[
    "succeeded",
    "failed",
    "blocked",
    "awaiting_approval",
    "approved",
    "rejected",
    "expired",
    "unknown",
    "not_run",
]
CommandOrigin = Literal["model", "system"]


class RunStatus(StrEnum):
    RUNNING = "running"
    AWAITING_APPROVAL = "awaitingApproval"
    COMPLETED = "completed"
    DECLINED = "declined"
    PARTIAL_FAILURE = "partialFailure"
    FAILED = "failed"
    CANCELLED = "cancelled"
    EXPIRED = "expired"
    UNDONE = "undone"


def ended_status(error_code: str | None, *, declined: bool) -> RunStatus:
    """An ended run's status from its error code and whether the requester declined a command."""
    by_code = {
        "CANCELLED": RunStatus.CANCELLED,
        "APPROVAL_EXPIRED": RunStatus.EXPIRED,
        "PARTIAL_FAILURE": RunStatus.PARTIAL_FAILURE,
        "CONFIRMATION_REQUIRED": RunStatus.AWAITING_APPROVAL,
    }
    if error_code is not None:
        return by_code.get(error_code, RunStatus.FAILED)
    return RunStatus.DECLINED if declined else RunStatus.COMPLETED
