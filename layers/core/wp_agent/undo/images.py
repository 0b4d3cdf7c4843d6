"""The current state of things as images (entities.py): all their reads made together
(shared_reads.py), each output masked like any command output, then parsed by kind. A thing whose
reads failed or held a secret gets its CaptureError instead of an image; the others get theirs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wp_agent.executors.port import CommandResult
from wp_agent.masking import mask_command_output
from wp_agent.models.undo import EntityRef
from wp_agent.undo.entities import KINDS, CaptureError, Read, scoped
from wp_agent.undo.shared_reads import Answer, read_all


def images(refs: Sequence[EntityRef], read: Read, *, workers: int = 1) -> list[Any]:
    """For each entity its image (None: it does not exist) or the CaptureError that prevented it."""
    plans = [[scoped(argv, ref) for argv in KINDS[ref.kind].reads(ref.key, ref.parts)] for ref in refs]
    flat = [argv for argv_list in plans for argv in argv_list]
    if not flat:
        return [None for _ in refs]
    answers = read_all(flat, read, workers=workers)
    found, at = [], 0
    for ref, argv_list in zip(refs, plans, strict=True):
        found.append(_image(ref, answers[at : at + len(argv_list)]))
        at += len(argv_list)
    return found


def _image(ref: EntityRef, answers: Sequence[Answer]) -> Any:
    kind = KINDS[ref.kind]
    failed = next((a for a in answers if isinstance(a, CaptureError)), None)
    if failed is not None:
        return failed
    masked = [_masked(a) for a in answers if isinstance(a, CommandResult)]
    if any(secret for _, secret in masked):
        return CaptureError(f"{kind.label(ref.key)}に秘密情報が含まれるため記録しません")
    try:
        return kind.parse(ref.key, ref.parts, [result for result, _ in masked])
    except CaptureError as exc:
        return exc


def _masked(result: CommandResult) -> tuple[CommandResult, bool]:
    """The output masked like any command output; True when masking changed something."""
    masked = mask_command_output(result.stdout)
    if masked == result.stdout:
        return result, False
    return CommandResult(masked, result.stderr, result.exit_code, result.duration_ms, result.truncated), True
