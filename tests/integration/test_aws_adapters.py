"""DynamoDB adapters on moto: session layout and conditions, append-only audit, registry."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import boto3
import pytest
import time_machine
from boto3.dynamodb.conditions import Key

from tests.fakes.agent_doubles import ScriptedModel, make_deps, tool_reply
from tests.fakes.aws import REGION, TABLES, LostAnswer, sdk_retries_run_out, sdk_retry_meets_the_write
from wp_agent import clock
from wp_agent.adapters.aws import secrets
from wp_agent.adapters.aws.audit_log import DynamoAuditLog
from wp_agent.adapters.aws.registry import TargetRegistry
from wp_agent.adapters.aws.secrets import TargetSecrets
from wp_agent.adapters.aws.session_store import (
    PART_BYTES,
    DynamoSessionStore,
)
from wp_agent.agent import lifecycle
from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.lifecycle import continue_session, new_session
from wp_agent.agent.session_state import CommandRecord, CommandStatus, SessionStatus
from wp_agent.agent.turn import AgentTurn
from wp_agent.errors import SessionDataMissingError, StaleSessionError
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.target import Target
from wp_agent.models.workflow import Route
from wp_agent.policy import PolicyCategory

pytestmark = pytest.mark.usefixtures("aws")


def store() -> DynamoSessionStore:
    return DynamoSessionStore(TABLES["sessions"])


def items(pk: str) -> list[dict[str, Any]]:
    table = boto3.resource("dynamodb", region_name=REGION).Table(TABLES["sessions"])
    return list(table.query(KeyConditionExpression=Key("pk").eq(pk))["Items"])


def record(tool_use_id: str, stdout: str) -> CommandRecord:
    return CommandRecord(
        tool_use_id=tool_use_id,
        command="post list",
        argv=["post", "list"],
        category=PolicyCategory.READ,
        rule="allow.post.list",
        policy_reason="読み取り",
        status=CommandStatus.FINISHED,
        iteration=1,
        exit_code=0,
        stdout=stdout,
    )


@pytest.mark.clock
def test_round_trip_of_a_long_conversation_and_a_10_mb_output() -> None:
    state = new_session(
        AgentInput(message="テスト"), session_id="ses_roundtrip", user_id="u1", target_id="site-a"
    )
    state.messages.append(
        {"role": "assistant", "content": [{"type": "text", "text": "あ" * 300_000}]}
    )  # ~900 KB of UTF-8
    state.messages.append({"role": "user", "content": "続けて"})
    big = os.urandom(5 * 1024 * 1024).hex()  # 10 MB that does not compress
    state.run_id = "run_1"
    state.commands.append(record("toolu_1", big).model_copy(update={"run_id": "run_1"}))
    store().save(state)
    loaded = store().load("ses_roundtrip")
    assert loaded is not None
    assert loaded.messages == state.messages
    assert loaded.commands[0].stdout == big
    assert loaded.version == 1
    for item in items("SESSION#ses_roundtrip"):
        assert len(bytes(item.get("body", b""))) <= PART_BYTES
        assert int(item["expires_at"]) > time.time()


def test_saves_are_incremental() -> None:
    s = store()
    state = new_session(AgentInput(message="x"), session_id="ses_incremental", user_id="u1", target_id="t1")
    s.save(state)
    before = {i["sk"]: i for i in items("SESSION#ses_incremental")}
    state.messages.append({"role": "assistant", "content": "y"})
    s.save(state)
    after = {i["sk"]: i for i in items("SESSION#ses_incremental")}
    added = set(after) - set(before)
    # Only the new message is written; earlier blobs stay as they are (never overwritten).
    assert len(added) == 1
    assert next(iter(added)).startswith("BLOB#msg:000001#")
    assert all(after[sk] == item for sk, item in before.items() if sk != "STATE")


def test_loads_need_only_the_current_blobs() -> None:
    s = store()
    state = new_session(AgentInput(message="x"), session_id="ses_superseded", user_id="u1", target_id="t1")
    s.save(state)
    first = {i["sk"] for i in items("SESSION#ses_superseded")}
    state.iterations = 3  # the core changes: a new core blob supersedes the first one
    s.save(state)
    table = boto3.resource("dynamodb", region_name=REGION).Table(TABLES["sessions"])
    superseded = {sk for sk in first if sk.startswith("BLOB#core#")}
    assert superseded
    for sk in superseded:
        table.delete_item(Key={"pk": "SESSION#ses_superseded", "sk": sk})
    loaded = store().load("ses_superseded")
    assert loaded is not None
    assert loaded.iterations == 3


def first_message_blobs(session_id: str) -> dict[str, int]:
    return {
        i["sk"]: int(i["expires_at"])
        for i in items(f"SESSION#{session_id}")
        if i["sk"].startswith("BLOB#msg:000000#")
    }


@pytest.mark.clock
@pytest.mark.parametrize("ttl_days", [1, 90, 3650])
def test_every_part_outlives_the_session_record(ttl_days: int) -> None:
    s = DynamoSessionStore(TABLES["sessions"], ttl_days=ttl_days)
    session_id = f"ses_aging_{ttl_days}"
    state = new_session(AgentInput(message="x"), session_id=session_id, user_id="u1", target_id="t1")
    s.save(state)
    start = time.time()
    for day in range(0, 3 * ttl_days, max(1, ttl_days // 4)):  # a session kept alive for long
        with time_machine.travel(start + day * 86_400, tick=False):
            state.iterations += 1
            s.save(state)
        session_expiry = int(
            next(i for i in items(f"SESSION#{session_id}") if i["sk"] == "STATE")["expires_at"]
        )
        loaded = s.load(session_id)
        assert loaded is not None
        current = max(first_message_blobs(session_id).values())
        assert current >= session_expiry, f"day {day}: the first message would expire before the session"


@pytest.mark.clock
def test_an_unchanged_part_is_not_written_again_while_young() -> None:
    s = store()
    state = new_session(AgentInput(message="x"), session_id="ses_young", user_id="u1", target_id="t1")
    s.save(state)
    first = first_message_blobs("ses_young")
    with time_machine.travel(time.time() + 30 * 86_400, tick=False):
        state.iterations = 1
        s.save(state)
    assert first_message_blobs("ses_young") == first


@pytest.mark.clock
def test_a_secret_scheduled_for_deletion_keeps_its_date() -> None:
    """A repeated DELETE of a target answers the date the first one did, a day later too."""
    arn = boto3.client("secretsmanager", region_name=REGION).create_secret(
        Name="wp-agent/target/site-gone", SecretString="{}"
    )["ARN"]
    first = TargetSecrets().schedule_deletion(arn, recovery_days=30)
    assert first is not None
    with time_machine.travel(time.time() + 86_400, tick=False):
        assert TargetSecrets().schedule_deletion(arn, recovery_days=30) == first
    assert TargetSecrets().schedule_deletion(arn + "-missing", recovery_days=30) is None


@pytest.mark.clock
def test_a_deleted_date_is_read_either_way_aws_documents_it() -> None:
    """The day the secret goes (a date ahead: as it is), or the moment it was marked (a date past: plus
    the recovery window) — the same answer for the same deletion."""
    marked = clock.now().replace(microsecond=0) - timedelta(hours=1)
    goes = marked + timedelta(days=30)
    assert secrets._scheduled(marked, 30) == secrets._scheduled(goes, 30) == secrets._iso(goes)


@pytest.mark.parametrize("then", [sdk_retry_meets_the_write, sdk_retries_run_out])
def test_a_put_whose_answer_was_lost_is_not_a_conflict(
    monkeypatch: pytest.MonkeyPatch, then: Callable[[Any, dict[str, Any]], Any]
) -> None:
    state = new_session(AgentInput(message="x"), session_id="ses_lost_answer", user_id="u1", target_id="t1")
    store().save(state)
    loaded = store().load("ses_lost_answer")
    assert loaded is not None
    table = boto3.resource("dynamodb", region_name=REGION).Table(TABLES["sessions"])
    monkeypatch.setattr(
        DynamoSessionStore, "_table", property(lambda self: LostAnswer(table, "put_item", then))
    )
    loaded.iterations = 5
    store().save(loaded)
    monkeypatch.undo()
    assert loaded.version == 2
    again = store().load("ses_lost_answer")
    assert again is not None
    assert (again.iterations, again.version) == (5, 2)
    stale = state  # version 1: a real rival still loses
    with pytest.raises(StaleSessionError):
        store().save(stale)


def test_a_stale_writer_fails_instead_of_overwriting() -> None:
    state = new_session(AgentInput(message="x"), session_id="ses_stale", user_id="u1", target_id="t1")
    store().save(state)
    first, second = store().load("ses_stale"), store().load("ses_stale")
    assert first is not None
    assert second is not None
    first.iterations = 1
    store().save(first)
    second.iterations = 2
    with pytest.raises(StaleSessionError):
        store().save(second)
    loaded = store().load("ses_stale")
    assert loaded is not None
    assert loaded.iterations == 1


def test_a_stale_writers_values_never_show() -> None:
    state = new_session(AgentInput(message="x"), session_id="ses_rival", user_id="u1", target_id="t1")
    store().save(state)
    winner, loser = store().load("ses_rival"), store().load("ses_rival")
    assert winner is not None
    assert loser is not None
    winner.messages.append({"role": "assistant", "content": "勝った方"})
    store().save(winner)
    loser.messages.append({"role": "assistant", "content": "負けた方"})  # the same message slot
    lifecycle.finish(loser, SessionStatus.COMPLETED, response="負けた方の結果")
    with pytest.raises(StaleSessionError):
        store().save(loser)
    loaded = store().load("ses_rival")
    assert loaded is not None
    assert loaded.messages[-1]["content"] == "勝った方"
    assert loaded.result is None


class LambdaDied(BaseException):
    pass


def test_a_save_cut_short_leaves_the_previous_state(monkeypatch: pytest.MonkeyPatch) -> None:
    state = new_session(AgentInput(message="x"), session_id="ses_cut", user_id="u1", target_id="t1")
    store().save(state)
    big = os.urandom(400_000).hex()  # several parts

    def die(self: DynamoSessionStore, state: object, refs: object, write_id: str) -> None:
        raise LambdaDied  # every blob is written, the STATE item that would refer to them is not

    monkeypatch.setattr(DynamoSessionStore, "_put_state", die)
    state.messages.append({"role": "assistant", "content": big})
    state.commands.append(record("toolu_cut", big))
    with pytest.raises(LambdaDied):
        store().save(state)
    monkeypatch.undo()
    loaded = store().load("ses_cut")
    assert loaded is not None
    assert (len(loaded.messages), loaded.commands, loaded.version) == (1, [], 1)


def test_results_of_earlier_runs_do_not_come_back() -> None:
    s = store()
    state = new_session(AgentInput(message="x"), session_id="ses_results", user_id="u1", target_id="t1")
    big = os.urandom(300_000).hex()  # packs into two parts
    lifecycle.finish(state, SessionStatus.COMPLETED, response=big)
    s.save(state)
    continue_session(state, AgentInput(message="次"))
    s.save(state)
    follow_up = store().load("ses_results")
    assert follow_up is not None
    assert follow_up.result is None
    lifecycle.finish(follow_up, SessionStatus.COMPLETED, response="短い結果")
    store().save(follow_up)
    loaded = store().load("ses_results")
    assert loaded is not None
    assert loaded.result is not None
    assert loaded.result.response == "短い結果"


def test_a_long_conversation_history_is_stored_in_parts() -> None:
    history = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": os.urandom(15_000).hex()}
        for i in range(30)
    ]  # ~900 KB that does not compress, inside the API's 1 MB body
    state = new_session(
        AgentInput(message="続き", conversation_history=history),
        session_id="ses_history",
        user_id="u1",
        target_id="t1",
    )
    store().save(state)
    loaded = store().load("ses_history")
    assert loaded is not None
    assert loaded.input.conversation_history == state.input.conversation_history
    assert loaded.messages == state.messages


def test_an_approval_of_long_commands_is_stored() -> None:
    commands = [f"option update blogdescription '{os.urandom(70_000).hex()}'" for _ in range(3)]
    deps = make_deps(ScriptedModel([tool_reply(*commands)]), store=store())
    state = new_session(AgentInput(message="x"), session_id="ses_long_approval", user_id="u1", target_id="t1")
    assert AgentTurn(deps).advance(state) is Route.AWAITING_APPROVAL
    loaded = store().load("ses_long_approval")
    assert loaded is not None
    assert loaded.pending_approval is not None
    assert len(loaded.pending_approval.items) == 3


def test_a_part_gone_missing_is_a_clear_error() -> None:
    state = new_session(AgentInput(message="x"), session_id="ses_gone", user_id="u1", target_id="t1")
    store().save(state)
    table = boto3.resource("dynamodb", region_name=REGION).Table(TABLES["sessions"])
    message_blob = next(i["sk"] for i in items("SESSION#ses_gone") if i["sk"].startswith("BLOB#msg:"))
    table.delete_item(Key={"pk": "SESSION#ses_gone", "sk": message_blob})
    with pytest.raises(SessionDataMissingError) as missing:
        store().load("ses_gone")
    assert missing.value.details["part"] == "msg:000000"
    assert "新しいセッション" in missing.value.message_ja


def test_creating_an_existing_session_fails() -> None:
    state = new_session(AgentInput(message="x"), session_id="ses_dupe", user_id="u1", target_id="t1")
    store().save(state)
    again = new_session(AgentInput(message="y"), session_id="ses_dupe", user_id="u2", target_id="t1")
    with pytest.raises(StaleSessionError):
        store().save(again)


def test_missing_session_loads_as_none() -> None:
    assert store().load("ses_missing") is None


@pytest.mark.clock
def test_audit_records_are_appended_with_retention_by_kind() -> None:
    log = DynamoAuditLog(TABLES["audit"])
    base = {"user_id": "u1", "session_id": "s1", "target_id": "t1"}
    log.append(AuditEvent(type=AuditEventType.COMMAND_EXECUTED, command="post list", category="read", **base))
    log.append(
        AuditEvent(
            type=AuditEventType.COMMAND_EXECUTED, command="post delete 1", category="destructive", **base
        )
    )
    log.append(AuditEvent(type=AuditEventType.APPROVAL_APPROVED, approver="u1", **base))
    records = log.for_session("s1")
    assert len(records) == 3
    days = {
        r["command"] if "command" in r else r["type"]: (int(r["expires_at"]) - time.time()) / 86_400
        for r in records
    }
    assert 89 < days["post list"] <= 90
    assert 364 < days["post delete 1"] <= 365
    assert 364 < days["approval_approved"] <= 365


def test_registry_refuses_duplicates() -> None:
    registry = TargetRegistry(TABLES["registry"])
    target = Target(
        target_id="site-a",
        host="203.0.113.5",
        secret_arn="arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:wp-agent/targets/site-a",
        owners=["u1"],
    )
    assert registry.put(target)
    assert not registry.put(target)
    loaded = registry.get("site-a")
    assert loaded == target
    assert [t.target_id for t in registry.list()] == ["site-a"]
