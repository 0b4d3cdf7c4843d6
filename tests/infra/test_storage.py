"""DynamoDB tables: keys, TTL, PITR, encryption, billing, retention, the audit GSI."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from infra import names
from tests.infra.template_queries import logical_id_of_table, resources

PK_SK = [
    {"AttributeName": names.PARTITION_KEY, "KeyType": "HASH"},
    {"AttributeName": names.SORT_KEY, "KeyType": "RANGE"},
]
EXPECTED_KEYS = {
    names.Table.SESSIONS: PK_SK,
    names.Table.AUDIT: PK_SK,
    names.Table.REGISTRY: PK_SK,
    names.Table.RATE_LIMITS: PK_SK,
    names.Table.IDEMPOTENCY: [{"AttributeName": "id", "KeyType": "HASH"}],
}
EXPECTED_TTL = {
    names.Table.SESSIONS: "expires_at",
    names.Table.AUDIT: "expires_at",
    names.Table.REGISTRY: None,
    names.Table.RATE_LIMITS: "expires_at",
    names.Table.IDEMPOTENCY: "expiration",
}
KEPT = {names.Table.SESSIONS, names.Table.AUDIT, names.Table.REGISTRY}


def test_there_are_exactly_the_five_contract_tables(template: dict[str, Any]) -> None:
    table_ids = set(resources(template, "AWS::DynamoDB::Table"))
    assert table_ids == {logical_id_of_table(template, table) for table in names.Table}


@pytest.mark.parametrize("table", list(names.Table))
def test_table_keys_billing_encryption_and_recovery(template: dict[str, Any], table: names.Table) -> None:
    properties = template["Resources"][logical_id_of_table(template, table)]["Properties"]
    assert properties["KeySchema"] == EXPECTED_KEYS[table]
    assert {a["AttributeType"] for a in properties["AttributeDefinitions"]} == {"S"}
    assert properties["BillingMode"] == "PAY_PER_REQUEST"
    assert properties["SSESpecification"] == {"SSEEnabled": True}
    assert properties["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}


@pytest.mark.parametrize("table", list(names.Table))
def test_table_ttl(template: dict[str, Any], table: names.Table) -> None:
    properties = template["Resources"][logical_id_of_table(template, table)]["Properties"]
    expected = EXPECTED_TTL[table]
    if expected is None:
        assert "TimeToLiveSpecification" not in properties
    else:
        assert properties["TimeToLiveSpecification"] == {"AttributeName": expected, "Enabled": True}


@pytest.mark.parametrize("table", list(names.Table))
def test_durable_tables_survive_deletion(template: dict[str, Any], table: names.Table) -> None:
    resource = template["Resources"][logical_id_of_table(template, table)]
    if table in KEPT:
        assert resource["Properties"]["DeletionProtectionEnabled"] is True
        assert resource["DeletionPolicy"] == "Retain"
        assert resource["UpdateReplacePolicy"] == "Retain"
    else:
        assert resource["DeletionPolicy"] == "Delete"


def test_the_history_indexes(template: dict[str, Any]) -> None:
    """Every history read is a Query on one of these (wp_agent/adapters/aws/table_layout.py)."""
    audit = template["Resources"][logical_id_of_table(template, names.Table.AUDIT)]["Properties"]
    assert sorted(audit["GlobalSecondaryIndexes"], key=lambda i: i["IndexName"]) == [
        {
            "IndexName": "by_target",
            "KeySchema": [
                {"AttributeName": "target_id", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        },
        {
            "IndexName": "by_user",
            "KeySchema": [
                {"AttributeName": "user_id", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        },
    ]
    sessions = template["Resources"][logical_id_of_table(template, names.Table.SESSIONS)]["Properties"]
    indexes = {index["IndexName"]: index for index in sessions["GlobalSecondaryIndexes"]}
    assert set(indexes) == {"sessions_by_user", "sessions_by_user_target"}
    for name, partition in (
        ("sessions_by_user", "list_user"),
        ("sessions_by_user_target", "list_user_target"),
    ):
        assert indexes[name]["KeySchema"] == [
            {"AttributeName": partition, "KeyType": "HASH"},
            {"AttributeName": "list_sk", "KeyType": "RANGE"},
        ]
        assert indexes[name]["Projection"]["ProjectionType"] == "INCLUDE"
        assert sorted(indexes[name]["Projection"]["NonKeyAttributes"]) == [
            "run_id",
            "started_at",
            "status",
            "target_id",
            "title",
            "updated_at",
        ]


def test_only_the_audit_and_sessions_tables_have_indexes(assertions: Template) -> None:
    assertions.resource_properties_count_is(
        "AWS::DynamoDB::Table", {"GlobalSecondaryIndexes": Match.any_value()}, 2
    )
