"""A read whose SSH connection died under it runs once more on a new connection (executors/port.run_read);
a write never does (it may have started). Checked for the decision reads, the undo captures and the
model's own reads through a turn."""

from __future__ import annotations

import pytest

from tests.fakes.agent_doubles import RecordingWpCli, ScriptedModel, make_deps, text_reply, tool_reply
from wp_agent.agent.ports import NoApprovals, NoRateLimits
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.site_commands import SiteCommands
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.port import CommandResult, run_read
from wp_agent.models.agent_io import AgentInput, AgentOutput
from wp_agent.models.target import Role
from wp_agent.policy import CommandPolicy
from wp_agent.policy.site_scope import SiteScope
from wp_agent.telemetry import NoTelemetry
from wp_agent.undo.entities import CaptureError
from wp_agent.undo.recorder import site_reader

SCOPE = SiteScope(None, False, Role.ADMIN)


def died(cause: str) -> WpAgentError:
    return WpAgentError(AgentErrorCode.SSH_CONNECTION_FAILED, "切れました", details={"cause": cause})


def failing_first(error: WpAgentError, *, times: int = 1, only: list[str] | None = None) -> RecordingWpCli:
    """A WpCli whose first `times` commands (of argv `only`, when given) fail with `error`."""
    left = [times]

    def answer(argv: list[str]) -> CommandResult | WpAgentError:
        if left[0] > 0 and (only is None or argv == only):
            left[0] -= 1
            return error
        return CommandResult("answer\n", "", 0, 3)

    return RecordingWpCli(handler=answer)


@pytest.mark.parametrize("cause", ["exec_failed", "connection_lost"])
def test_a_read_whose_connection_died_runs_once_more(cause: str) -> None:
    wp = failing_first(died(cause))
    assert run_read(wp, ["option", "get", "blogname"]).stdout == "answer\n"
    assert len(wp.calls) == 2


@pytest.mark.parametrize("cause", ["unreachable", "auth_failed", "host_key_mismatch", "channel_refused"])
def test_a_read_that_cannot_reach_the_host_is_not_run_again(cause: str) -> None:
    wp = failing_first(died(cause))
    with pytest.raises(WpAgentError):
        run_read(wp, ["option", "get", "blogname"])
    assert len(wp.calls) == 1


def test_a_read_runs_once_more_only_once() -> None:
    wp = failing_first(died("connection_lost"), times=2)
    with pytest.raises(WpAgentError) as raised:
        run_read(wp, ["option", "get", "blogname"])
    assert raised.value.details["cause"] == "connection_lost"
    assert len(wp.calls) == 2


def test_a_timeout_is_not_run_again() -> None:
    wp = failing_first(WpAgentError(AgentErrorCode.COMMAND_TIMEOUT, "時間切れ"))
    with pytest.raises(WpAgentError):
        run_read(wp, ["post", "list"])
    assert len(wp.calls) == 1


def test_a_decision_read_and_an_undo_capture_read_run_once_more() -> None:
    wp = failing_first(died("exec_failed"))
    site = SiteCommands(wp, NoRateLimits(), CommandPolicy(), NoTelemetry())
    stdout, audited = site.read(SCOPE, "t1", "確認", ["post", "get", "5", "--field=post_type"])
    assert stdout == "answer\n"
    assert audited is not None
    assert audited["success"] is True
    wp = failing_first(died("connection_lost"))
    read = site_reader(SCOPE, "t1", CommandPolicy(), wp, NoRateLimits())
    assert read(["option", "get", "blogname"]).stdout == "answer\n"
    wp = failing_first(died("connection_lost"), times=2)
    with pytest.raises(CaptureError):
        site_reader(SCOPE, "t1", CommandPolicy(), wp, NoRateLimits())(["option", "get", "blogname"])


def test_a_write_is_never_run_again() -> None:
    wp = failing_first(died("exec_failed"))
    site = SiteCommands(wp, NoRateLimits(), CommandPolicy(), NoTelemetry())
    with pytest.raises(WpAgentError):
        site.run("t1", ["post", "update", "5", "--post_title=x"])
    assert len(wp.calls) == 1


def _model_run(command: str) -> tuple[AgentOutput, RecordingWpCli]:
    argv = command.split()
    wp = failing_first(died("connection_lost"), only=argv)
    model = ScriptedModel([tool_reply(command), text_reply("終わりました")])
    output = AgentRunner(make_deps(model, wp), NoApprovals()).run(AgentInput(message="テスト"))
    return output, wp


def test_the_models_read_whose_connection_died_completes_the_run() -> None:
    output, wp = _model_run("post list --format=ids")
    assert output.success
    assert wp.calls.count(["post", "list", "--format=ids"]) == 2


def test_the_models_write_whose_connection_died_is_not_run_again_and_fails_the_run() -> None:
    output, wp = _model_run("post create --post_title=x --post_status=draft")
    assert not output.success
    assert output.error is not None
    assert output.error.code is AgentErrorCode.SSH_CONNECTION_FAILED
    assert wp.calls.count(["post", "create", "--post_title=x", "--post_status=draft"]) == 1
