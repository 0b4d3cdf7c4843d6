"""AnthropicModelClient through the real SDK against the scripted server: caching, retries, errors."""

from __future__ import annotations

import itertools
from typing import Any

import anthropic
import pytest
from anthropic.resources.messages.messages import DEPRECATED_MODELS
from anthropic.types.model import Model

from tests.fakes.anthropic_server import (
    ScriptedAnthropicServer,
    auth_error,
    delay,
    drop,
    fault,
    overloaded,
    rate_limited,
    reply_text,
    reply_tool_use,
    server_error,
)
from wp_agent.agent.model_client import AnthropicModelClient, build_sdk_client
from wp_agent.agent.prompt import cached_system_blocks, cached_tools
from wp_agent.config import DEFAULT_MODEL, CliSettings
from wp_agent.errors import AgentErrorCode, ConfigurationError, WpAgentError

MESSAGES = [{"role": "user", "content": "投稿一覧を見せて"}]


def client_for(server: ScriptedAnthropicServer, **overrides: Any) -> AnthropicModelClient:
    values: dict[str, Any] = {
        "anthropic_api_key": "test-key",
        "anthropic_base_url": server.base_url,
        "wp_agent_api_retry_base_seconds": 0.01,
        "anthropic_timeout_seconds": 5.0,
    }
    values.update(overrides)
    return AnthropicModelClient(CliSettings(**values))


def call(client: AnthropicModelClient) -> Any:
    return client.create(system=cached_system_blocks(), tools=cached_tools(), messages=MESSAGES)


def test_tool_use_reply_and_the_cached_prefix(scripted_anthropic: ScriptedAnthropicServer) -> None:
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "post list --format=json", "reason": "一覧"})])
    )
    reply = call(client_for(scripted_anthropic))
    assert reply.stop_reason == "tool_use"
    assert reply.tool_uses[0].input == {"command": "post list --format=json", "reason": "一覧"}
    body = scripted_anthropic.last_request.json
    assert body["model"] == DEFAULT_MODEL
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][0]["name"] == "wp_cli"
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][0]["input_schema"]["required"] == ["command", "reason"]
    headers = scripted_anthropic.last_request.headers
    assert "test-key" in headers.get("x-api-key", "") + headers.get("authorization", "")


def test_model_comes_from_settings(scripted_anthropic: ScriptedAnthropicServer) -> None:
    scripted_anthropic.enqueue(reply_text("ok"))
    call(client_for(scripted_anthropic, anthropic_model="claude-opus-5-5"))
    assert scripted_anthropic.last_request.json["model"] == "claude-opus-5-5"


def test_default_model_is_current_and_not_deprecated() -> None:
    assert DEFAULT_MODEL not in DEPRECATED_MODELS
    assert DEFAULT_MODEL in Model.__args__[0].__args__  # type: ignore[attr-defined]


@pytest.mark.parametrize("make_fault", [server_error, overloaded, lambda: fault(503), lambda: drop("reset")])
def test_transient_failures_are_retried_three_times_then_succeed(
    scripted_anthropic: ScriptedAnthropicServer, make_fault: Any
) -> None:
    scripted_anthropic.enqueue(make_fault(), make_fault(), make_fault(), reply_text("復旧しました"))
    assert call(client_for(scripted_anthropic)).text == "復旧しました"
    assert scripted_anthropic.request_count == 4


@pytest.mark.parametrize(
    ("make_fault", "code"),
    [
        (server_error, AgentErrorCode.API_ERROR),
        (overloaded, AgentErrorCode.API_ERROR),
        (rate_limited, AgentErrorCode.API_RATE_LIMITED),
    ],
)
def test_exhausted_retries_give_the_spec_code(
    scripted_anthropic: ScriptedAnthropicServer, make_fault: Any, code: AgentErrorCode
) -> None:
    scripted_anthropic.enqueue(*(make_fault() for _ in range(4)))
    with pytest.raises(WpAgentError) as excinfo:
        call(client_for(scripted_anthropic))
    assert excinfo.value.code is code
    assert scripted_anthropic.request_count == 4  # 1 + 3 retries


def test_backoff_waits_base_times_two_to_the_n(scripted_anthropic: ScriptedAnthropicServer) -> None:
    scripted_anthropic.enqueue(*(fault(500) for _ in range(3)), reply_text("ok"))
    call(client_for(scripted_anthropic, wp_agent_api_retry_base_seconds=0.1))
    times = [r.received_at for r in scripted_anthropic.requests]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    for gap, expected in zip(gaps, [0.1, 0.2, 0.4], strict=True):
        assert expected <= gap < expected + 0.25


def test_default_schedule_is_one_two_four_seconds() -> None:
    client = AnthropicModelClient(CliSettings(anthropic_api_key="k"))
    assert [client.retry.delay(attempt) for attempt in range(client.retry.max_retries)] == [1.0, 2.0, 4.0]


def test_the_sdk_itself_never_retries() -> None:
    # our RetryPolicy is the only retry loop (the SDK's documented max_retries=0)
    assert build_sdk_client(CliSettings(anthropic_api_key="k")).max_retries == 0


def test_retry_after_is_honoured(scripted_anthropic: ScriptedAnthropicServer) -> None:
    scripted_anthropic.enqueue(rate_limited(retry_after_ms=None, retry_after=0.5), reply_text("ok"))
    call(client_for(scripted_anthropic))
    first, second = scripted_anthropic.requests
    assert second.received_at - first.received_at >= 0.5


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 413, 422])
def test_other_4xx_are_not_retried(scripted_anthropic: ScriptedAnthropicServer, status: int) -> None:
    scripted_anthropic.enqueue(fault(status), reply_text("never"))
    with pytest.raises(WpAgentError) as excinfo:
        call(client_for(scripted_anthropic))
    assert excinfo.value.code is AgentErrorCode.API_ERROR
    assert scripted_anthropic.request_count == 1


def test_invalid_key_gives_an_actionable_japanese_message(
    scripted_anthropic: ScriptedAnthropicServer,
) -> None:
    scripted_anthropic.enqueue(auth_error())
    with pytest.raises(WpAgentError) as excinfo:
        call(client_for(scripted_anthropic))
    assert "ANTHROPIC_API_KEY" in excinfo.value.message_ja
    assert "test-key" not in str(excinfo.value.details)


def test_timeouts_are_retried_then_reported(scripted_anthropic: ScriptedAnthropicServer) -> None:
    scripted_anthropic.enqueue(*(delay(2.0) for _ in range(4)))
    with pytest.raises(WpAgentError) as excinfo:
        call(client_for(scripted_anthropic, anthropic_timeout_seconds=0.3))
    assert excinfo.value.code is AgentErrorCode.API_ERROR
    assert scripted_anthropic.request_count == 4


def test_missing_key_is_a_configuration_error_naming_the_variable() -> None:
    with pytest.raises(ConfigurationError) as excinfo:
        build_sdk_client(CliSettings(anthropic_api_key=None))
    assert "ANTHROPIC_API_KEY" in excinfo.value.message_ja


def test_bedrock_client_uses_the_same_retry_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "ap-northeast-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    settings = CliSettings(wp_agent_model_provider="bedrock")
    client = build_sdk_client(settings)
    assert isinstance(client, anthropic.AnthropicBedrock)
    assert client.max_retries == 0
    model = AnthropicModelClient(settings, client)
    assert (model.retry.max_retries, model.retry.delay(0)) == (3, 1.0)
