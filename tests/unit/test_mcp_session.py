"""McpSession (the MCP server's bridge to the agent's turn) with a recording WP-CLI: what runs, what
is refused, which approvals a session can decide, and what the audit and annotations say."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

from tests.fakes.agent_doubles import RecordingWpCli, ScriptedModel, make_deps
from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.ports import MemoryAuditLog
from wp_agent.config import CliSettings
from wp_agent.mcp_server.resources import policy_rules_ja
from wp_agent.mcp_server.server import ChannelAuditLog, annotations_for, client_channel
from wp_agent.mcp_server.session import MAX_HELD_APPROVALS, UNKNOWN_APPROVAL_JA, McpSession
from wp_agent.policy import PolicyCategory
from wp_agent.policy.command_table import HARD_BLOCKS


def session_pair(**settings: Any) -> tuple[McpSession, McpSession, RecordingWpCli, MemoryAuditLog]:
    wp = RecordingWpCli()
    deps = make_deps(ScriptedModel([]), wp, **settings)
    assert isinstance(deps.audit, MemoryAuditLog)
    first = McpSession(deps, channel="mcp:one", user_id="u1")
    second = McpSession(deps, channel="mcp:two", user_id="u1")
    return first, second, wp, deps.audit


def test_a_read_runs_once_and_comes_back_wrapped_as_untrusted_data() -> None:
    session, _, wp, audit = session_pair()
    outcome = session.run_command("post list --post_status=draft", "確認")
    assert not outcome.is_error
    assert 'trust="untrusted-data"' in outcome.text
    assert wp.calls == [["post", "list", "--post_status=draft"]]
    # each wp_cli call is a run of its own: its command, then how it ended
    assert [e.type for e in audit.events] == [
        AuditEventType.RUN_STARTED,
        AuditEventType.COMMAND_EXECUTED,
        AuditEventType.RUN_SUMMARY,
    ]


def test_a_blocked_command_never_reaches_wp_cli() -> None:
    session, _, wp, audit = session_pair()
    outcome = session.run_command("post list; wp db drop --yes", "x")
    assert outcome.is_error
    assert "ブロック" in outcome.text
    assert wp.calls == []
    assert [e.type for e in audit.events] == [
        AuditEventType.RUN_STARTED,
        AuditEventType.COMMAND_BLOCKED,
        AuditEventType.RUN_SUMMARY,
    ]


def test_a_held_command_is_decided_once_and_only_by_its_own_session() -> None:
    session, other, wp, audit = session_pair()
    held = session.run_command("post delete 45 --force", "削除")
    assert held.pending is not None
    approval_id = held.pending.approval_id
    assert wp.changes() == []
    refused = other.decide(approval_id, approved=True, decided_by="mcp:two:approve")
    assert refused.is_error
    assert refused.text == UNKNOWN_APPROVAL_JA
    assert wp.changes() == []
    approved = session.decide(approval_id, approved=True, decided_by="mcp:one:approve")
    assert not approved.is_error, approved.text
    assert wp.changes() == [["post", "delete", "45", "--force"]]
    again = session.decide(approval_id, approved=True, decided_by="mcp:one:approve")
    assert again.is_error
    assert wp.changes() == [["post", "delete", "45", "--force"]]
    approver = [e.approver for e in audit.events if e.type is AuditEventType.APPROVAL_APPROVED]
    assert approver == ["mcp:one:approve"]


def test_a_rejected_command_does_not_run() -> None:
    session, _, wp, audit = session_pair()
    held = session.run_command("post delete 46 --force", "削除")
    assert held.pending is not None
    outcome = session.decide(held.pending.approval_id, approved=False, decided_by="mcp:one:reject")
    assert outcome.record is not None
    assert wp.changes() == []
    assert AuditEventType.APPROVAL_REJECTED in {e.type for e in audit.events}


def test_an_expired_approval_runs_nothing() -> None:
    session, _, wp, audit = session_pair()
    held = session.run_command("post delete 45 --force", "削除")
    assert held.pending is not None
    pending = session.pending(held.pending.approval_id)
    assert pending is not None
    pending.expires_at = "2000-01-01T00:00:00Z"
    outcome = session.decide(held.pending.approval_id, approved=True, decided_by="mcp:one:approve")
    assert outcome.is_error
    assert "期限" in outcome.text
    assert wp.changes() == []
    assert AuditEventType.APPROVAL_EXPIRED in {e.type for e in audit.events}


def test_the_approval_rechecks_the_policy_before_running() -> None:
    """A held network command whose requester lost the network right meanwhile is not run."""
    session, _, wp, _ = session_pair()
    held = session.run_command("site delete 3 --yes", "削除")
    assert held.pending is not None
    session._held[held.pending.approval_id].state.network_admin = False  # rights removed meanwhile
    outcome = session.decide(held.pending.approval_id, approved=True, decided_by="mcp:one:approve")
    assert outcome.is_error
    assert "ネットワーク管理者" in outcome.text
    assert wp.changes() == []


def test_check_applies_the_session_scope_and_runs_nothing() -> None:
    wp = RecordingWpCli()
    deps = make_deps(ScriptedModel([]), wp)
    scoped = McpSession(deps, channel="mcp:x", user_id="u", site_url="https://example.test/en/")
    assert scoped.check("post list").argv[-1] == "--url=https://example.test/en/"
    assert scoped.check("post list --url=https://example.test/shop/").category is PolicyCategory.BLOCKED
    assert scoped.check("eval 'phpinfo();'").rule == "blocked.code_execution"
    assert wp.calls == []


def test_the_channel_is_added_without_changing_the_record_id() -> None:
    inner = MemoryAuditLog()
    event = AuditEvent(type=AuditEventType.COMMAND_BLOCKED, user_id="u", session_id="s", target_id="t")
    ChannelAuditLog(inner, "mcp:claude-code").append(event)
    ChannelAuditLog(inner, "mcp:claude-code").append(event)
    assert len(inner.events) == 1
    assert inner.events[0].channel == "mcp:claude-code"
    assert inner.events[0].record_id == event.record_id


def test_annotations_follow_the_policy_categories() -> None:
    read = annotations_for({PolicyCategory.READ}, title="r")
    assert (read.read_only_hint, read.destructive_hint) == (True, False)
    write = annotations_for({PolicyCategory.READ, PolicyCategory.WRITE, PolicyCategory.BLOCKED}, title="w")
    assert (write.read_only_hint, write.destructive_hint) == (False, False)
    every = annotations_for(set(PolicyCategory), title="d")
    assert (every.read_only_hint, every.destructive_hint) == (False, True)


def test_the_client_name_is_reduced_to_safe_characters() -> None:
    def ctx(name: str) -> Any:
        return SimpleNamespace(
            session=SimpleNamespace(client_params=SimpleNamespace(client_info=SimpleNamespace(name=name)))
        )

    assert client_channel(ctx("claude-code")) == "mcp:claude-code"
    assert client_channel(ctx('evil"\n{"type":"x"}')) == "mcp:evil-type-x"
    assert client_channel(ctx("")) == "mcp:unknown-client"
    assert len(client_channel(ctx("a" * 500))) == len("mcp:") + 64
    anonymous: Any = SimpleNamespace(session=SimpleNamespace(client_params=None))
    assert client_channel(anonymous) == "mcp:unknown-client"


def test_the_policy_resource_lists_hard_blocks_and_this_environments_rules() -> None:
    rules = json.dumps(
        {"deny": [{"command": "plugin install", "reason": "社内規定"}], "confirm": ["post update"]}
    )
    text = policy_rules_ja(CliSettings(anthropic_api_key="x", wp_agent_policy_rules=rules))
    for block in HARD_BLOCKS:
        assert block.reason_ja in text
    assert "禁止: `wp plugin install` — 社内規定" in text
    assert "承認が必要: `wp post update`" in text


def test_held_approvals_are_bounded_and_expire_when_the_connection_ends() -> None:
    session, _, wp, audit = session_pair()
    ids = []
    for post_id in range(100, 100 + MAX_HELD_APPROVALS + 2):
        held = session.run_command(f"post delete {post_id} --force", "削除")
        assert held.pending is not None
        ids.append(held.pending.approval_id)
    assert session.pending(ids[0]) is None  # the oldest expired
    assert session.pending(ids[-1]) is not None
    session.close()
    assert session.pending(ids[-1]) is None
    assert session.decide(ids[-1], approved=True, decided_by="mcp:one:approve").is_error
    assert wp.changes() == []
    expired = [e for e in audit.events if e.type is AuditEventType.APPROVAL_EXPIRED]
    assert len(expired) == len(ids)


def test_a_hold_handed_to_the_person_leaves_the_session_and_outlives_it() -> None:
    session, _, wp, audit = session_pair()
    held = session.run_command("post delete 45 --force", "削除")
    assert held.pending is not None
    kept: list[tuple[str, str]] = []

    def keep(state: Any, channel: str) -> str:
        kept.append((state.pending_approval.approval_id, channel))
        return str(state.pending_approval.approval_id)

    assert session.hand_over(held.pending.approval_id, keep)
    assert kept == [(held.pending.approval_id, "mcp:one")]
    assert session.pending(held.pending.approval_id) is None  # nothing here can decide it any more
    assert session.decide(held.pending.approval_id, approved=True, decided_by="mcp:one:approve").is_error
    session.close()
    assert wp.changes() == []
    assert AuditEventType.APPROVAL_EXPIRED not in {e.type for e in audit.events}


def test_a_hold_that_cannot_be_kept_expires_at_once() -> None:
    def not_kept(state: Any, channel: str) -> None:
        return None

    def unwritable(state: Any, channel: str) -> str:
        raise OSError("disk full")

    for keep in (not_kept, unwritable):
        session, _, wp, audit = session_pair()
        held = session.run_command("post delete 45 --force", "削除")
        assert held.pending is not None
        assert not session.hand_over(held.pending.approval_id, keep)
        assert session.pending(held.pending.approval_id) is None
        assert wp.changes() == []
        assert [e.type for e in audit.events].count(AuditEventType.APPROVAL_EXPIRED) == 1


def test_changes_called_at_once_run_one_at_a_time_and_reads_side_by_side() -> None:
    """A client may call wp_cli several times at once. Its changes are decided and run one after the
    other (each decided on the site the one before left: policy/post_targets.py; the reads one decision
    makes may run side by side, never beside a change); reads overlap."""

    def calls_at_once(commands: list[str]) -> RecordingWpCli:
        wp = RecordingWpCli(delay_seconds=0.1)
        session = McpSession(make_deps(ScriptedModel([]), wp), channel="mcp:one", user_id="u1")
        with ThreadPoolExecutor(max_workers=len(commands)) as pool:
            outcomes = list(pool.map(lambda c: session.run_command(c, "x"), commands))
        assert not any(o.is_error for o in outcomes), [o.text for o in outcomes]
        return wp

    changes = calls_at_once([f"post meta update {i} views 7" for i in (45, 46, 47)])
    assert changes.peak_beside_a_change == 1
    assert changes.peak_concurrency <= 2  # one decision's own reads, side by side
    assert calls_at_once([f"post get {i}" for i in (45, 46, 47)]).peak_concurrency > 1
