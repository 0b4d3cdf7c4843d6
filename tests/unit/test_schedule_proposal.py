"""Natural language → ScheduleProposal with a scripted model: validation, bounded corrections, questions."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.fakes.agent_doubles import ScriptedModel, text_reply
from wp_agent.agent.model_client import ModelReply
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.models.schedule import ScheduleProposal
from wp_agent.scheduling.expressions import ScheduleExpressionError
from wp_agent.scheduling.proposal import (
    MAX_CORRECTIONS,
    PROPOSE_SCHEDULE_TOOL,
    TOOL_NAME,
    ScheduleClarification,
    ScheduleProposalError,
    propose_schedule,
    system_prompt,
)

NOW = datetime(2025, 1, 6, 9, 30, tzinfo=ZoneInfo("Asia/Tokyo"))  # Monday morning
REQUEST = "毎週月曜9時に下書きを一覧して"
_ids = iter(range(1, 1_000))


def proposal_reply(text: str | None = None, **overrides: Any) -> ModelReply:
    arguments = {
        "name": "毎週月曜の下書き一覧",
        "expression": "cron(0 9 ? * MON *)",
        "timezone": "Asia/Tokyo",
        "instruction": "下書きを一覧して",
    } | overrides
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.append(
        {"type": "tool_use", "id": f"toolu_p{next(_ids):04d}", "name": TOOL_NAME, "input": arguments}
    )
    return ModelReply(content=content, stop_reason="tool_use", model="scripted")


def tool_results(model: ScriptedModel, call: int) -> list[dict[str, Any]]:
    content = model.calls[call][-1]["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def test_valid_first_time() -> None:
    model = ScriptedModel([proposal_reply()])
    result = propose_schedule(model, REQUEST, now=NOW)
    assert isinstance(result, ScheduleProposal)
    assert result.expression == "cron(0 9 ? * MON *)"
    assert result.timezone == "Asia/Tokyo"
    assert result.instruction == "下書きを一覧して"
    assert result.summary_ja == "毎週月曜 9:00（日本時間）に『下書きを一覧して』を実行します"
    assert result.next_runs == [
        "2025-01-13T09:00:00+09:00",
        "2025-01-20T09:00:00+09:00",
        "2025-01-27T09:00:00+09:00",
        "2025-02-03T09:00:00+09:00",
        "2025-02-10T09:00:00+09:00",
    ]
    assert result.to_json_dict()["summaryJa"].startswith("毎週月曜")
    assert result.to_json_dict()["nextRuns"][0] == "2025-01-13T09:00:00+09:00"
    assert len(model.calls) == 1
    assert model.calls[0] == [{"role": "user", "content": REQUEST}]


def test_the_request_carries_the_tool_and_the_current_time() -> None:
    seen: dict[str, Any] = {}

    class Recording(ScriptedModel):
        def create(
            self, *, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]]
        ) -> ModelReply:
            seen.update(system=system, tools=tools)
            return super().create(system=system, tools=tools, messages=messages)

    propose_schedule(Recording([proposal_reply()]), REQUEST, now=NOW)
    assert seen["tools"] == [PROPOSE_SCHEDULE_TOOL]
    assert seen["tools"][0]["input_schema"]["required"] == ["name", "expression", "timezone", "instruction"]
    prompt = seen["system"][0]["text"]
    assert "2025-01-06（月）09:30（Asia/Tokyo）" in prompt
    assert "15分より短い間隔" in prompt


def test_the_current_time_is_shown_in_the_requested_zone() -> None:
    assert "2025-01-05（日）19:30（America/New_York）" in system_prompt(NOW, "America/New_York")


def test_invalid_then_valid_feeds_the_error_back() -> None:
    model = ScriptedModel(
        [
            proposal_reply("月曜9時ですね。", expression="cron(0 9 * * MON *)"),  # breaks the "?" rule
            proposal_reply(),
        ]
    )
    result = propose_schedule(model, REQUEST, now=NOW)
    assert isinstance(result, ScheduleProposal)
    assert len(model.calls) == 2
    first, retry = model.calls
    assert retry[: len(first)] == first
    assistant, correction = retry[-2], retry[-1]
    assert assistant["role"] == "assistant"
    assert correction["role"] == "user"
    assert assistant["content"][0] == {"type": "text", "text": "月曜9時ですね。"}
    assert assistant["content"][1]["type"] == "tool_use"
    [result_block] = tool_results(model, 1)
    assert result_block["is_error"] is True
    assert result_block["tool_use_id"] == assistant["content"][1]["id"]
    assert "expression" in result_block["content"]
    assert "どちらか一方は「?」" in result_block["content"]


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"expression": "rate(5 minutes)"}, "15分以上"),
        ({"timezone": "Tokyo"}, "timezone"),
        ({"instruction": ""}, "instruction"),
        ({"expression": "at(2024-01-01T09:00:00)"}, "過去"),
        ({"name": "x" * 65}, "name"),
        ({"name": "一行目\n二行目"}, "name"),
    ],
)
def test_each_kind_of_invalid_answer_is_explained(overrides: dict[str, Any], expected: str) -> None:
    model = ScriptedModel([proposal_reply(**overrides), proposal_reply()])
    assert isinstance(propose_schedule(model, REQUEST, now=NOW), ScheduleProposal)
    assert expected in tool_results(model, 1)[0]["content"]


def test_missing_fields_are_reported() -> None:
    bad = ModelReply(
        content=[{"type": "tool_use", "id": "toolu_missing", "name": TOOL_NAME, "input": {"name": "x"}}],
        stop_reason="tool_use",
        model="scripted",
    )
    model = ScriptedModel([bad, proposal_reply()])
    propose_schedule(model, REQUEST, now=NOW)
    message = tool_results(model, 1)[0]["content"]
    assert "expression" in message
    assert "instruction" in message


def test_invalid_three_times_is_a_clear_error() -> None:
    model = ScriptedModel([proposal_reply(expression=f"cron(0 9 * * MON {i})") for i in range(3)])
    with pytest.raises(ScheduleProposalError) as caught:
        propose_schedule(model, REQUEST, now=NOW)
    assert len(model.calls) == 1 + MAX_CORRECTIONS == 3
    error = caught.value
    assert isinstance(error, WpAgentError)
    assert error.code is AgentErrorCode.API_ERROR
    assert "スケジュールを組み立てられませんでした" in error.message_ja
    assert error.details["attempts"] == 3
    assert "?" in error.details["lastError"]
    # Every correction answered the previous call: the conversation stays well-formed.
    assert [m["role"] for m in model.calls[2]] == ["user", "assistant", "user", "assistant", "user"]


def test_a_question_is_a_clarification_not_an_error() -> None:
    model = ScriptedModel([text_reply("何曜日の何時に実行しますか？（例: 毎週月曜 9:00）")])
    result = propose_schedule(model, "毎週下書きを確認して", now=NOW)
    assert result == ScheduleClarification(question="何曜日の何時に実行しますか？（例: 毎週月曜 9:00）")
    assert len(model.calls) == 1


def test_an_empty_answer_is_asked_again_within_the_budget() -> None:
    empty = ModelReply(content=[], stop_reason="end_turn", model="scripted")
    model = ScriptedModel([empty, proposal_reply()])
    assert isinstance(propose_schedule(model, REQUEST, now=NOW), ScheduleProposal)
    assert model.calls[1] == [{"role": "user", "content": REQUEST}]


def test_extra_tool_calls_are_answered_too() -> None:
    first = proposal_reply(expression="cron(0 9 * * MON *)")
    first.content.append(
        {"type": "tool_use", "id": "toolu_extra", "name": TOOL_NAME, "input": {"name": "2つ目"}}
    )
    model = ScriptedModel([first, proposal_reply()])
    propose_schedule(model, REQUEST, now=NOW)
    results = tool_results(model, 1)
    assert [r["tool_use_id"] for r in results] == [first.content[0]["id"], "toolu_extra"]
    assert all(r["is_error"] for r in results)
    assert "1回だけ" in results[1]["content"]


def test_another_time_zone_from_the_model_is_kept() -> None:
    model = ScriptedModel([proposal_reply(timezone="America/New_York")])
    result = propose_schedule(model, "ニューヨーク時間で毎週月曜9時に下書きを一覧して", now=NOW)
    assert isinstance(result, ScheduleProposal)
    assert result.timezone == "America/New_York"
    assert result.next_runs[0] == "2025-01-06T09:00:00-05:00"
    assert "（America/New_York）" in result.summary_ja


def test_tomorrow_resolves_against_the_given_now() -> None:
    model = ScriptedModel([proposal_reply(expression="at(2025-01-07T09:00:00)", name="明日の下書き一覧")])
    result = propose_schedule(model, "明日の9時に下書きを一覧して", now=NOW)
    assert isinstance(result, ScheduleProposal)
    assert result.next_runs == ["2025-01-07T09:00:00+09:00"]
    assert result.summary_ja.startswith("2025年1月7日（火）9:00（日本時間）に1回")


def test_model_failures_pass_through() -> None:
    model = ScriptedModel([WpAgentError(AgentErrorCode.API_RATE_LIMITED)])
    with pytest.raises(WpAgentError) as caught:
        propose_schedule(model, REQUEST, now=NOW)
    assert caught.value.code is AgentErrorCode.API_RATE_LIMITED


def test_a_bad_default_time_zone_fails_before_the_model_is_called() -> None:
    model = ScriptedModel([])
    with pytest.raises(ScheduleExpressionError) as caught:
        propose_schedule(model, REQUEST, timezone="Japan/Osaka", now=NOW)
    assert caught.value.parameter == "timezone"
    assert model.calls == []
