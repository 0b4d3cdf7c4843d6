"""DynamoDB adapters on moto: session layout and conditions, append-only audit, registry."""

from __future__ import annotations

import os
import time
from typing import Any

import boto3
import pytest
from boto3.dynamodb.conditions import Key

from tests.fakes.aws import REGION, TABLES
from wp_agent.adapters.aws.audit_log import DynamoAuditLog
from wp_agent.adapters.aws.registry import TargetRegistry
from wp_agent.adapters.aws.session_store import PART_BYTES, DynamoSessionStore, StaleSessionError
from wp_agent.agent.ports import AuditEvent, AuditEventType
from wp_agent.agent.session_state import CommandRecord, CommandStatus
from wp_agent.agent.turn import new_session
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.target import Target
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
    assert set(after) - set(before) == {"MSG#000001#000"}


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


def test_creating_an_existing_session_fails() -> None:
    state = new_session(AgentInput(message="x"), session_id="ses_dupe", user_id="u1", target_id="t1")
    store().save(state)
    again = new_session(AgentInput(message="y"), session_id="ses_dupe", user_id="u2", target_id="t1")
    with pytest.raises(StaleSessionError):
        store().save(again)


def test_missing_session_loads_as_none() -> None:
    assert store().load("ses_missing") is None


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
