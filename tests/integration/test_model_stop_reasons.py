"""A reply the API marks `refusal`, or one cut off at `max_tokens`, through the real SDK and the
scripted server: the run ends with a stable code and a Japanese message; nothing half-written runs."""

from __future__ import annotations

from tests.fakes.agent_doubles import RecordingWpCli, make_deps
from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply, reply_text
from wp_agent.agent.model_client import AnthropicModelClient
from wp_agent.agent.ports import NoApprovals
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.stop_reasons import REFUSAL, TRUNCATED_TOOL_CALL, TRUNCATION_NOTE
from wp_agent.config import CliSettings
from wp_agent.errors import AgentErrorCode
from wp_agent.models.agent_io import AgentInput, AgentOutput


def run_against(server: ScriptedAnthropicServer, wp: RecordingWpCli) -> AgentOutput:
    model = AnthropicModelClient(
        CliSettings(
            anthropic_api_key="test-key", anthropic_base_url=server.base_url, anthropic_timeout_seconds=5
        )
    )
    deps = make_deps(model, wp)  # type: ignore[arg-type]  # the real SDK client, not the in-process double
    return AgentRunner(deps, NoApprovals()).run(AgentInput(message="下書きを全部消して"))


def test_a_refusal_ends_the_run_with_a_stable_code(scripted_anthropic: ScriptedAnthropicServer) -> None:
    scripted_anthropic.enqueue(reply([], stop_reason="refusal"))
    wp = RecordingWpCli()
    output = run_against(scripted_anthropic, wp)
    assert not output.success
    assert output.error is not None
    assert output.error.code is AgentErrorCode.API_ERROR
    assert (output.error.details or {})["reason"] == REFUSAL
    assert "拒否" in output.error.message
    assert output.response.strip()  # never an empty answer
    assert wp.commands() == []  # the site's facts were read; nothing of the reply ran
    scripted_anthropic.assert_script_consumed()


def test_a_refusal_after_a_tool_call_runs_nothing_of_that_reply(
    scripted_anthropic: ScriptedAnthropicServer,
) -> None:
    scripted_anthropic.enqueue(
        reply(
            [{"type": "tool_use", "name": "wp_cli", "input": {"command": "post list", "reason": "一覧"}}],
            stop_reason="refusal",
        )
    )
    wp = RecordingWpCli()
    output = run_against(scripted_anthropic, wp)
    assert output.error is not None
    assert (output.error.details or {})["reason"] == REFUSAL
    assert wp.commands() == []  # the site's facts were read; nothing of the reply ran
    assert output.executed_commands == []


def test_a_tool_call_cut_off_at_max_tokens_is_never_run(scripted_anthropic: ScriptedAnthropicServer) -> None:
    # The API gives what it had parsed of the cut-off call: here the command without its last argument.
    scripted_anthropic.enqueue(
        reply(
            [
                {"type": "text", "text": "下書きを削除します。"},
                {"type": "tool_use", "name": "wp_cli", "input": {"command": "post list --post_status=draft"}},
                {"type": "tool_use", "name": "wp_cli", "input": {"command": "post delete"}},
            ],
            stop_reason="max_tokens",
        )
    )
    wp = RecordingWpCli()
    output = run_against(scripted_anthropic, wp)
    assert not output.success
    assert output.error is not None
    assert output.error.code is AgentErrorCode.API_ERROR
    assert (output.error.details or {})["reason"] == TRUNCATED_TOOL_CALL
    assert "途中で切れました" in output.error.message
    assert wp.commands() == []  # the site's facts were read; nothing of the reply ran
    scripted_anthropic.assert_script_consumed()


def test_a_text_answer_cut_off_at_max_tokens_says_so(scripted_anthropic: ScriptedAnthropicServer) -> None:
    scripted_anthropic.enqueue(reply_text("投稿は次のとおりです: 1. 秋の", stop_reason="max_tokens"))
    output = run_against(scripted_anthropic, RecordingWpCli())
    assert output.success
    assert output.response.startswith("投稿は次のとおりです")
    assert output.response.endswith(TRUNCATION_NOTE)
