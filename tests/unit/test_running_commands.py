"""What an interrupt does to the commands this process runs (executors/running.py): every running one is
asked to end, one that does not confirm its end is named, and one started after the interrupt is ended
at once."""

from __future__ import annotations

import pytest

from wp_agent.executors import running


class FakeCommand:
    def __init__(self, label: str, *, confirms: bool) -> None:
        self.label = label
        self.confirms = confirms
        self.ends = 0
        self.asked_to_confirm = False

    def end(self) -> None:
        self.ends += 1

    def ended(self, seconds: float) -> bool:
        self.asked_to_confirm = True
        return self.confirms


@pytest.fixture(autouse=True)
def fresh_interrupts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(running, "_stopping", False)


def test_every_running_command_is_ended_and_an_unconfirmed_end_is_named() -> None:
    quiet, stubborn, finished = (
        FakeCommand("post list", confirms=True),
        FakeCommand("export", confirms=False),
        FakeCommand("option get", confirms=True),
    )
    with running.tracked(finished):
        pass
    with running.tracked(quiet), running.tracked(stubborn):
        ended = running.end_running_commands(confirm_seconds=0)
    assert (quiet.ends, stubborn.ends, finished.ends) == (1, 1, 0)
    assert ended == running.EndedCommands(ended=2, unconfirmed=("export",))


def test_a_command_started_after_the_interrupt_is_ended_at_once() -> None:
    assert running.end_running_commands(confirm_seconds=0).ended == 0
    late = FakeCommand("post list", confirms=False)
    with running.tracked(late):
        assert late.ends == 1
        assert late.asked_to_confirm  # a remote one not confirmed is let go (not waited for)
