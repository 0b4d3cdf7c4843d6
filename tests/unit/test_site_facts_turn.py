"""The turn puts the site's facts into a run's first user message: read before the first model call
(concurrently, audited, cached per target), saved before the model sees them, the same on a retry, and
never a reason for the run to fail. The clock is injected: these pass at any hour."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from tests.fakes.agent_doubles import (
    RecordingWpCli,
    ScriptedModel,
    is_fact_read,
    make_deps,
    text_reply,
    tool_reply,
)
from wp_agent.agent import site_facts
from wp_agent.agent.lifecycle import continue_session, new_session
from wp_agent.agent.ports import InMemorySessionStore, MemoryAuditLog, NoApprovals
from wp_agent.agent.prompt import cached_system_blocks
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.site_facts_cache import SiteFactsCache
from wp_agent.agent.turn import AgentTurn
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.port import CommandResult
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.workflow import Route

LATE_UTC = datetime(2031, 3, 4, 23, 30, tzinfo=UTC)  # 2031-03-05 08:30 in Tokyo
TOKYO_SITE = {
    site_facts.TIMEZONE: "Asia/Tokyo",
    site_facts.GMT_OFFSET: "9",
    site_facts.NAME: "テストサイト",
    site_facts.HOME: "https://example.test",
    site_facts.VERSION: "6.1.1",
    site_facts.CLI_VERSION: "WP-CLI 2.12.0",
    site_facts.THEME: "twentytwentythree",
}


def tokyo_site(argv: list[str]) -> CommandResult | WpAgentError:
    """A single Tokyo site: the fact reads answered as WordPress would; everything else succeeds."""
    if tuple(argv) == site_facts.SITES:
        return CommandResult("", "Error: This is not a multisite installation.\n", 1, 3)
    if argv[:2] == ["post", "list"]:  # the agent's check of a post's type: none is internal
        return CommandResult("", "", 0, 1)
    if argv[:2] == ["post", "get"] and "--field=post_type" in argv:  # the update's site check: a post
        return CommandResult("post\n", "", 0, 1)
    known = TOKYO_SITE.get(tuple(argv))
    return CommandResult((known if known is not None else "Success: ok.") + "\n", "", 0, 3)


def fact_reads(wp: RecordingWpCli) -> list[list[str]]:
    return [c for c in wp.calls if is_fact_read(c)]


def facts_in(message_content: Any) -> str:
    assert isinstance(message_content, list), message_content
    text: str = message_content[0]["text"]
    assert text.startswith("<site_facts ")
    return text


def schedule_for_tomorrow(messages: list[dict[str, Any]]) -> Any:
    """What a model does with 「明日9時」: the date from the facts, no command to find it."""
    today = re.search(r"現在日時: (\d{4}-\d{2}-\d{2})", facts_in(messages[-1]["content"]))
    assert today is not None
    tomorrow = date.fromisoformat(today.group(1)) + timedelta(days=1)
    return tool_reply(
        f'post update 45 --post_status=future --post_date="{tomorrow} 09:00:00" --edit_date=1',
        text="明日9時に予約します",
    )


def test_the_first_request_carries_the_site_date_and_tomorrow_needs_no_observation() -> None:
    wp = RecordingWpCli(handler=tokyo_site)
    model = ScriptedModel([schedule_for_tomorrow, text_reply("2031-03-06 9:00 に予約しました")])
    deps = make_deps(model, wp)
    deps.clock = lambda: LATE_UTC
    output = AgentRunner(deps, NoApprovals()).run(AgentInput(message="ID 45の記事を明日9時に予約公開して"))

    assert output.success, output.error
    first_request = model.calls[0]
    facts = facts_in(first_request[-1]["content"])
    assert "現在日時: 2031-03-05（水）08:30（サイトのタイムゾーン Asia/Tokyo、UTC+09:00）" in facts
    assert "サイト名: テストサイト" in facts
    assert "マルチサイト: いいえ（単一サイト）" in facts
    assert first_request[-1]["content"][1] == {"type": "text", "text": "ID 45の記事を明日9時に予約公開して"}
    assert len(model.calls) == 2  # the write at once, then the answer: no observation turn
    assert [c.command for c in output.executed_commands] == [
        'post update 45 --post_status=future --post_date="2031-03-06 09:00:00" --edit_date=1'
    ]  # the model ran nothing to find today's date
    assert wp.changes() == [
        ["post", "update", "45", "--post_status=future", "--post_date=2031-03-06 09:00:00", "--edit_date=1"]
    ]
    # The facts stay where they were: the later request repeats the same first message.
    assert model.calls[1][0] == first_request[0]
    # Not in the cached system prompt (its prefix is the same for every run and every site).
    assert "site_facts" not in cached_system_blocks()[0]["text"].split("# サイトの情報と日時")[0]
    assert all(block.get("cache_control") for block in cached_system_blocks())


def test_the_reads_run_side_by_side_are_audited_and_serve_the_next_run() -> None:
    wp = RecordingWpCli(handler=tokyo_site, delay_seconds=0.05)
    model = ScriptedModel([text_reply("はい"), text_reply("はい")])
    deps = make_deps(model, wp)
    clock = [LATE_UTC]
    deps.clock = lambda: clock[0]
    runner = AgentRunner(deps, NoApprovals())
    runner.run(AgentInput(message="今日は何日？"))
    assert sorted(map(tuple, wp.calls)) == sorted(site_facts.FactsPlan(None, None).reads)
    assert wp.peak_concurrency > 1  # side by side (how much faster: bench/site_facts.py)
    assert isinstance(deps.audit, MemoryAuditLog)
    audited = [e for e in deps.audit.events if e.reason == site_facts.READ_REASON]
    assert sorted(e.command or "" for e in audited) == sorted(
        " ".join(r) for r in site_facts.FactsPlan(None, None).reads
    )
    assert {e.category for e in audited} == {"read"}
    assert [e.success for e in audited if (e.command or "").startswith("site list")] == [False]

    calls = len(wp.calls)
    clock[0] = LATE_UTC + timedelta(minutes=2)
    runner.run(AgentInput(message="今の時刻は？"))
    assert len(wp.calls) == calls  # from the cache, yet the time is the run's own
    assert "08:32" in facts_in(model.calls[1][-1]["content"])


def test_a_follow_up_run_gets_facts_in_its_own_first_message_and_the_cache_expires() -> None:
    wp = RecordingWpCli(handler=tokyo_site)
    model = ScriptedModel([text_reply("1"), text_reply("2"), text_reply("3")])
    deps = make_deps(model, wp)
    now = [1_000.0]
    deps.site_facts = SiteFactsCache(300, clock=lambda: now[0])
    deps.clock = lambda: LATE_UTC
    turn = AgentTurn(deps)
    state = new_session(AgentInput(message="一"), session_id="s1", user_id="u", target_id="t")
    assert turn.advance(state) is Route.COMPLETED
    continue_session(state, AgentInput(message="二"))
    assert turn.advance(state) is Route.COMPLETED
    facts_in(state.messages[-2]["content"])  # the follow-up run's first message has them too
    assert len(fact_reads(wp)) == 8
    now[0] += 301
    continue_session(state, AgentInput(message="三"))
    assert turn.advance(state) is Route.COMPLETED
    assert len(fact_reads(wp)) == 16  # read again once the facts are older than the setting


def test_a_failing_fact_read_makes_that_fact_unknown_not_the_run_failed() -> None:
    def no_time_zone(argv: list[str]) -> CommandResult | WpAgentError:
        if tuple(argv) in {site_facts.TIMEZONE, site_facts.GMT_OFFSET}:
            return WpAgentError(AgentErrorCode.COMMAND_TIMEOUT)
        return tokyo_site(argv)

    model = ScriptedModel([text_reply("ok")])
    deps = make_deps(model, RecordingWpCli(handler=no_time_zone))
    deps.clock = lambda: LATE_UTC
    output = AgentRunner(deps, NoApprovals()).run(AgentInput(message="こんにちは"))
    assert output.success
    facts = facts_in(model.calls[0][-1]["content"])
    assert "現在日時: 不明（サイトのタイムゾーンを取得できませんでした。UTC では 2031-03-04 23:30。" in facts
    assert "サイト名: テストサイト" in facts
    assert isinstance(deps.audit, MemoryAuditLog)
    timed_out = [e for e in deps.audit.events if e.command == "option get timezone_string"]
    assert [(e.success, e.error) for e in timed_out] == [(False, "COMMAND_TIMEOUT")]

    # Nothing answers at all (the host is down): the model is still asked, with every fact unknown.
    down = RecordingWpCli(handler=lambda argv: WpAgentError(AgentErrorCode.SSH_CONNECTION_FAILED))
    model = ScriptedModel([text_reply("サーバーに接続できません")])
    output = AgentRunner(make_deps(model, down), NoApprovals()).run(AgentInput(message="こんにちは"))
    assert output.success
    assert facts_in(model.calls[0][-1]["content"]).count("不明") == 7  # all but the user: none is set


def test_a_retried_first_turn_sends_the_facts_it_saved() -> None:
    store = InMemorySessionStore()
    wp = RecordingWpCli(handler=tokyo_site)

    def crash(messages: list[dict[str, Any]]) -> Any:
        raise KeyboardInterrupt  # the Lambda dies during the model call

    model = ScriptedModel([crash, text_reply("ok")])
    deps = make_deps(model, wp, store=store)
    deps.clock = lambda: LATE_UTC
    deps.site_facts = SiteFactsCache(0)  # nothing kept in memory: a new container
    state = new_session(AgentInput(message="明日の予定"), session_id="s9", user_id="u", target_id="t")
    with pytest.raises(KeyboardInterrupt):
        AgentTurn(deps).advance(state)
    saved = store.load("s9")
    assert saved is not None
    reads = len(wp.calls)
    deps.clock = lambda: LATE_UTC + timedelta(hours=1)  # the retry comes later
    assert AgentTurn(deps).advance(saved) is Route.COMPLETED
    assert len(wp.calls) == reads  # nothing read again
    assert model.calls[1][-1]["content"] == model.calls[0][-1]["content"]  # the same facts, 08:30
    assert "08:30" in facts_in(model.calls[1][-1]["content"])


def test_the_acting_user_and_the_pinned_site_are_read_on_that_site() -> None:
    user = site_facts.FactsPlan("https://example.test/en/", "editor1").user_read

    def answers(argv: list[str]) -> CommandResult:
        if argv[:2] == ["user", "get"]:
            return CommandResult('{"ID":7,"user_login":"editor1","roles":"editor"}', "", 0, 2)
        return CommandResult("x\n", "", 0, 2)

    wp = RecordingWpCli(handler=answers)
    model = ScriptedModel([text_reply("ok")])
    deps = make_deps(model, wp)
    deps.wp_user = "editor1"
    AgentRunner(deps, NoApprovals()).run(AgentInput(message="hi"), site_url="https://example.test/en/")
    assert [*user, "--url=https://example.test/en/"] in wp.calls
    assert all(c[-1] == "--url=https://example.test/en/" for c in wp.calls)  # every read on that site
    assert not any(c[:2] == ["site", "list"] for c in wp.calls)
    facts = facts_in(model.calls[0][-1]["content"])
    assert "実行ユーザー: editor1（ID 7）、権限: 編集者（editor）" in facts
    assert "ネットワークの1サイト https://example.test/en/ が対象" in facts
