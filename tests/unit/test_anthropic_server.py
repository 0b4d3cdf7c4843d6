"""The scripted Anthropic server, driven by the real anthropic SDK (2.12, httpx2) over loopback."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import anthropic
import pytest
from anthropic._models import FinalRequestOptions
from anthropic.types import TextBlock, ToolUseBlock

from tests.fakes.anthropic_server import (
    EXHAUSTED_MESSAGE,
    RecordedRequest,
    ScriptedAnthropicServer,
    Step,
    delay,
    drop,
    fault,
    load_script,
    overloaded,
    rate_limited,
    reply_text,
    reply_tool_use,
    server_error,
    tool_result_text,
    tool_results_text,
    usage,
)

pytest_plugins = ["tests.fakes.anthropic_fixtures"]
pytestmark = pytest.mark.timeout(15)

MODEL = "claude-sonnet-5-5"
USER: list[Any] = [{"role": "user", "content": "投稿の一覧を見せて"}]
WP_CLI_TOOL: dict[str, Any] = {
    "name": "wp_cli",
    "description": "Run one WP-CLI command",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "reason": {"type": "string"}},
        "required": ["command", "reason"],
    },
    "cache_control": {"type": "ephemeral"},
}
SYSTEM: list[dict[str, Any]] = [
    {"type": "text", "text": "You operate WordPress via WP-CLI.", "cache_control": {"type": "ephemeral"}}
]


def client_for(
    server: ScriptedAnthropicServer, *, max_retries: int = 0, timeout: float = 3.0
) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key="test-key", base_url=server.base_url, max_retries=max_retries, timeout=timeout
    )


def create(client: anthropic.Anthropic, **kw: Any) -> anthropic.types.Message:
    params: dict[str, Any] = {"model": MODEL, "max_tokens": 256, "messages": USER, **kw}
    return cast(anthropic.types.Message, client.messages.create(**params))


@pytest.fixture
def server() -> Iterator[ScriptedAnthropicServer]:
    with ScriptedAnthropicServer() as srv:
        yield srv


# ---------------------------------------------------------------------------------------------
# Replies
# ---------------------------------------------------------------------------------------------


def test_text_reply_is_parsed_with_usage_and_cache_fields(server: ScriptedAnthropicServer) -> None:
    server.enqueue(
        reply_text(
            "投稿は3件です。",
            usage=usage(120, 12, cache_creation_input_tokens=30, cache_read_input_tokens=900),
        )
    )
    with client_for(server) as client:
        message = create(client)

    assert isinstance(message.content[0], TextBlock)
    assert message.content[0].text == "投稿は3件です。"
    assert message.stop_reason == "end_turn"
    assert message.model == MODEL
    assert message.id.startswith("msg_")
    assert message.type == "message"
    assert message.role == "assistant"
    assert message.usage.input_tokens == 120
    assert message.usage.output_tokens == 12
    assert message.usage.cache_creation_input_tokens == 30
    assert message.usage.cache_read_input_tokens == 900
    server.assert_script_consumed()


def test_max_tokens_stop_reason_and_estimated_usage(server: ScriptedAnthropicServer) -> None:
    server.enqueue(reply_text("途中で", stop_reason="max_tokens", model="claude-override"))
    with client_for(server) as client:
        message = create(client)
    assert message.stop_reason == "max_tokens"
    assert message.model == "claude-override"
    assert message.usage.input_tokens > 0
    assert message.usage.output_tokens > 0
    assert message.usage.cache_read_input_tokens == 0


def test_tool_use_reply_is_parsed(server: ScriptedAnthropicServer) -> None:
    server.enqueue(
        reply_tool_use(
            [
                ("wp_cli", {"command": "post list --format=json", "reason": "一覧を取得"}),
                ("wp_cli", {"command": "option get blogname", "reason": "サイト名"}, "toolu_fixed"),
            ],
            text="確認します。",
        )
    )
    with client_for(server) as client:
        message = create(client, tools=[WP_CLI_TOOL])

    assert message.stop_reason == "tool_use"
    text, first, second = message.content
    assert isinstance(text, TextBlock)
    assert text.text == "確認します。"
    assert isinstance(first, ToolUseBlock)
    assert first.type == "tool_use"
    assert first.name == "wp_cli"
    assert first.input == {"command": "post list --format=json", "reason": "一覧を取得"}
    assert first.id.startswith("toolu_")
    assert isinstance(second, ToolUseBlock)
    assert second.id == "toolu_fixed"


def test_generated_ids_are_unique_when_a_step_repeats(server: ScriptedAnthropicServer) -> None:
    step = reply_tool_use([("wp_cli", {"command": "post list", "reason": "r"})])
    server.enqueue(step, step)
    with client_for(server) as client:
        ids = [create(client).content[0] for _ in range(2)]
    assert all(isinstance(b, ToolUseBlock) for b in ids)
    assert len({b.id for b in ids if isinstance(b, ToolUseBlock)}) == 2


def test_request_body_and_headers_are_recorded(server: ScriptedAnthropicServer) -> None:
    server.enqueue(reply_text("ok"), reply_text("ok"))
    before = time.monotonic()
    with client_for(server) as client:
        create(client, system=SYSTEM, tools=[WP_CLI_TOOL], tool_choice={"type": "auto"})
        create(client)

    first, second = server.requests
    assert server.request_count == 2
    assert server.last_request is second
    assert before <= first.received_at <= second.received_at <= time.monotonic()
    assert first.method == "POST"
    assert first.path == "/v1/messages"
    body = first.json
    assert body["model"] == MODEL
    assert body["max_tokens"] == 256
    assert body["messages"] == USER
    assert body["system"] == SYSTEM
    assert body["tools"] == [WP_CLI_TOOL]
    assert body["tools"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["tool_choice"] == {"type": "auto"}
    assert "stream" not in body
    headers = first.headers
    assert headers["anthropic-version"]
    # SDK 2.12 sends api_key as a bearer token, not x-api-key
    assert headers["authorization"] == "Bearer test-key"
    assert headers["x-stainless-retry-count"] == "0"
    assert first.retry_count == 0
    assert headers["content-type"] == "application/json"
    assert (first.status, first.outcome) == (200, "reply")


def test_callable_step_decides_from_last_tool_result(server: ScriptedAnthropicServer) -> None:
    seen: list[RecordedRequest] = []

    def decide(request: RecordedRequest) -> Step:
        seen.append(request)
        posts = json.loads(tool_results_text(request))
        return reply_text(f"投稿は{len(posts)}件です。")

    server.enqueue(
        reply_tool_use([("wp_cli", {"command": "post list --format=json", "reason": "一覧"})]), decide
    )
    with client_for(server) as client:
        first = create(client, tools=[WP_CLI_TOOL])
        call = first.content[0]
        assert isinstance(call, ToolUseBlock)
        messages: list[Any] = [
            *USER,
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call.id,
                        "content": [{"type": "text", "text": '[{"ID":1},{"ID":2}]'}],
                    }
                ],
            },
        ]
        second = create(client, tools=[WP_CLI_TOOL], messages=messages)

    assert isinstance(second.content[0], TextBlock)
    assert second.content[0].text == "投稿は2件です。"
    results = server.tool_results_in()
    assert [r["tool_use_id"] for r in results] == [call.id]
    assert tool_result_text(results[0]) == '[{"ID":1},{"ID":2}]'
    assert seen == [server.last_request]
    server.assert_script_consumed()


def test_streaming_reply_builds_the_same_message(server: ScriptedAnthropicServer) -> None:
    server.enqueue(
        reply_text("ストリーム", usage=usage(5, 3)),
        reply_tool_use([("wp_cli", {"command": "post list --format=json", "reason": "一覧"})]),
    )
    with client_for(server) as client:
        with client.messages.stream(model=MODEL, max_tokens=64, messages=USER) as stream:
            text = stream.get_final_message()
        tools: list[Any] = [WP_CLI_TOOL]
        with client.messages.stream(model=MODEL, max_tokens=64, messages=USER, tools=tools) as st:
            tool = st.get_final_message()
    assert isinstance(text.content[0], TextBlock)
    assert text.content[0].text == "ストリーム"
    assert text.usage.output_tokens == 3
    assert tool.stop_reason == "tool_use"
    assert isinstance(tool.content[0], ToolUseBlock)
    assert tool.content[0].input == {"command": "post list --format=json", "reason": "一覧"}
    assert server.requests[0].json["stream"] is True


# ---------------------------------------------------------------------------------------------
# Faults and the SDK's retry policy
# ---------------------------------------------------------------------------------------------


def test_401_raises_authentication_error_without_retry(server: ScriptedAnthropicServer) -> None:
    server.enqueue(fault(401, "invalid x-api-key"))
    with client_for(server, max_retries=3) as client, pytest.raises(anthropic.AuthenticationError) as exc:
        create(client)
    assert server.request_count == 1
    assert exc.value.status_code == 401
    assert exc.value.type == "authentication_error"
    assert exc.value.api_message == "invalid x-api-key"
    assert exc.value.request_id is not None
    assert exc.value.request_id.startswith("req_")
    assert exc.value.body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
        "request_id": exc.value.request_id,
    }


@pytest.mark.parametrize(
    ("status", "error_class", "error_type"),
    [
        (400, anthropic.BadRequestError, "invalid_request_error"),
        (403, anthropic.PermissionDeniedError, "permission_error"),
        (404, anthropic.NotFoundError, "not_found_error"),
        (413, anthropic.ContentTooLargeError, "request_too_large"),
    ],
)
def test_non_retryable_4xx(
    server: ScriptedAnthropicServer, status: int, error_class: type[anthropic.APIStatusError], error_type: str
) -> None:
    server.enqueue(fault(status))
    with client_for(server, max_retries=2) as client, pytest.raises(error_class) as exc:
        create(client)
    assert exc.value.status_code == status
    assert exc.value.type == error_type
    assert server.request_count == 1


def test_429_retry_after_zero_falls_back_to_backoff_then_rate_limit_error(
    server: ScriptedAnthropicServer,
) -> None:
    server.enqueue(fault(429, retry_after=0), fault(429, retry_after=0))
    with client_for(server, max_retries=1) as client, pytest.raises(anthropic.RateLimitError) as exc:
        create(client)
    first, second = server.requests
    assert server.request_count == 2
    assert [r.retry_count for r in server.requests] == [0, 1]
    # retry-after: 0 is not > 0, so the SDK uses its own first backoff: 0.5 s x jitter [0.75, 1]
    assert 0.3 <= second.received_at - first.received_at < 1.0
    assert exc.value.type == "rate_limit_error"
    assert exc.value.response.headers["retry-after"] == "0"


def test_429_retry_after_ms_is_honoured_and_retries_counted(
    server: ScriptedAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.enqueue(*[rate_limited(retry_after_ms=1)] * 4)
    waits: list[float] = []
    computed = anthropic._base_client.BaseClient._calculate_retry_timeout

    def recorded(self: Any, *args: Any, **kwargs: Any) -> float:
        waits.append(computed(self, *args, **kwargs))
        return waits[-1]

    monkeypatch.setattr(anthropic._base_client.BaseClient, "_calculate_retry_timeout", recorded)
    with client_for(server, max_retries=3) as client, pytest.raises(anthropic.RateLimitError):
        create(client)
    assert waits == [0.001, 0.001, 0.001]  # the server's retry-after-ms, not the SDK's backoff
    assert server.request_count == 4
    assert [r.retry_count for r in server.requests] == [0, 1, 2, 3]
    server.assert_script_consumed()


def test_529_overloaded_is_retried_then_raised(server: ScriptedAnthropicServer) -> None:
    server.enqueue(overloaded(), overloaded(), overloaded())
    with client_for(server, max_retries=2) as client, pytest.raises(anthropic.OverloadedError) as exc:
        create(client)
    assert server.request_count == 3
    assert exc.value.status_code == 529
    assert exc.value.type == "overloaded_error"
    assert isinstance(exc.value, anthropic.InternalServerError)


def test_500_is_retried_and_recovers(server: ScriptedAnthropicServer) -> None:
    server.enqueue(server_error(), server_error(), reply_text("復旧"))
    with client_for(server, max_retries=2) as client:
        message = create(client)
    assert isinstance(message.content[0], TextBlock)
    assert message.content[0].text == "復旧"
    assert [r.status for r in server.requests] == [500, 500, 200]


def test_500_exhausts_retries_into_internal_server_error(server: ScriptedAnthropicServer) -> None:
    server.enqueue(server_error(), server_error())
    with client_for(server, max_retries=1) as client, pytest.raises(anthropic.InternalServerError) as exc:
        create(client)
    assert type(exc.value) is anthropic.InternalServerError
    assert exc.value.type == "api_error"
    assert server.request_count == 2


def test_503_is_service_unavailable(server: ScriptedAnthropicServer) -> None:
    server.enqueue(fault(503, retry_after_ms=1), fault(503, retry_after_ms=1))
    with client_for(server, max_retries=1) as client, pytest.raises(anthropic.ServiceUnavailableError):
        create(client)
    assert server.request_count == 2


@pytest.mark.parametrize(
    ("status", "error_class"), [(408, anthropic.RequestTimeoutError), (409, anthropic.ConflictError)]
)
def test_408_and_409_are_retried(
    server: ScriptedAnthropicServer, status: int, error_class: type[anthropic.APIStatusError]
) -> None:
    server.enqueue(fault(status, retry_after_ms=1), fault(status, retry_after_ms=1))
    with client_for(server, max_retries=1) as client, pytest.raises(error_class):
        create(client)
    assert server.request_count == 2


def test_x_should_retry_header_overrides_status_policy(server: ScriptedAnthropicServer) -> None:
    server.enqueue(
        fault(500, should_retry=False),
        fault(400, should_retry=True, retry_after_ms=1),
        reply_text("retried a 400"),
    )
    with client_for(server, max_retries=2) as client:
        with pytest.raises(anthropic.InternalServerError):
            create(client)
        assert server.request_count == 1
        message = create(client)
    assert isinstance(message.content[0], TextBlock)
    assert server.request_count == 3


def test_error_code_selects_a_specific_class(server: ScriptedAnthropicServer) -> None:
    server.enqueue(fault(429, error_code="ramp_limit_exceeded", should_retry=False))
    with client_for(server) as client, pytest.raises(anthropic.RateLimitError) as exc:
        create(client)
    assert type(exc.value).__name__ == "RampLimitExceededError"
    assert exc.value.error_code == "ramp_limit_exceeded"


def test_per_request_max_retries_with_options(server: ScriptedAnthropicServer) -> None:
    server.enqueue(*[rate_limited()] * 3)
    with client_for(server, max_retries=5) as client, pytest.raises(anthropic.RateLimitError):
        create(client.with_options(max_retries=2))
    assert server.request_count == 3


def test_subclass_can_change_the_backoff_base(server: ScriptedAnthropicServer) -> None:
    """The hook for a 1 s / 2 s / 4 s schedule: override `_calculate_retry_timeout`; shown with 0.05 s."""

    class SteadyBackoff(anthropic.Anthropic):
        base = 0.05

        def _calculate_retry_timeout(
            self, remaining_retries: int, options: FinalRequestOptions, response_headers: Any = None
        ) -> float:
            retry_after = self._parse_retry_after_header(response_headers)
            if retry_after is not None and 0 < retry_after <= 60:
                return retry_after
            attempt = options.get_max_retries(self.max_retries) - remaining_retries
            return float(self.base * 2**attempt)

    server.enqueue(*[fault(529)] * 3, reply_text("ok"))
    with SteadyBackoff(api_key="test-key", base_url=server.base_url, max_retries=3) as client:
        create(client)
    times = [r.received_at for r in server.requests]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(gaps) == 3
    for gap, expected in zip(gaps, [0.05, 0.1, 0.2], strict=True):
        assert expected * 0.9 <= gap < expected + 0.25


# ---------------------------------------------------------------------------------------------
# Network failures
# ---------------------------------------------------------------------------------------------


def test_delay_longer_than_timeout_raises_api_timeout_error(server: ScriptedAnthropicServer) -> None:
    server.enqueue(delay(2.0))
    with client_for(server, timeout=0.2) as client, pytest.raises(anthropic.APITimeoutError):
        create(client)  # the reply would have come after 2 s: only the client's timeout ends it
    assert server.request_count == 1


def test_timeout_is_retried_with_the_next_step(server: ScriptedAnthropicServer) -> None:
    server.enqueue(delay(2.0), reply_text("after timeout"))
    with client_for(server, max_retries=1, timeout=0.2) as client:
        message = create(client)
    assert isinstance(message.content[0], TextBlock)
    assert message.content[0].text == "after timeout"
    assert [r.retry_count for r in server.requests] == [0, 1]


def test_short_delay_then_answers(server: ScriptedAnthropicServer) -> None:
    server.enqueue(delay(0.1, then=reply_text("late")))
    with client_for(server) as client:
        message = create(client)
    assert isinstance(message.content[0], TextBlock)
    assert message.content[0].text == "late"
    assert server.last_request.outcome == "reply"


@pytest.mark.parametrize("mode", ["close", "reset", "partial"])
def test_dropped_connection_raises_api_connection_error(server: ScriptedAnthropicServer, mode: Any) -> None:
    server.enqueue(drop(mode))
    with client_for(server) as client, pytest.raises(anthropic.APIConnectionError) as exc:
        create(client)
    assert not isinstance(exc.value, anthropic.APITimeoutError)
    assert server.last_request.outcome == "drop"
    assert server.last_request.json["model"] == MODEL


def test_stop_interrupts_a_pending_delay() -> None:
    srv = ScriptedAnthropicServer([delay(30.0)]).start()
    client = client_for(srv, timeout=10.0)
    try:
        errors: list[BaseException] = []

        def call() -> None:
            try:
                create(client)
            except anthropic.APIError as err:
                errors.append(err)

        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        assert srv.wait_for_requests(1, timeout=2.0)
        srv.stop()
        worker.join(30.0)  # a hang detector, not a speed bound
        assert not worker.is_alive()
        assert errors
        assert isinstance(errors[0], anthropic.APIConnectionError)
    finally:
        srv.stop()
        client.close()


# ---------------------------------------------------------------------------------------------
# Script bookkeeping, validation, other paths
# ---------------------------------------------------------------------------------------------


def test_exhausted_script_answers_500_once_and_fails_loudly(server: ScriptedAnthropicServer) -> None:
    with client_for(server, max_retries=2) as client, pytest.raises(anthropic.InternalServerError) as exc:
        create(client)
    assert exc.value.api_message == EXHAUSTED_MESSAGE
    assert server.request_count == 1  # x-should-retry: false stops SDK retries
    assert server.exhausted_count == 1
    assert server.last_request.outcome == "exhausted"
    with pytest.raises(AssertionError, match="exhausted"):
        server.assert_script_consumed()


def test_leftover_steps_fail_assert_script_consumed(server: ScriptedAnthropicServer) -> None:
    server.enqueue(reply_text("never asked"))
    assert server.pending_steps == 1
    with pytest.raises(AssertionError, match="never requested"):
        server.assert_script_consumed()


def test_strict_mode_rejects_unanswered_tool_use_without_consuming(server: ScriptedAnthropicServer) -> None:
    server.enqueue(reply_text("unused"))
    bad = [
        *USER,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "wp_cli", "input": {}}],
        },
        {"role": "user", "content": "no tool_result here"},
    ]
    with client_for(server, max_retries=2) as client, pytest.raises(anthropic.BadRequestError) as exc:
        create(client, messages=bad)
    assert "toolu_1" in str(exc.value.api_message)
    assert server.request_count == 1
    assert server.pending_steps == 1
    assert server.errors
    assert server.last_request.outcome == "invalid"


def test_strict_mode_limits_cache_breakpoints(server: ScriptedAnthropicServer) -> None:
    tools = [{**WP_CLI_TOOL, "name": f"tool_{i}"} for i in range(5)]
    with client_for(server) as client, pytest.raises(anthropic.BadRequestError, match="maximum of 4"):
        create(client, tools=tools)


def test_unknown_path_is_404_in_api_error_format(server: ScriptedAnthropicServer) -> None:
    with client_for(server) as client, pytest.raises(anthropic.NotFoundError) as exc:
        client.models.list()
    assert exc.value.type == "not_found_error"
    assert server.last_request.method == "GET"
    assert server.last_request.path == "/v1/models"
    assert server.last_request.outcome == "not_found"
    assert server.exhausted_count == 0


def test_api_key_check(server: ScriptedAnthropicServer) -> None:
    server.api_key = "right-key"
    server.enqueue(reply_text("authorized"))
    with (
        anthropic.Anthropic(api_key="wrong", base_url=server.base_url, max_retries=2) as client,
        pytest.raises(anthropic.AuthenticationError),
    ):
        create(client)
    with anthropic.Anthropic(api_key="right-key", base_url=server.base_url, max_retries=0) as client:
        create(client)
    assert [r.status for r in server.requests] == [401, 200]


def test_fixtures(scripted_anthropic_env: ScriptedAnthropicServer) -> None:
    assert os.environ["ANTHROPIC_BASE_URL"] == scripted_anthropic_env.base_url
    scripted_anthropic_env.enqueue(reply_text("from env"))
    with anthropic.Anthropic(max_retries=0) as client:
        message = create(client)
    assert isinstance(message.content[0], TextBlock)
    assert message.content[0].text == "from env"
    assert scripted_anthropic_env.last_request.headers["authorization"] == "Bearer test-key"


def test_scripted_anthropic_fixture_is_running(scripted_anthropic: ScriptedAnthropicServer) -> None:
    assert scripted_anthropic.running
    assert scripted_anthropic.base_url.startswith("http://127.0.0.1:")


# ---------------------------------------------------------------------------------------------
# JSON scripts and the command line
# ---------------------------------------------------------------------------------------------

SCRIPT: list[dict[str, Any]] = [
    {"type": "fault", "status": 529, "retry_after_ms": 1},
    {
        "type": "tool_use",
        "text": "確認します",
        "calls": [{"name": "wp_cli", "input": {"command": "post list --format=json", "reason": "一覧"}}],
    },
    {
        "type": "text",
        "text": "完了",
        "usage": {"input_tokens": 50, "output_tokens": 2, "cache_read_input_tokens": 40},
    },
]


def test_load_script_mirrors_the_constructors(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps(
            [
                *SCRIPT,
                {"type": "reply", "content": [{"type": "text", "text": "x"}], "stop_reason": "max_tokens"},
                {"type": "fault", "status": 429, "headers": {"retry-after": "0"}, "repeat": 2},
                {"type": "delay", "seconds": 0.5, "then": {"type": "text", "text": "late"}},
                {"type": "drop", "mode": "reset"},
            ]
        ),
        encoding="utf-8",
    )
    steps = load_script(path)
    assert steps[0] == fault(529, retry_after_ms=1)
    assert steps[1] == reply_tool_use(
        [("wp_cli", {"command": "post list --format=json", "reason": "一覧"})], text="確認します"
    )
    assert steps[2] == reply_text("完了", usage=usage(50, 2, cache_read_input_tokens=40))
    assert steps[3] == reply_text("x", stop_reason="max_tokens")
    assert steps[4] == steps[5] == fault(429, headers={"retry-after": "0"})
    assert steps[6] == delay(0.5, reply_text("late"))
    assert steps[7] == drop("reset")
    assert len(steps) == 8
    with pytest.raises(ValueError, match="unknown step type"):
        load_script([{"type": "nope"}])
    with pytest.raises(ValueError, match="unknown fields"):
        load_script([{"type": "text", "text": "x", "stop": "end_turn"}])


def test_command_line_server(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    record = tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.anthropic_server",
            "--script",
            str(script),
            "--port",
            "0",
            "--record",
            str(record),
        ],
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        with anthropic.Anthropic(api_key="test-key", base_url=base_url, max_retries=1, timeout=3.0) as client:
            first = create(client, tools=[WP_CLI_TOOL])
            call = first.content[1]
            assert isinstance(call, ToolUseBlock)
            second = create(
                client,
                tools=[WP_CLI_TOOL],
                messages=[
                    *USER,
                    {
                        "role": "assistant",
                        "content": [b.model_dump(exclude_none=True) for b in first.content],
                    },
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "[]"}],
                    },
                ],
            )
        assert second.usage.cache_read_input_tokens == 40
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=5)
        assert proc.returncode == 0, err
        summary = json.loads(err.strip().splitlines()[-1])
        assert summary == {"requests": 3, "consumed": 3, "pending": 0, "exhausted": 0, "errors": []}
        lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
        assert [line["status"] for line in lines] == [529, 200, 200]
        assert lines[2]["body"]["messages"][2]["content"][0]["tool_use_id"] == call.id
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
