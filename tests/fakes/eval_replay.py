"""Replay an eval recording (wp_agent.evaluation.recording) through the scripted Anthropic server, so
the real SDK and the real agent see exactly the recorded model replies.

Trials are replayed in the recorded order: a request without any assistant message starts the next
recorded trial (its instruction must be the request's), and each further request of the trial gets
the trial's next reply (also across the requester's answer to a clarifying question, which continues
the same trial). A request the recording has no reply for is answered 500 (not retried), so a
diverging run fails instead of drifting.

Dates: a recorded reply says 「明日9時」 as the recording day's date (`--post_date="2026-11-26 09:00:00"`),
and WordPress compares it with its own clock. Given `today`, ISO dates within a month of the recorded
site date are shifted by the days between the two, so a recording replays alike on any later day.
"""

from __future__ import annotations

import json
import re
import threading
from datetime import date, timedelta
from typing import Any

from tests.fakes.anthropic_server import RecordedRequest, ScriptedAnthropicServer, Step, fault, reply
from wp_agent.evaluation.recording import RecordedTrial, Recording


class RecordingReplay:
    def __init__(self, recording: Recording, today: date | None = None) -> None:
        self._trials = list(recording.trials)
        self._today = today
        self._next = 0
        self._current: RecordedTrial | None = None
        self._cursor = 0
        self._lock = threading.Lock()
        self.divergences: list[str] = []

    def install(self, server: ScriptedAnthropicServer) -> None:
        """Enqueue one step per recorded reply on the server."""
        total = sum(len(t.replies) for t in self._trials)
        server.extend([self.step] * total)

    def step(self, request: RecordedRequest) -> Step:
        messages: list[dict[str, Any]] = request.messages
        with self._lock:
            if not any(m.get("role") == "assistant" for m in messages):
                self._start_trial(_first_text(messages))
            current, turn = self._current, self._cursor
            self._cursor += 1
        if current is None or turn >= len(current.replies):
            where = "no trial" if current is None else f"{current.task_id} #{current.trial}"
            self.divergences.append(f"{where}: no recorded reply {turn + 1}")
            return fault(500, "replay: no recorded reply", should_retry=False)
        recorded = current.replies[turn]
        shift = (self._today - current.site_date) if self._today is not None else timedelta(0)
        content = _shift_dates(recorded.content, current.site_date, shift)
        return reply(content, stop_reason=recorded.stop_reason, usage=recorded.usage, model=recorded.model)

    def _start_trial(self, instruction: str) -> None:
        if self._next >= len(self._trials):
            self._current = None
            return
        self._current = self._trials[self._next]
        self._next += 1
        self._cursor = 0
        if not instruction.startswith(self._current.instruction):
            self.divergences.append(
                f"{self._current.task_id}: replayed for another instruction {instruction[:40]!r}"
            )


_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
SHIFTED_DAYS = 31  # dates this close to the recorded site date are relative ones (「昨日」「来週月曜」)


def _shift_dates(content: list[dict[str, Any]], site_date: date, shift: timedelta) -> list[dict[str, Any]]:
    if not shift:
        return content

    def moved(match: re.Match[str]) -> str:
        try:
            found = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            return match.group(0)
        if abs((found - site_date).days) > SHIFTED_DAYS:
            return match.group(0)  # an absolute date (a seeded post's, a year in a title)
        return (found + shift).isoformat()

    shifted: list[dict[str, Any]] = json.loads(_ISO_DATE.sub(moved, json.dumps(content, ensure_ascii=False)))
    return shifted


def _first_text(messages: list[dict[str, Any]]) -> str:
    """The first user message's text, without the site's facts the agent puts before the instruction."""
    content = messages[0].get("content", "") if messages else ""
    if isinstance(content, str):
        return content
    texts = [str(block.get("text", "")) for block in content if isinstance(block, dict)]
    return "".join(text for text in texts if not text.startswith("<site_facts "))
