"""The site's facts on the real sandbox WordPress, through the real SDK to the scripted model: the first
request of a run states the site's date, time and zone as WordPress has them (the clock at 23:30 UTC:
already the next day in Asia/Tokyo), 「明日9時」 is scheduled without an observation turn, the reads are in
the audit, and the system prompt — the cached prefix — is the same for every run."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import pytest

from tests.fakes.anthropic_server import RecordedRequest, ScriptedAnthropicServer, reply_text, reply_tool_use
from tests.fakes.clock import site_now
from wp_agent.agent import site_facts
from wp_agent.agent.model_client import AnthropicModelClient
from wp_agent.agent.ports import MemoryAuditLog, NoApprovals
from wp_agent.agent.runner import AgentRunner
from wp_agent.cli.wiring import build_local_deps
from wp_agent.config import CliSettings
from wp_agent.models.agent_io import AgentInput
from wp_agent.sandbox import SandboxSite


@pytest.fixture
def settings(cli_sandbox: SandboxSite, scripted_anthropic: ScriptedAnthropicServer) -> CliSettings:
    return CliSettings(
        anthropic_api_key="test-key",
        anthropic_base_url=scripted_anthropic.base_url,
        wp_cli_mode="sandbox",
        wp_agent_sandbox_site=cli_sandbox.home,
        wp_agent_api_retry_base_seconds=0,
    )


def facts_of(request: RecordedRequest) -> str:
    first_block = request.messages[-1]["content"][0]
    assert first_block["text"].startswith("<site_facts "), first_block
    text: str = first_block["text"]
    return text


@pytest.mark.clock
def test_the_first_request_states_the_site_date_and_tomorrow_9_needs_no_observation(
    settings: CliSettings, cli_sandbox: SandboxSite, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    # The agent's clock at 23:30 UTC on a day a month ahead of the site's own clock (WordPress keeps the
    # schedule as a future one): already the next day in Asia/Tokyo.
    utc_day = site_now(cli_sandbox).date() + timedelta(days=30)
    late_utc = datetime.combine(utc_day, time(23, 30), tzinfo=UTC)
    tokyo_today = utc_day + timedelta(days=1)

    def schedule(request: RecordedRequest) -> Any:
        today = re.search(r"現在日時: (\d{4}-\d{2}-\d{2})", facts_of(request))
        assert today is not None
        tomorrow = date.fromisoformat(today.group(1)) + timedelta(days=1)
        command = f'post update 45 --post_status=future --post_date="{tomorrow} 09:00:00" --edit_date=1'
        return reply_tool_use([("wp_cli", {"command": command, "reason": "明日9時に予約公開"})])

    scripted_anthropic.enqueue(schedule, reply_text("ID 45 を明日9時に予約公開しました。"))
    audit = MemoryAuditLog()
    deps = build_local_deps(settings, model=AnthropicModelClient(settings), audit=audit)
    deps.clock = lambda: late_utc
    output = AgentRunner(deps, NoApprovals()).run(AgentInput(message="ID 45の記事を明日9時に予約公開して"))
    assert output.success, output.error

    first, second = scripted_anthropic.message_requests
    facts = facts_of(first)
    version = cli_sandbox.wp("core", "version").stdout.strip()
    weekday = "月火水木金土日"[tokyo_today.weekday()]
    assert f"現在日時: {tokyo_today}（{weekday}）08:30（サイトのタイムゾーン Asia/Tokyo、UTC+09:00）" in facts
    assert "サイト名: Argo Note サンプルサイト" in facts
    assert "URL: https://example.test" in facts
    assert f"WordPress: {version}" in facts
    theme = cli_sandbox.wp("theme", "list", "--status=active", "--field=name").stdout.strip()
    assert f"有効なテーマ: {theme}\n" in facts
    assert re.search(r"マルチサイト: \d+サイト（blog_id: URL — 1: https://example.test/", facts)
    assert first.messages[-1]["content"][1]["text"] == "ID 45の記事を明日9時に予約公開して"

    # The write came in the first reply: two model calls in all, no read of the model's own.
    assert len(scripted_anthropic.message_requests) == 2
    assert [c.command for c in output.executed_commands] == [
        f'post update 45 --post_status=future --post_date="{tokyo_today + timedelta(days=1)} 09:00:00" --edit_date=1'
    ]
    post = cli_sandbox.wp("post", "get", "45", "--fields=post_status,post_date", "--format=json").stdout
    assert json.loads(post) == {
        "post_status": "future",
        "post_date": f"{tokyo_today + timedelta(days=1)} 09:00:00",
    }

    reads = [e for e in audit.events if e.reason == site_facts.READ_REASON]
    assert sorted(e.command or "" for e in reads) == sorted(
        " ".join(r) for r in site_facts.FactsPlan(None, None).reads
    )
    assert all(e.category == "read" and e.success for e in reads)

    # The cached prefix is the same on every request; the facts are only in the run's first message.
    assert first.json["system"] == second.json["system"]
    assert first.json["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "<site_facts " not in json.dumps(first.json["system"], ensure_ascii=False)
    assert second.messages[0] == first.messages[0]


def test_the_fact_reads_change_nothing_on_the_site(
    settings: CliSettings, cli_sandbox: SandboxSite, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    # An expired cache of the theme directories, as on most sites: `theme list` would rewrite it.
    cli_sandbox.sql(
        "UPDATE wp_sitemeta SET meta_value = '1' WHERE meta_key = '_site_transient_timeout_theme_roots'"
    )
    before = checksums(cli_sandbox)
    scripted_anthropic.enqueue(reply_text("こんにちは。"))
    deps = build_local_deps(settings, model=AnthropicModelClient(settings), audit=MemoryAuditLog())
    assert AgentRunner(deps, NoApprovals()).run(AgentInput(message="こんにちは")).success
    assert "<site_facts " in json.dumps(scripted_anthropic.message_requests[0].messages, ensure_ascii=False)
    assert checksums(cli_sandbox) == before


def checksums(site: SandboxSite) -> dict[str, str]:
    tables = [row[0] for row in site.sql("SHOW TABLES")]
    return {row[0]: row[1] for row in site.sql("CHECKSUM TABLE " + ", ".join(f"`{t}`" for t in tables))}
