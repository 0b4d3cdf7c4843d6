"""A bounded load pass on the serverless stack (API → state machine in moto → real handlers in their
own containers → real sshd + WP-CLI): 4 sessions from 2 users over 2 targets, every approval clicked
twice at once, one user at the rate limit. The 40-session pass is bench/load_serverless.py."""

from __future__ import annotations

import os

import pytest

from tests.fakes.serverless import ServerlessStack
from tests.fakes.serverless_load import run_load

pytestmark = pytest.mark.sshd


@pytest.mark.now_relative("fills the rate limiter's windows from this minute on")
def test_a_small_load_runs_every_approved_command_once_and_audits_everything_once(
    serverless: ServerlessStack,
) -> None:
    sessions = int(os.environ.get("WP_AGENT_LOAD_SESSIONS", "4"))
    users = int(os.environ.get("WP_AGENT_LOAD_USERS", "2"))
    targets = int(os.environ.get("WP_AGENT_LOAD_TARGETS", "2"))
    figures = run_load(serverless, sessions=sessions, users=users, targets=targets)
    print("\n" + "\n".join(figures.lines()))  # the bench script reads these lines
    assert figures.problems == []
    assert figures.answers_5xx == 0
    assert figures.refused_runs == sessions // users
    assert figures.completed == sessions - figures.refused_runs
    assert figures.commands_run_twice == 0
    assert figures.executed_records_wrong == 0
    assert figures.decision_records_wrong == 0
    assert figures.refusals_not_audited_once == 0
    assert figures.leases_left == 0
