"""Natural language → a validated ScheduleProposal (or a question back), through the ModelClient port.

The model answers by calling one tool, `propose_schedule`; its input is checked with pydantic and
the expression rules of `expressions.py`. An invalid answer goes back to the model as an `is_error`
tool_result saying what is wrong, at most `MAX_CORRECTIONS` times; then the proposal fails with a
Japanese WpAgentError. A plain-text answer is the model asking for what is missing (no time given,
…) and is returned as a clarification. Nothing is created here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from wp_agent import clock
from wp_agent.agent.messages import TextBlock, ToolResultBlock, ToolUseBlock, parse_content, to_params
from wp_agent.agent.model_client import ModelClient, ModelReply
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.models.agent_io import MAX_MESSAGE_CHARS
from wp_agent.models.schedule import (
    DEFAULT_SCHEDULE_TIMEZONE,
    MAX_SCHEDULE_NAME_CHARS,
    ScheduleProposal,
)
from wp_agent.models.tool_schema import anthropic_tool
from wp_agent.scheduling.expressions import (
    MIN_INTERVAL,
    ScheduleExpressionError,
    parse_timezone,
    validate_schedule,
)
from wp_agent.scheduling.summary import summarize

logger = logging.getLogger(__name__)

TOOL_NAME = "propose_schedule"
MAX_CORRECTIONS = 2  # after the first answer: at most three model calls per proposal
_WEEKDAYS_JA = "月火水木金土日"

SYSTEM_PROMPT_TEMPLATE_JA = """\
あなたは WordPress 運用エージェントの「スケジュール登録係」です。利用者の依頼文から、定期実行（または1回だけの予約実行）のスケジュールを組み立て、propose_schedule ツールを1回だけ呼び出してください。

現在日時: {now}（{timezone}）。「明日」「来週」などはこの日時を基準に解釈します。
タイムゾーン: 依頼文で別の地域の時刻が指定されない限り {timezone} を使います。

# 式の書き方（Amazon EventBridge Scheduler）
- 繰り返し: cron(分 時 日 月 曜日 年) の6項目。日と曜日のどちらか一方は必ず ? にします。曜日は 1=日曜 … 7=土曜、または SUN MON TUE WED THU FRI SAT。
  例: 毎週月曜9時 → cron(0 9 ? * MON *) / 毎日18時半 → cron(30 18 * * ? *) / 平日9時 → cron(0 9 ? * MON-FRI *) / 毎月1日10時 → cron(0 10 1 * ? *) / 毎月末日 → 日に L / 第2火曜 → 曜日に 3#2
- 一定間隔: rate(値 単位)。単位は minutes・hours・days（値が1なら minute・hour・day）。登録した時点から数えます。
- 1回だけ: at(yyyy-mm-ddThh:mm:ss)。タイムゾーンの現地時刻で、未来の日時にします。
- {min_minutes}分より短い間隔では実行できません。

# instruction
実行のたびにエージェントへ渡す日本語の指示です。依頼文から日時・頻度の部分を除いた作業内容だけを、利用者の言葉を生かして書きます（例:「毎週月曜9時に下書きを一覧して」→「下書きを一覧して」）。

# 確認が必要なとき
実行する日時・頻度、または実行する作業が依頼文から決められないとき（例:「毎週下書きを確認して」で曜日も時刻もない）は、ツールを呼ばずに、足りない点を日本語で短く質問してください。
"""


@dataclass(frozen=True)
class ScheduleClarification:
    """The model needs more information; `question` (Japanese) goes back to the person."""

    question: str


class _ProposedSchedule(BaseModel):
    """The tool input, as the model must send it."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)
    name: str = Field(
        min_length=1,
        max_length=MAX_SCHEDULE_NAME_CHARS,
        description="スケジュールの短い名前（日本語、例: 毎週月曜の下書き一覧）",
    )
    expression: str = Field(
        min_length=1,
        max_length=256,
        description="EventBridge Scheduler の式: cron(分 時 日 月 曜日 年) / rate(値 単位) / at(yyyy-mm-ddThh:mm:ss)",
    )
    timezone: str = Field(
        min_length=1, max_length=50, description="式を評価する IANA タイムゾーン名（例: Asia/Tokyo）"
    )
    instruction: str = Field(
        min_length=1,
        max_length=MAX_MESSAGE_CHARS,
        description="実行のたびにエージェントへ渡す日本語の指示。日時・頻度の部分は含めない（例: 下書きを一覧して）",
    )

    @field_validator("name")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
            raise ValueError("must be one line without control characters")
        return value

    @field_validator("instruction")
    @classmethod
    def _printable(cls, value: str) -> str:
        if any(ord(c) < 0x20 and c not in "\n\t" for c in value):
            raise ValueError("must not contain control characters (newlines are fine)")
        return value


PROPOSE_SCHEDULE_TOOL: dict[str, Any] = anthropic_tool(
    TOOL_NAME,
    "利用者の依頼から組み立てたスケジュールを提案します。システムが式を検証し、問題があればエラーで返します。"
    "提案しただけでは何も登録されません。",
    _ProposedSchedule,
    closed=True,
)


class ScheduleProposalError(WpAgentError):
    """The model did not produce a valid schedule within the allowed corrections."""

    def __init__(self, attempts: int, last_error: str) -> None:
        super().__init__(
            AgentErrorCode.API_ERROR,
            "依頼文からスケジュールを組み立てられませんでした。"
            "「毎週月曜 9:00 に下書きを一覧して」のように、日時・頻度と実行する内容をはっきり書いて、もう一度お試しください。",
            details={"reason": "invalid_proposal", "attempts": attempts, "lastError": last_error[:500]},
        )


def system_prompt(now: datetime, timezone: str) -> str:
    local = now.astimezone(parse_timezone(timezone))
    stamp = f"{local:%Y-%m-%d}（{_WEEKDAYS_JA[local.weekday()]}）{local:%H:%M}"
    return SYSTEM_PROMPT_TEMPLATE_JA.format(
        now=stamp, timezone=timezone, min_minutes=int(MIN_INTERVAL.total_seconds() // 60)
    )


def propose_schedule(
    model: ModelClient,
    text: str,
    *,
    timezone: str = DEFAULT_SCHEDULE_TIMEZONE,
    now: datetime | None = None,
    max_corrections: int = MAX_CORRECTIONS,
) -> ScheduleProposal | ScheduleClarification:
    """Ask the model for a schedule; raises ScheduleExpressionError for a bad `timezone` argument,
    ScheduleProposalError after `max_corrections` invalid answers, WpAgentError when the model fails."""
    now = now or clock.now()
    system = [{"type": "text", "text": system_prompt(now, timezone)}]
    messages: list[dict[str, Any]] = [{"role": "user", "content": text}]
    last_error = "no answer"
    for attempt in range(1, max_corrections + 2):
        reply = model.create(system=system, tools=[PROPOSE_SCHEDULE_TOOL], messages=messages)
        calls = reply.tool_uses
        if not calls:
            if reply.text:
                return ScheduleClarification(question=reply.text)
            last_error = "empty answer"
            continue  # nothing to answer: ask again with the same messages
        outcome = _check(calls[0], now)
        if isinstance(outcome, ScheduleProposal):
            return outcome
        last_error = outcome
        logger.info(
            "schedule proposal rejected", extra={"attempt": attempt, "validation_error": outcome[:300]}
        )
        messages = [*messages, *_correction(reply, calls, outcome)]
    raise ScheduleProposalError(max_corrections + 1, last_error)


def _check(call: ToolUseBlock, now: datetime) -> ScheduleProposal | str:
    """The validated proposal, or the error text to send back to the model."""
    if call.name != TOOL_NAME:
        return f"{call.name} というツールはありません。{TOOL_NAME} を使ってください。"
    try:
        proposed = _ProposedSchedule.model_validate(call.input)
        schedule = validate_schedule(proposed.expression, proposed.timezone, now=now)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors())
        return f"入力が正しくありません: {problems}"
    except ScheduleExpressionError as exc:
        return f"{exc.parameter} が正しくありません: {exc.message_ja}"
    return ScheduleProposal(
        name=proposed.name,
        expression=schedule.expression,
        timezone=schedule.timezone,
        instruction=proposed.instruction,
        summary_ja=summarize(schedule.parsed, schedule.timezone, proposed.instruction),
        next_runs=schedule.next_runs_iso(),
    )


def _correction(reply: ModelReply, calls: list[ToolUseBlock], error: str) -> list[dict[str, Any]]:
    """The assistant turn as sent back (text and tool calls), and one is_error tool_result per call."""
    assistant = [
        block.to_param()
        for block in parse_content(reply.content)
        if isinstance(block, ToolUseBlock) or (isinstance(block, TextBlock) and block.text)
    ]
    results = to_params(
        ToolResultBlock(
            call.id, error if i == 0 else f"{TOOL_NAME} は1回だけ呼び出してください。", is_error=True
        )
        for i, call in enumerate(calls)
    )
    return [{"role": "assistant", "content": assistant}, {"role": "user", "content": results}]
